"""The exit codes of every ``clwl`` command (docs/cli-contract.md), defined once."""

EXIT_OK = 0  # done: routed, ingested, published, answered, generated
EXIT_WOULD_QUARANTINE = 1  # clwl check: an ingest would quarantine something (after the whole report)
EXIT_INPUT = 2  # arguments or inputs cannot be used, or another writer holds the lake (argparse also exits 2)
EXIT_UNROUTABLE = 3  # clwl route: some message could not be routed (after every line is printed)
EXIT_BLOCKED = 4  # clwl run: a quality gate blocked publishing; the last good published tables stay
