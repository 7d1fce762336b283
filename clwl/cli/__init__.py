"""The ``clwl`` command line: entry points only, on top of the engine (clwl) and the pipeline (spark).

One module per command family registers its subcommand (``add_*_command``) and handles it (``cmd_*``); the exit
codes are in ``clwl.cli.exit_codes``. ``clwl route`` follows docs/cli-contract.md to the letter. The command
modules are imported when the parser is built, not on ``import clwl.cli``, so ``clwl.cli.generate`` loads
nothing of the routing engine; Spark is imported inside the pipeline handlers only.
"""

from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from clwl.cli.exit_codes import EXIT_OK


def package_version() -> str:
    """The installed distribution's version (what pip installed), else the source's ``clwl.__version__``."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("clwl-analytics")
    except PackageNotFoundError:  # run from a checkout that was never installed
        from clwl import __version__

        return __version__


class _Parser(argparse.ArgumentParser):
    """argparse, with its error line escaped: it quotes most bad values with repr, but not all of them (an
    unrecognized argument is printed as typed)."""

    def error(self, message: str):
        from clwl.terminal import printable

        super().error(printable(message))


def build_parser() -> argparse.ArgumentParser:
    from clwl.cli.advise import add_advise_command
    from clwl.cli.blast import add_blast_command
    from clwl.cli.check import add_check_command
    from clwl.cli.depth import add_depth_command
    from clwl.cli.drift import add_drift_command
    from clwl.cli.explain import add_explain_command
    from clwl.cli.generate import add_generate_command
    from clwl.cli.lint import add_lint_command
    from clwl.cli.metrics import add_metrics_command
    from clwl.cli.pipeline import add_ingest_command, add_run_command
    from clwl.cli.query import add_published_command, add_query_command
    from clwl.cli.report import add_report_command
    from clwl.cli.route import add_route_command
    from clwl.cli.trend import add_trend_command

    p = _Parser(prog="clwl", description="Replay IBM MQ cluster workload management routing.")
    p.add_argument("--version", action="version", version=f"clwl {package_version()}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands = (  # the order of `clwl --help`
        add_route_command,
        add_explain_command,
        add_run_command,
        add_ingest_command,
        add_query_command,
        add_published_command,
        add_report_command,
        add_check_command,
        add_lint_command,
        add_drift_command,
        add_advise_command,
        add_blast_command,
        add_metrics_command,
        add_trend_command,
        add_depth_command,
        add_generate_command,
    )
    for add_command in commands:
        add_command(sub)
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from clwl.cli.exit_codes import EXIT_INPUT
    from clwl.lake.lake_files import LakeFileError

    try:
        return args.func(args)
    except BrokenPipeError:  # e.g. piped into head
        return EXIT_OK
    except LakeFileError as e:  # the lake's location or metadata cannot be used: one line, never a traceback
        from clwl.terminal import say

        say(f"clwl {args.command}: {e}", sys.stderr)
        return EXIT_INPUT
