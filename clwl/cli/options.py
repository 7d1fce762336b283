"""The options several ``clwl`` commands share, each defined once with its environment variable (the shape of
dbt's params.py): a command adds ``LAKE_LOCATION.add(parser)`` instead of spelling ``--lake`` again, so the flag,
its type, its default and the variable that stands in for it cannot drift apart between commands. With them, what
the commands do with some options alike: what reading ``--mqsc`` captures found (:func:`report_captures`), and
their readable tables (:func:`aligned`); the lake a command reads, a folder or ``s3://``, is found in one place,
:meth:`clwl.cli.task.LakeTask.resolve_lake`. Whatever came from an input or the user is printed through
clwl.terminal (:func:`clwl.terminal.say`, :func:`clwl.terminal.printable`): one rule for every command."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Collection, Iterable, Sequence

from clwl.cli.argtypes import capture_moment, run_date
from clwl.terminal import printable, say


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


def lake_location(text: str):
    """--lake's value, for every command that reads or writes a lake: a local folder (a Path) or
    ``s3://bucket/prefix`` (a clwl.lake.storage.LakeLocation); a typo of a URI, an unsupported scheme, a bad bucket
    name, credentials in the URI or an empty name is refused in one line (taken as a folder name, ``s3:/b``
    would make a local folder called ``s3:``, and ``""`` would be the working folder)."""
    from clwl.lake.storage import StorageError, lake_root

    try:
        return lake_root(text)
    except StorageError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


class _LakeAction(argparse.Action):
    """--lake: a value that names no lake is one line and exit 2 (docs/cli-contract.md), as when $CLWL_LAKE
    names none, not argparse's usage block before the error (a type error would print it)."""

    def __call__(self, parser, namespace, values, option_string=None):
        from clwl.cli.exit_codes import EXIT_INPUT

        try:
            setattr(namespace, self.dest, lake_location(values))
        except argparse.ArgumentTypeError as e:
            parser.exit(EXIT_INPUT, f"{parser.prog}: {e}\n")


#: --lake of every command that reads or writes a lake: a folder, or a lake on an object store
#: (docs/object-storage.md).
LAKE_LOCATION = Option("--lake", "the lake: a folder, or s3://bucket/prefix on an object store (default: $CLWL_LAKE, "
                       "else ./lake)", "CLWL_LAKE", {"action": _LakeAction, "default": None, "metavar": "LAKE"})
LANDING = Option("--landing", "landing folder (default: $CLWL_LANDING, else the bundled samples/landing)",
                 "CLWL_LANDING", {"type": Path, "default": None, "metavar": "DIR"})
MASTER = Option("--master", "Spark master (default: $CLWL_SPARK_MASTER, else local[2])", "CLWL_SPARK_MASTER",
                {"metavar": "URL"})
#: Run dates, repeatable, into ``args.dates`` (None: every date folder of the landing folder).
DATES = Option("--date", "run date (repeatable; default: every date folder of the landing folder)", None,
               {"dest": "dates", "action": "append", "type": run_date, "metavar": "YYYY-MM-DD"})
#: A backfill: the landing folder's run dates from ``--from`` to ``--to`` (both included), into ``args.date_from``
#: and ``args.date_to``; either end may be left open (the first or the last date folder).
DATE_FROM = Option("--from", "first run date of a backfill (with --to: every date folder from one to the other, in "
                   "order; default: the first date folder)", None,
                   {"dest": "date_from", "type": run_date, "metavar": "YYYY-MM-DD"})
DATE_TO = Option("--to", "last run date of a backfill (default with --from: the last date folder)", None,
                 {"dest": "date_to", "type": run_date, "metavar": "YYYY-MM-DD"})
#: One run date, into ``args.date``.
DATE = Option("--date", "the run date", None, {"type": run_date, "metavar": "YYYY-MM-DD"})
VERBOSE = Option("--verbose", "show Spark's own output on the terminal: the JVM's banner and log lines, and the "
                 "resolution of the Delta jars (by default they go to a log file)", "CLWL_SPARK_VERBOSE",
                 {"action": "store_true"})
#: --at for commands reading --mqsc captures (a landing queue manager folder's latest captures at a moment).
AT = Option("--at", "in a landing queue manager folder, use the latest captures at or before TIME: HH:MM[:SS] UTC on "
            "the folder's date, or YYYY-MM-DDTHH:MM[:SS] (default: the latest)", None,
            {"type": capture_moment, "metavar": "TIME"})
#: Where the latest published day's Prometheus gauges go (clwl run, clwl metrics): a file node_exporter's textfile
#: collector reads, written atomically; and the Pushgateway they are pushed to (clwl/analyses/metrics.py).
METRICS_FILE = Option("--metrics-file", "after the run, write the latest published day's Prometheus gauges to PATH "
                      "atomically (a temporary file beside it, then a rename), for node_exporter's textfile collector "
                      "(name it *.prom); docs/metrics.md", None, {"metavar": "PATH"})
PUSHGATEWAY = Option("--pushgateway", "after the run, push the same gauges to the Prometheus Pushgateway at URL as the "
                     "job clwl (default: $CLWL_PUSHGATEWAY)", "CLWL_PUSHGATEWAY", {"metavar": "URL"})
TRACE_TZ = Option("--trace-tz", "time zone in which activity traces (amqsact output) print their local operation "
                  "times, e.g. Europe/London (default: $CLWL_TRACE_TZ, else UTC; times printed as High Res Time are "
                  "UTC anyway)", "CLWL_TRACE_TZ", {"metavar": "ZONE"})


