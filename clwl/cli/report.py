"""``clwl report [--lake LAKE] [--date D] (--out DIR | --open) [--json]``: a day's published report, fetched.

A run writes each day's report under ``<lake>/reports/<date>/`` (report.html, summary.md, the charts). On a local
lake it can be opened where it is; on an object store (``s3://``) nothing the project installs opens it. This
command copies everything under that folder into a local folder (clwl/lake/reports.py: the same for both kinds of
lake) and says where it put it; ``--open`` then opens report.html in the default browser. No JVM.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from clwl.cli.exit_codes import EXIT_INPUT, EXIT_OK
from clwl.cli.options import DATE, LAKE_LOCATION, lake_location_to_read
from clwl.terminal import say

#: What reading the lake's report folder needs: listings and reads through clwl.lake.storage (obstore for s3://).
REPORT_READERS = ("obstore",)


def add_report_command(subparsers) -> argparse.ArgumentParser:
    r = subparsers.add_parser(
        "report", help="fetch a day's published report (with its pictures) into a local folder, or open it (no JVM)",
        description="Copy everything under <lake>/reports/<date>/ (report.html, summary.md, the charts) into a "
                    "local folder and print where it is; --open opens its report.html in the default browser. "
                    "Works on a local lake and on an object store (s3://) alike. No JVM.",
        epilog="example: clwl report --lake s3://bucket/lake --date 2026-11-20 --out ./report-2026-11-20 --open")
    LAKE_LOCATION.add(r)
    DATE.add(r, help="the run date whose report to fetch (default: the latest published date)")
    r.add_argument("--out", type=Path, metavar="DIR",
                   help="the local folder to put the report in (created; files of the same name are replaced). "
                        "Without it, --open puts it in a new temporary folder")
    r.add_argument("--open", action="store_true", help="open the fetched report.html in the default web browser")
    r.add_argument("--json", action="store_true", help="one JSON object: date, run ids, where each file went")
    r.set_defaults(func=cmd_report)
    return r


def _fail(line: str) -> int:
    say(f"clwl report: {line}", sys.stderr)
    return EXIT_INPUT


def cmd_report(args: argparse.Namespace) -> int:
    if args.out is None and not args.open:
        return _fail("give --out DIR (the folder to put the report in), --open, or both")
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        return _fail(f"--out {args.out}: not a folder")
    lake_root = lake_location_to_read("report", args.lake, REPORT_READERS)
    if lake_root is None:
        return EXIT_INPUT
    from clwl.lake.door import Lake
    from clwl.lake.reports import NoReport, fetch_report, report_run_id

    lake = Lake(lake_root)
    published = lake.published()
    date = args.date
    if date is None:
        if not published.dates:
            return _fail(f"no published date in {lake_root}: give --date YYYY-MM-DD")
        date = max(published.dates)
    made_for = report_run_id(lake, date)
    if made_for is None:
        why = "it is published, but its report is not there" if date in published.dates else "it is not published"
        return _fail(f"no report for {date} in {lake_root} ({why})")
    out = args.out if args.out is not None else Path(tempfile.mkdtemp(prefix=f"clwl-report-{date}-"))
    try:
        files = fetch_report(lake, date, out)
    except NoReport as e:  # removed between the look and the copy
        return _fail(str(e))
    except OSError as e:  # the local folder cannot be written
        return _fail(f"--out {out}: {e.strerror or e}")
    published_run = published.dates.get(date)
    stale = published_run is not None and made_for != published_run
    if stale:
        say(f"clwl report: warning: the report of {date} is run {made_for}'s, not the published run "
            f"{published_run}'s (a run stopped before its report); `clwl run --date {date}` writes it again",
            sys.stderr)
    html = files[0]
    if args.json:
        print(json.dumps({"date": date, "lake": str(lake_root), "run_id": made_for, "published_run_id": published_run,
                          "out": str(out), "report_html": str(html), "files": [str(f) for f in files]}))
    else:
        say(f"report of {date} (run {made_for}) from {lake_root}: {len(files)} file(s) in {out}")
        say(f"  {html}")
        summary = out / "summary.md"
        if summary in files:
            say(f"  {summary}")
    if args.open:
        import webbrowser

        if not webbrowser.open(html.resolve().as_uri()):
            say(f"clwl report: no web browser could be started here; open {html} yourself", sys.stderr)
    return EXIT_OK
