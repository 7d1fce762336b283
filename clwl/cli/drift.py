"""``clwl drift``: being built (issue 28)."""


def add_drift_command(subparsers):
    return subparsers.add_parser("drift", help="(being built)")
