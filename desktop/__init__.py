"""The Antinomy application: vault, flows, service, command line and Qt GUI."""
