"""``clwl lint``: being built (issue 28)."""


def add_lint_command(subparsers):
    return subparsers.add_parser("lint", help="(being built)")
