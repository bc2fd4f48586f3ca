"""The loopback HTTP endpoint and the agent-hook client (no Qt)."""
