"""`python -m tracerl.cli` is `tracerl`."""

from .main import main

main()
