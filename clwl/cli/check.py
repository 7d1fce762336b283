"""``clwl check LANDING [--date D] [--chstatus-interval MINUTES] [--json]``: the landing doctor, no Spark session.

The work is clwl/analyses/check.py (the ingest's own discovery and parse task body, run in this process); this
module prints it: per run date and queue manager each file with its format, records and what would be
quarantined, then the gaps that weaken the replay, then one summary line (docs/cli-contract.md, ``clwl check``).
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import timedelta
from pathlib import Path

from clwl.cli.argtypes import whole_number
from clwl.cli.exit_codes import EXIT_INPUT, EXIT_OK, EXIT_WOULD_QUARANTINE
from clwl.cli.options import DATES, no_run_dates
from clwl.terminal import printable

#: Problem lines printed under a file in the readable report (all are in --json, up to the check's limit).
SHOWN_PROBLEMS = 3


def add_check_command(subparsers) -> argparse.ArgumentParser:
    c = subparsers.add_parser(
        "check", help="check a landing folder without Spark: what ingest would read and quarantine, and gaps",
        description="What `clwl ingest` would make of a landing folder, without starting Spark: per run date and "
                    "queue manager, each file with the format it is read in, its records and what would be "
                    "quarantined and why; then the gaps that weaken the replay (a sender with puts but no "
                    "configuration capture before its first put, channel status captured less often than "
                    "--chstatus-interval, receivers without queue accounting, a day with no put records); then "
                    "one summary line. Exit 0 when nothing would be quarantined, 1 when something would be "
                    "(gaps are warnings), 2 when the landing folder cannot be used.",
        epilog="example: clwl check samples/landing --chstatus-interval 120")
    c.add_argument("landing", type=Path, metavar="LANDING", help="the landing folder (<LANDING>/<YYYY-MM-DD>/<QM>/)")
    DATES.add(c, help="run date to check (repeatable; default: every date folder). Configuration captured on "
                      "earlier dates still counts for the gaps")
    c.add_argument("--chstatus-interval", type=whole_number(1), default=60, metavar="MINUTES",
                   help="longest acceptable stretch between two channel status captures (default 60)")
    c.add_argument("--json", action="store_true", help="one JSON object instead of the report")
    c.set_defaults(func=cmd_check)
    return c


def cmd_check(args: argparse.Namespace) -> int:
    from clwl.analyses.check import check_landing
    from clwl.landing.layout import run_date_folders
    from spark.ingest import LandingError

    # A folder with no run date folder is never a clean bill of health: most often the wrong folder was given.
    if Path(args.landing).is_dir() and not args.dates and not run_date_folders(args.landing):
        print(printable(no_run_dates("check", args.landing)), file=sys.stderr)
        return EXIT_INPUT
    try:
        result = check_landing(args.landing, args.dates, timedelta(minutes=args.chstatus_interval))
    except (LandingError, ValueError) as e:  # ValueError: an unknown $CLWL_TRACE_TZ
        print(printable(f"clwl check: {e}"), file=sys.stderr)
        return EXIT_INPUT
    if args.json:
        sys.stdout.write(json.dumps(result.to_json()) + "\n")
    else:
        write_report(result, sys.stdout)
    return EXIT_OK if result.clean else EXIT_WOULD_QUARANTINE


def _file_line(f, name: str, width: int) -> str:
    if f.status == "skipped":
        return f"{name:<{width}}  skipped, not read"
    counts = f"{f.records_read} read, {f.records_accepted} accepted, {f.records_quarantined} quarantined"
    if f.held_back:
        counts += f" ({f.held_back} held back)"
    status = "  REJECTED whole" if f.status == "rejected" else ""
    return f"{name:<{width}}  {f.format:<8}  {counts}{status}"


def write_report(result, out) -> None:
    """The readable report: one ``line`` at a time, each with its control characters escaped (file and folder
    names, and the reasons that quote them or the files' content, must not drive the terminal)."""

    def line(text: str = "") -> None:
        out.write(printable(text) + "\n")

    line(f"clwl check {result.landing}: {len(result.run_dates)} run date(s), {len(result.files)} files")
    for note in result.notes:
        line(f"  {note}")
    by_date: dict[str, dict[str, list]] = {}
    for f in result.files:
        by_date.setdefault(f.run_date, {}).setdefault(f.observing_qmgr or "", []).append(f)
    for d in sorted(by_date):
        line()
        line(d)
        for qmgr in sorted(by_date[d]):
            line(f"  {qmgr or '(not in a queue manager folder)'}")
            names = [printable(f.name) for f in by_date[d][qmgr]]  # escaped before the width is taken
            width = max(map(len, names))
            for f, name in zip(by_date[d][qmgr], names):
                line(f"    {_file_line(f, name, width)}")
                for p in f.problems[:SHOWN_PROBLEMS]:
                    where = f"line {p.position}: " if p.position else ""
                    line(f"      {where}{p.reason}")
                more = f.records_quarantined - min(len(f.problems), SHOWN_PROBLEMS)
                if more > 0:
                    line(f"      ... and {more} more quarantined (--json lists the first {len(f.problems)})")
                for note in f.notes:
                    line(f"      note: {note}")
    line()
    line("gaps" if result.gaps else "gaps: none")
    for g in result.gaps:
        line(f"  {g.run_date} {g.kind}: {g.detail}")
    line()
    line(f"summary: {result.summary_line()}")
