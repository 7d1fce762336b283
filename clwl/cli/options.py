"""The options several ``clwl`` commands share, each defined once with its environment variable (the shape of
dbt's params.py): a command adds ``LAKE.add(parser)`` instead of spelling ``--lake`` again, so the flag, its
type, its default and the variable that stands in for it cannot drift apart between commands."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clwl.cli.argtypes import run_date


@dataclass(frozen=True)
class Option:
    flag: str
    help: str
    env: str | None = None  # the environment variable used when the option is not given
    kwargs: dict[str, Any] = field(default_factory=dict)

    def add(self, parser: argparse.ArgumentParser, help: str | None = None, **changes: Any) -> argparse.Action:
        """Add the option to ``parser``; ``help`` replaces what a command says of it, ``changes`` its settings
        (``dest``)."""
        return parser.add_argument(self.flag, help=help or self.help, **{**self.kwargs, **changes})


LAKE = Option("--lake", "the lake root (default: $CLWL_LAKE, else ./lake)", "CLWL_LAKE",
              {"type": Path, "default": None, "metavar": "DIR"})
LANDING = Option("--landing", "landing folder (default: $CLWL_LANDING, else the bundled samples/landing)",
                 "CLWL_LANDING", {"type": Path, "default": None, "metavar": "DIR"})
MASTER = Option("--master", "Spark master (default: $CLWL_SPARK_MASTER, else local[2])", "CLWL_SPARK_MASTER",
                {"metavar": "URL"})
#: Run dates, repeatable, into ``args.dates`` (None: every date folder of the landing folder).
DATES = Option("--date", "run date (repeatable; default: every date folder of the landing folder)", None,
               {"dest": "dates", "action": "append", "type": run_date, "metavar": "YYYY-MM-DD"})
#: One run date, into ``args.date``.
DATE = Option("--date", "the run date", None, {"type": run_date, "metavar": "YYYY-MM-DD"})
VERBOSE = Option("--verbose", "show Spark's own output on the terminal: the JVM's banner and log lines, and the "
                 "resolution of the Delta jars (by default they go to a log file)", "CLWL_SPARK_VERBOSE",
                 {"action": "store_true"})
TRACE_TZ = Option("--trace-tz", "time zone in which activity traces (amqsact output) print their local operation "
                  "times, e.g. Europe/London (default: $CLWL_TRACE_TZ, else UTC; times printed as High Res Time are "
                  "UTC anyway)", "CLWL_TRACE_TZ", {"metavar": "ZONE"})


def no_run_dates(command: str, landing: Path) -> str:
    """The one line for a landing folder without run date folders, with what was probably meant: a run date
    folder or a queue manager folder given in its place (the folder above), or an empty folder."""
    from clwl.landing import is_run_date

    landing = Path(landing)
    hint = ""
    if is_run_date(landing.name):
        hint = f"; {landing.name} is a run date folder: did you mean {landing.parent}?"
    elif is_run_date(landing.parent.name):
        hint = (f"; {landing.name} is a queue manager folder of {landing.parent.name}: did you mean "
                f"{landing.parent.parent}?")
    elif landing.is_dir() and not any(landing.iterdir()):
        hint = "; the folder is empty (the bundled sample estate is samples/landing)"
    return f"clwl {command}: {landing}: no run date folders (expected <landing>/<YYYY-MM-DD>/<QM>/<file>){hint}"
