"""The `tracerl` command."""
