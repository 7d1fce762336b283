"""``clwl advise``: being built (issue 28)."""


def add_advise_command(subparsers):
    return subparsers.add_parser("advise", help="(being built)")
