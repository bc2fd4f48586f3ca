"""The command line: argument parsing that calls flows (no Qt)."""
