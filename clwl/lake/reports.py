"""The lake's reports: ``<lake>/reports/<date>/`` (report.html, summary.md, charts/ and the marker
``_report.json``), which run a day's report was made for, and fetching it to a local folder. Pure Python (no
pyspark, no pandas): `clwl run` asks it before Spark starts, `clwl report` without a JVM, locally and on
``s3://`` alike (clwl/lake/storage.py).

A report belongs to the run that published its day. The marker, written after every other file of the report,
names that run (``{"run_id": ..., "run_date": ...}``): a run killed after its publish moved the published pointer
but before its report was written leaves the previous run's report with the previous run's marker, and the next
`clwl run` sees that the report is not the published run's and writes it again (spark/pipeline.py). A report made
before the marker existed is known by its summary.md's ``Run `<run id>` `` line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Optional

from clwl.lake.door import REPORTS, Lake
from clwl.lake.storage import (
    LakeLocation,
    StorageError,
    delete_prefix,
    get_file,
    list_prefix,
    read_object,
)

#: Written last into a day's report folder: the run the report was made for.
MARKER = "_report.json"
REPORT_HTML = "report.html"
SUMMARY_MD = "summary.md"
#: The Data Docs folder in a date's report folder (clwl/report/quality_docs.py): the report's run; a blocked run's.
QUALITY_DIR = "quality"
BLOCKED_QUALITY_DIR = "quality-blocked"
_SUMMARY_RUN = re.compile(r"^Run `([^`\n]{1,200})`", re.M)


def marker_bytes(run_id: str, run_date: str) -> bytes:
    return (json.dumps({"run_id": str(run_id), "run_date": str(run_date)}) + "\n").encode("utf-8")


def reports_of(lake: Lake | Path | LakeLocation):
    """The reports folder of a lake (``<lake>/reports``); a folder given as such stays as it is."""
    return lake.layer(REPORTS) if isinstance(lake, Lake) else lake


def report_folder(reports: Lake | Path | LakeLocation, run_date: str):
    """``<reports>/<date>`` (a Path, or a location on the object store); ``reports``: a lake, or its reports
    folder (a run's PipelineConfig.reports)."""
    return reports_of(reports) / str(run_date)


def blocked_quality_docs(reports: Lake | Path | LakeLocation, run_date: str):
    """The Data Docs a run the gate blocked left for ``run_date`` (``<reports>/<date>/quality-blocked/index.html``,
    spark/pipeline.py), or None: what to point at when a date has no report because its publish was blocked."""
    folder = report_folder(reports, run_date) / BLOCKED_QUALITY_DIR
    return folder / "index.html" if "index.html" in {name for name, _ in list_prefix(folder)} else None


def forget_blocked_quality_docs(reports: Lake | Path | LakeLocation, run_date: str) -> None:
    """Remove a blocked run's Data Docs of ``run_date`` once a later run publishes it: they described a run that
    was not published, and the published run's are under ``quality/``. ``clwl report`` would otherwise keep
    pointing at them."""
    delete_prefix(report_folder(reports, run_date) / BLOCKED_QUALITY_DIR)


def _read(location) -> Optional[bytes]:
    try:
        return read_object(location).data
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    except StorageError:
        raise
    except OSError:
        return None


def report_made_for(reports: Lake | Path | LakeLocation, run_date: str) -> Optional[str]:
    """The run the day's report was made for: its marker's, else (a report from before the marker) its
    summary.md's; None when the day has no complete report (no report.html, or neither names a run)."""
    folder = report_folder(reports, run_date)
    names = {name for name, _ in list_prefix(folder)}
    if REPORT_HTML not in names:
        return None
    if MARKER in names:
        raw = _read(folder / MARKER)
        try:
            data = json.loads(raw.decode("utf-8")) if raw else None
        except (UnicodeDecodeError, ValueError, RecursionError):
            data = None
        run_id = data.get("run_id") if isinstance(data, dict) else None
        return run_id if isinstance(run_id, str) and run_id else None
    raw = _read(folder / SUMMARY_MD) if SUMMARY_MD in names else None
    found = _SUMMARY_RUN.search(raw.decode("utf-8", "replace")) if raw else None
    return found.group(1) if found else None


class NoReport(LookupError):
    """The lake has no report for the date (one line)."""


def fetch_report(lake: Lake, run_date: str, out: Path) -> list[Path]:
    """Copy every file under ``<lake>/reports/<date>/`` (report.html, summary.md, the charts, the marker) into the
    local folder ``out`` (created), keeping the layout; the files written, report.html first. NoReport when the
    date has no report.html."""
    folder = report_folder(lake, run_date)
    names = [name for name, _ in list_prefix(folder) if name and not name.endswith("/")]
    if REPORT_HTML not in names:
        raise NoReport(f"no report for {run_date} in {lake.root} (reports/{run_date}/report.html is not there)")
    out = Path(out)
    written: list[Path] = []
    for name in sorted(names, key=lambda n: (n != REPORT_HTML, n)):
        parts = name.split("/")
        if any(p in ("", ".", "..") for p in parts):  # a name that would leave the folder: not the lake's own
            continue
        target = out.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        get_file(folder / name, target)
        written.append(target)
    return written
