"""The report assembled: its sections in reading order (:data:`SECTIONS`), each a small named builder that
fills its part of the :class:`~clwl.report.model.Report` from the one gathered :class:`~clwl.report.model.Day`;
the templates rendered (Jinja2, ``clwl/report/templates/``); and :func:`write_report`, which reads the lake,
builds and writes ``<reports>/<run_date>/report.html`` and ``summary.md`` (with its charts beside it)."""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol

from clwl.days import run_day
from clwl.lake.door import VALIDATION
from clwl.lake.reports import MARKER, marker_bytes
from clwl.lake.storage import lake_root
from clwl.report.advice import blast_section, drift_section, even_split_section, lint_section
from clwl.report.agreement import MQ_COUNTS, agreement_section
from clwl.report.channels import channels_section, evidence_section, xmitq_section
from clwl.report.depth import queue_depth_section
from clwl.report.distribution import distribution_section
from clwl.report.incidents import incidents_section, picture_section
from clwl.report.model import Day, Report, fmt, table_view
from clwl.report.paths import paths_section
from clwl.report.read import WHATIF_COLS, gather
from clwl.report.shares import replay_section, shares_section
from clwl.report.stuck import stuck_section
from clwl.report.timing import TIMING_COUNTS, timing_section
from clwl.report.trends import across_days_section

log = logging.getLogger(__name__)

TEMPLATES = Path(__file__).with_name("templates")  # package data: beside this module when installed too

SUMMARY_FIELDS = ("run_id", "run_date", "status", "started_at", "finished_at", "rows_read", "rows_accepted",
                  "rows_quarantined", "messages_replayed", "messages_stuck", "distribution_unexpected",
                  *MQ_COUNTS, *TIMING_COUNTS, "validation_result", "table_versions", "warnings")


def warnings_of(summary: dict) -> list[str]:
    """The run summary's warnings (gold.run_summary.warnings, "; "-separated; absent in older tables)."""
    text = fmt(summary.get("warnings")) if summary else ""
    return [w.strip() for w in text.split("; ") if w.strip()]


def whatif_section(day: Day, rep: Report) -> None:
    """A what-if run: the published day's destinations beside the what-if's."""
    if day.beside is not None:
        rep.beside = table_view("whatif", day.beside, WHATIF_COLS, "No messages on either side.")


def warnings_section(day: Day, rep: Report) -> None:
    """The run's warnings, at the top."""
    rep.warnings = warnings_of(day.summary[0])


def run_summary_section(day: Day, rep: Report) -> None:
    """The technical run summary, last, with the table versions the report was made from."""
    summary, rep.summary_note = dict(day.summary[0]), day.summary[1]
    if summary:
        if day.whatif:  # written under whatif/<name>: never the published status
            summary["status"] = f"what-if {day.whatif} (not published)"
        if not fmt(summary.get("validation_result")):  # written before validation ran: say where it is
            where = (day.validation_root / str(summary.get("run_id")) / day.run_date.isoformat()
                     if day.validation_root is not None else None)
            # Relative to the lake: the machine that ran it and where the lake sat there are no part of the result.
            # Built from its parts, not Path.relative_to: the lake may be on an object store (a LakeLocation).
            summary["validation_result"] = ("/".join((day.validation_root.name, where.parent.name, where.name))
                                            if where is not None and where.exists() else "not recorded")
        status = fmt(summary.get("status"))
        rep.summary = [(k, fmt(summary.get(k)), k == "status" and status != "published")
                       for k in SUMMARY_FIELDS if k in summary]
    rep.versions = list(day.versions)


@dataclass(frozen=True)
class Section:
    """One part of the report: ``build`` fills its fields of the Report from the Day."""

    name: str
    build: Callable[[Day, Report], None]


#: The report's sections in reading order: the administrator's answers first (findings: the incidents, with the
#: side to look at and who was hit; what is stuck, which
#: distributions are unexpected, the replay against MQ's answer), then the tables behind them; then the answers
#: before anything goes wrong (clwl/report/advice.py: lint, drift, advise, blast); the technical run summary last.
#: The templates show them in this order.
SECTIONS = (
    Section("what-if", whatif_section),
    Section("warnings", warnings_section),
    Section("incidents", incidents_section),
    Section("picture", picture_section),
    Section("evidence", evidence_section),
    Section("stuck", stuck_section),
    Section("distribution", distribution_section),
    Section("agreement", agreement_section),
    Section("timing", timing_section),
    Section("shares", shares_section),
    Section("replay", replay_section),
    Section("delivery paths", paths_section),
    Section("channels", channels_section),
    Section("xmitq", xmitq_section),
    Section("configuration findings", lint_section),
    Section("what changed", drift_section),
    Section("across days", across_days_section),
    Section("queue depth", queue_depth_section),
    Section("even split", even_split_section),
    Section("blast radius", blast_section),
    Section("run summary", run_summary_section),
)


