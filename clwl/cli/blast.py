"""``clwl blast``: being built (issue 28)."""


def add_blast_command(subparsers):
    return subparsers.add_parser("blast", help="(being built)")
