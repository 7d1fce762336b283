"""``clwl report [--lake LAKE] [--date D] (--out DIR | --open) [--json]``: a day's published report, fetched.

A run writes each day's report under ``<lake>/reports/<date>/`` (report.html, summary.md, the charts). On a local
lake it can be opened where it is; on an object store (``s3://``) nothing the project installs opens it. This
command copies everything under that folder into a local folder (clwl/lake/reports.py: the same for both kinds of
lake) and says where it put it; ``--open`` then opens report.html in the default browser. No JVM.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from clwl.cli.options import DATE, LAKE_LOCATION
from clwl.cli.task import LakeTask, TaskError
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
    r.set_defaults(func=ReportTask.main)
    return r


class ReportTask(LakeTask):
    """The runner's steps (clwl.cli.task): the lake as every lake-reading command finds it, the date (default: the
    latest published), the fetch, then where it went."""

    command = "report"
    readers = REPORT_READERS

    def check(self) -> None:
        if self.args.out is None and not self.args.open:
            raise TaskError("give --out DIR (the folder to put the report in), --open, or both")
        if self.args.out is not None and self.args.out.exists() and not self.args.out.is_dir():
            raise TaskError(f"--out {self.args.out}: not a folder")

    def compute(self) -> dict:
        from clwl.lake.reports import NoReport, blocked_quality_docs, fetch_report, report_made_for

        lake = self.lake
        published = lake.published()
        date = self.date
        if date is None:
            if not published.dates:
                raise TaskError(f"no published date in {self.lake}: give --date YYYY-MM-DD")
            date = max(published.dates)
        made_for = report_made_for(lake, date)
        if made_for is None:
            why = "it is published, but its report is not there" if date in published.dates else "it is not published"
            blocked = blocked_quality_docs(lake, date)
            if blocked is not None:  # the gate stopped its last run: say where the gate's results are
                why += f"; the quality gate blocked its last run: its results (Data Docs) are at {blocked}"
            raise TaskError(f"no report for {date} in {self.lake} ({why})")
        out = self.args.out if self.args.out is not None else Path(tempfile.mkdtemp(prefix=f"clwl-report-{date}-"))
        try:
            files = fetch_report(lake, date, out)
        except NoReport as e:  # removed between the look and the copy
            raise TaskError(str(e)) from None
        except OSError as e:  # the local folder cannot be written
            raise TaskError(f"--out {out}: {e.strerror or e}") from None
        published_run = published.dates.get(date)
        if published_run is not None and made_for != published_run:
            say(f"clwl report: warning: the report of {date} is run {made_for}'s, not the published run "
                f"{published_run}'s (a run stopped before its report); `clwl run --date {date}` writes it again",
                sys.stderr)
        return {"date": date, "lake": str(self.lake), "run_id": made_for, "published_run_id": published_run,
                "out": out, "files": files}

    def json_document(self, result: dict) -> dict:
        return {"date": result["date"], "lake": result["lake"], "run_id": result["run_id"],
                "published_run_id": result["published_run_id"], "out": str(result["out"]),
                "report_html": str(result["files"][0]), "files": [str(f) for f in result["files"]]}

    def render(self, result: dict) -> None:
        super().render(result)
        if self.args.open:
            import webbrowser

            html = result["files"][0]
            if not webbrowser.open(html.resolve().as_uri()):
                say(f"clwl report: no web browser could be started here; open {html} yourself", sys.stderr)

    def render_text(self, result: dict) -> None:
        files, out = result["files"], result["out"]
        say(f"report of {result['date']} (run {result['run_id']}) from {result['lake']}: {len(files)} file(s) in {out}")
        say(f"  {files[0]}")
        if out / "summary.md" in files:
            say(f"  {out / 'summary.md'}")