def build_report(day: Day) -> Report:
    """The report of one gathered day: every section in order."""
    title = (f"CLWL what-if report: {day.whatif}, {day.run_date.isoformat()}" if day.whatif
             else f"CLWL replay report: {day.run_date.isoformat()}")
    rep = Report(title, day.run_date, day.run_id, dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%SZ"),
                 whatif=day.whatif, overrides=day.overrides or {})
    for section in SECTIONS:
        section.build(day, rep)
    return rep


def _environment(markdown: bool):
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), undefined=jinja2.StrictUndefined,
                             autoescape=not markdown, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True)
    env.filters["md"] = lambda v: str(v).replace("|", "\\|").replace("\n", " ")
    env.filters["json"] = lambda v: json.dumps(v, sort_keys=True)
    env.filters["breakable"] = breakable
    return env


_BREAK_AFTER = re.compile(r"([._/,;=])(?=\S)")


def breakable(text: object):
    """HTML text that wraps only between the parts of a name (after ``.``, ``_``, ``/``, ``,``, ``;``, ``=``), never
    inside one: SYSTEM.CLUSTER.TRANSMIT.QUEUE may break before TRANSMIT, not inside it."""
    import markupsafe

    return markupsafe.Markup(_BREAK_AFTER.sub(r"\1<wbr>", str(markupsafe.escape(text))))


def render_html(rep: Report) -> str:
    return _environment(markdown=False).get_template("report.html.j2").render(rep=rep)


def render_md(rep: Report) -> str:
    return _environment(markdown=True).get_template("summary.md.j2").render(rep=rep)


class Places(Protocol):
    """Where a lake is and where its reports go (a spark.config.PipelineConfig is one)."""

    lake: Path
    reports: Path


@dataclass(frozen=True)
class Place:
    """A lake and its reports folder, for callers without the pipeline's configuration."""

    lake: Path
    reports: Path


def quality_docs(validation_root: Any, run_id: str, day: dt.date, folder: Path) -> tuple[str, str]:
    """Build the Data Docs of the report's run, from the results kept under ``validation_root`` (the lake's
    validation folder: a Path or a location on the object store), into ``<folder>/quality/``: (the link to their
    index, "") for the run summary, or ("", why not) when the run kept no results or GX cannot build them (the
    report is written without them and says so)."""
    from clwl.report.quality_docs import QUALITY_DIR, QualityDocsError, build_quality_docs, validation_folder

    try:
        where = validation_folder(validation_root, run_id, day.isoformat())
        index = build_quality_docs(where, folder / QUALITY_DIR, run_id, day.isoformat())
    except QualityDocsError as exc:
        log.warning("report %s: no Data Docs: %s", day, exc)
        shutil.rmtree(folder / QUALITY_DIR, ignore_errors=True)  # an earlier run's are not this report's
        return "", f"The quality gate's Data Docs were not built: {exc}"
    return index.relative_to(folder).as_posix(), ""


def write_report(out: Places, run_date: dt.date | str, run_id: str, *, channel_status: str | Path | None = None,
                 whatif: Any = None, published: Places | None = None) -> tuple[Path, Path]:
    """Write ``<out.reports>/<run_date>/report.html`` and ``summary.md`` from ``out.lake``'s published gold tables.

    channel_status: the channel status timeline table (default ``<lake>/silver/channel_status``); the timeline
    is left out, with a note, when it is absent. whatif (a clwl.analyses.whatif.WhatIf) and published (the main lake): a
    what-if run's report, titled as one, listing its overrides and showing the published day beside it. The
    silver tables (configuration, browses) are the main lake's.
    """
    from concurrent.futures import ThreadPoolExecutor

    day = run_date if isinstance(run_date, dt.date) else run_day(run_date)
    folder = Path(out.reports) / day.isoformat()
    folder.mkdir(parents=True, exist_ok=True)
    # The Data Docs need only the kept results: built beside the reads and the sections (their first build in a
    # process imports Great Expectations, seconds of its own), taken when the report is put together.
    lake = lake_root(out.lake)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="report-docs") as pool:
        docs = pool.submit(quality_docs, lake / VALIDATION, run_id, day, folder)
        gathered = gather(lake, day, run_id,
                          silver_lake=lake_root(published.lake) if published is not None else None,
                          channel_status=channel_status, whatif=whatif)
        rep = build_report(gathered)
        rep.quality_docs, rep.quality_docs_note = docs.result()
    charts_dir = folder / "charts"
    for c in rep.all_charts:
        charts_dir.mkdir(exist_ok=True)
        (charts_dir / c.file).write_bytes(c.png)
    html_path, md_path = folder / "report.html", folder / "summary.md"
    html_path.write_text(render_html(rep), encoding="utf-8")
    md_path.write_text(render_md(rep), encoding="utf-8")
    # Last: the run the report was made for (clwl/lake/reports.py), so that a report left half-written, or a
    # previous run's, is never taken for the published run's.
    (folder / MARKER).write_bytes(marker_bytes(run_id, day.isoformat()))
    return html_path, md_path