def no_run_dates(command: str, landing: Path) -> str:
    """The one line for a landing folder without run date folders, with what was probably meant: a run date
    folder or a queue manager folder given in its place (the folder above), or an empty folder."""
    from clwl.landing.layout import is_run_date

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


def _visible_dirs(folder: Path) -> list[Path]:
    return sorted(f for f in folder.iterdir() if f.is_dir() and not f.name.startswith("."))


def _suggest_qmgr(day_folder: Path, queue: str | None) -> tuple[str, str] | None:
    """(a queue manager of the landing date folder, why it is the one): the one whose applications put the most
    messages on ``queue`` that day, by its put files; else one hosting ``queue`` in its latest configuration
    capture; else the one that put the most messages on any queue. None when none of them is found."""
    from clwl.parse.common import InputError

    try:
        from clwl.analyses.check import put_traffic

        rows = [(s, q) for s, q, _, from_channel in put_traffic(day_folder.parent, day_folder.name) if not from_channel]
    except Exception:  # a landing the ingest's discovery refuses: no suggestion from put files
        rows = []
    names = {f.name for f in _visible_dirs(day_folder)}

    def busiest(on: str | None) -> tuple[str, str] | None:
        counts: dict[str, int] = {}
        for sender, q in rows:
            if sender in names and (on is None or q == on):
                counts[sender] = counts.get(sender, 0) + 1
        if not counts:
            return None
        qm = min(counts, key=lambda k: (-counts[k], k))
        return qm, f"{qm}'s applications put {counts[qm]:,} message(s){f' on {on}' if on else ''} that day"

    found = busiest(queue) if queue else None
    if found is None and queue:
        from clwl.engine.view import build_view, parse_capture_file, select_landing_captures

        for qm in sorted(names):
            try:
                choice = select_landing_captures(day_folder / qm)
                records = [r for c in choice.captures if c.kind == "config"
                           for r in parse_capture_file(c.path).records]
            except InputError:
                continue
            if any(i.local for i in build_view(records, qm)[0].instances_of(queue)):
                return qm, f"{qm} hosts {queue}"
    return found or busiest(None)


def landing_folder_refusal(command: str, given: str, queue: str | None = None, local_qmgr: str | None = None,
                           local_option: bool = True) -> str | None:
    """The one line (without ``clwl <command>: ``) for a landing date folder, or a whole landing folder, given as
    ``--mqsc`` to a command that reads one queue manager's captures: in the command's own words, with a queue
    manager to give that sends (on ``queue``) or hosts ``queue``. None when ``given`` is no such folder (or a date
    folder holding ``local_qmgr``'s folder, which the command takes)."""
    from clwl.landing.layout import is_run_date

    p = Path(given)
    if not p.is_dir():
        return None
    if is_run_date(p.name):
        day, subs = p, _visible_dirs(p)
        if not subs or (local_qmgr and local_qmgr in {f.name for f in subs}):
            return None
        what = f"a landing date folder, one folder per queue manager ({', '.join(f.name for f in subs)})" + (
            f": it holds no folder {local_qmgr}" if local_qmgr else "")
    else:
        dates = [f for f in _visible_dirs(p) if is_run_date(f.name)]
        if not dates or any(f.is_file() for f in p.iterdir() if not f.name.startswith(".")):
            return None
        day = dates[-1]
        what = f"a landing folder, one folder per run date ({', '.join(f.name for f in dates)})"
    suggestion = _suggest_qmgr(day, queue)
    if suggestion is None:
        subs = _visible_dirs(day)
        example = f"e.g. --mqsc {day / subs[0].name}" if subs else "<landing>/<YYYY-MM-DD>/<QM>"
    else:
        qm, why = suggestion
        example = f"e.g. --mqsc {day / qm} ({why})"
    local = " or name it with --local-qmgr" if local_option and day == p else ""
    return (f"{given}: {what}: {command} reads one queue manager's captures (the sending queue manager's): give "
            f"its folder, {example}{local}")


def report_captures(command: str, caps, view_problems: Iterable = ()) -> None:
    """What reading ``--mqsc`` captures (clwl.engine.view.read_captures) found, on stderr in every command's words: the
    landing captures chosen, the files not used, then the records not used (the captures', then ``view_problems``,
    clwl.engine.view.build_view's)."""
    for choice in caps.landing:
        say(f"clwl {command}: {choice.describe()}", sys.stderr)
    for path, reason in caps.skipped:
        say(f"clwl {command}: warning: {path}: {reason} (file not used)", sys.stderr)
    for pr in [*caps.problems, *view_problems]:
        say(f"clwl {command}: warning: {pr.source}:{pr.line}: {pr.reason} (record not used)", sys.stderr)


def aligned(rows: Sequence[Sequence[str]], right: Collection[int] = (), indent: str = "") -> list[str]:
    """A readable table's lines (no newline): ``rows`` (the header first) in columns as wide as their widest
    cell, two spaces apart, the columns in ``right`` right-aligned (numbers), trailing blanks dropped. Cells are
    escaped (clwl.terminal.printable) before the widths are taken: a name from a capture or a lake cannot drive
    the terminal, nor break the columns."""
    rows = [[printable(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))] if rows else []
    return [indent + "  ".join(c.rjust(widths[i]) if i in right else c.ljust(widths[i])
                               for i, c in enumerate(r)).rstrip() for r in rows]
