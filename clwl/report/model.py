"""What the report is made of: the day gathered from the lake (:class:`Day`), the report the templates show
(:class:`Report`, its tables as :class:`TableView` and its charts as :class:`Chart`), and the formatting every
section shares (cells, h:mm, percentages, sort keys)."""

from __future__ import annotations

import base64
import datetime as dt
import io
import math
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Iterable, Sequence

import pandas as pd

MAX_TABLE_ROWS = 200  # rows of a table shown in the report; the rest are counted, and `clwl query` has them all
MAX_QUEUE_CHARTS = 30
MAX_FINDINGS = 12  # sentences per kind of finding; the tables below them have the rest
MAX_DISAGREEMENTS = 100  # disagreements listed in the findings; the rest are counted, with the query for them all


@dataclass
class Chart:
    title: str
    png: bytes
    file: str
    alt: str

    @property
    def data_uri(self) -> str:
        return "data:image/png;base64," + base64.b64encode(self.png).decode("ascii")


@dataclass
class TableView:
    """A table as the templates show it: formatted cells, each (text, sort key or "")."""

    id: str
    columns: list[str]
    rows: list[list[tuple[str, str]]]
    total: int
    empty: str
    wrap: frozenset[str] = frozenset()  # columns of long text: wrapped, never run past the page
    details: frozenset[str] = frozenset()  # columns of long text shown behind a disclosure (HTML)
    ids: frozenset[str] = frozenset()  # columns of long ids: shown short, whole in the title, with a copy button

    def short(self, text: str) -> str:
        """An id as shown in an ``ids`` column: its first ID_SHOWN characters and an ellipsis."""
        return text if len(text) <= ID_SHOWN + 1 else text[:ID_SHOWN] + "\u2026"

    @property
    def more(self) -> int:
        return self.total - len(self.rows)


@dataclass
class Report:
    """Everything the templates show: filled in by the sections (clwl.report.build.SECTIONS) from one Day."""

    title: str
    run_date: dt.date
    run_id: str
    generated: str
    whatif: str | None = None
    overrides: dict = field(default_factory=dict)
    beside: TableView | None = None
    warnings: list[str] = field(default_factory=list)
    findings_incidents: list[str] = field(default_factory=list)
    # The first screen: one line per incident (what, when, where, stuck and whose, where to look), or the day's
    # all-clear sentence; above the picture.
    verdict: list[str] = field(default_factory=list)
    incidents: TableView | None = None
    findings_stuck: list[str] = field(default_factory=list)
    findings_distribution: list[str] = field(default_factory=list)
    findings_agreement: list[str] = field(default_factory=list)
    disagreements: TableView | None = None  # None: nothing disagrees (or nothing was traced)
    disagreement_query: str = ""
    # Timing: the replay's waits against the channel agents' trace (clwl.report.timing).
    findings_timing: list[str] = field(default_factory=list)
    timing_disagreements: TableView | None = None  # None: no timing disagreement (or nothing traced)
    stuck_total: int = 0
    stuck_groups: TableView | None = None
    stuck_rows: TableView | None = None
    shares: TableView | None = None
    shares_note: str = ""
    charts: list[Chart] = field(default_factory=list)
    unexpected: TableView | None = None
    dist_overview: TableView | None = None
    replay_overview: TableView | None = None
    delivery_paths: TableView | None = None  # senders with IGQ(ENABLED): intra-group queuing against the cluster path
    channel_trouble: TableView | None = None
    timeline_trouble: Chart | None = None
    timeline_rest: Chart | None = None
    timeline_rest_count: int = 0
    timeline_note: str = ""
    picture: Chart | None = None  # messages waiting per channel, incidents and evidence marked (clwl.report.incidents)
    findings_evidence: list[str] = field(default_factory=list)  # what the report could not see
    quarantine: TableView | None = None
    trouble_note: str = ""  # the stuck messages of troubled channels that no bad interval holds
    dist_note: str = ""  # what the distribution charts count against the replay's day totals
    xmitq_chart: Chart | None = None
    xmitq_table: TableView | None = None
    xmitq_note: str = ""
    summary: list[tuple[str, str, bool]] = field(default_factory=list)  # (field, value, is it bad)
    summary_note: str = ""
    versions: list[tuple[str, str]] = field(default_factory=list)
    # The gate's results as Great Expectations Data Docs (clwl.report.quality_docs): the link to their index,
    # relative to the report, or why they are not there.
    quality_docs: str = ""
    quality_docs_note: str = ""
    # The answers before anything goes wrong (lint, drift, advise, blast): clwl.report.advice.Answer, in order.
    answers: list[Any] = field(default_factory=list)

    @property
    def all_charts(self) -> list[Chart]:
        return [c for c in [self.picture, *self.charts, self.timeline_trouble, self.timeline_rest, self.xmitq_chart,
                            *(c for a in self.answers for c in getattr(a, "charts", ()))] if c]




@dataclass
class Seen:
    """What the day's evidence covered, for clwl/landing/evidence.py's rules: chstatus, the run date's channel status
    capture times per queue manager (chstatus_read False: bronze.capture_files not read); puts, each sender's
    first and last put; accounting, the queue managers with queue accounting records (None: no such table);
    quarantine, the records quarantined per source_file, level and reason (``records``)."""

    chstatus: dict[str, list[dt.datetime]] = field(default_factory=dict)
    puts: dict[str, tuple[dt.datetime, dt.datetime]] = field(default_factory=dict)
    accounting: set[str] | None = None
    quarantine: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(
        columns=["source_file", "level", "reason", "records"]))
    chstatus_read: bool = True


@dataclass
class Day:
    """Everything the sections read, gathered once from the lake (clwl.report.read.gather) or handed in by a
    test: the run date's rows of the published tables, as plain frames.

    routing_cube: routing_replay as its count cube (clwl.report.read.arrow_cube; batches combined); stuck,
    distribution, run_summary: the run date's rows of those gold tables; channel_status: silver.channel_status
    (None: no table, channel_note says why); xmitq_contents: silver.xmitq_contents' browses; timelines: the
    configuration timelines the configured shares are computed from (None: not read, configured_note says
    why); disagreements: the first routing_replay rows with agrees = false, of disagreement_total (default: as
    many as given); low_puts: the run date's puts traced at LOW; whatif, overrides, beside: a what-if run's
    name, overrides and the published day beside it; versions: (table, version) of every table read.

    Who and why (clwl.report.incidents): delayed: routing_replay's rows of the messages that waited
    (clwl.report.read.DELAYED_COLS; None: not read); puts: silver.message_events' rows of the delayed and stuck
    messages with their ``application`` (clwl.analyses.incidents.application_of); skew: per unexpected destination-
    interval (sending_qmgr, queue, interval_start), the interval's puts per application and bind (messages)."""

    run_date: dt.date
    run_id: str
    routing_cube: pd.DataFrame
    stuck: pd.DataFrame
    distribution: pd.DataFrame
    run_summary: pd.DataFrame
    channel_status: pd.DataFrame | None = None
    channel_note: str = ""
    xmitq_contents: pd.DataFrame | None = None
    xmitq_note: str = ""
    timelines: dict[str, list[Any]] | None = None
    # gold.routing_replay rows (sending_qmgr, qmgr, path, length, config_time) of the senders with IGQ(ENABLED)
    # (clwl.report.paths); None when there is none
    igq_rows: pd.DataFrame | None = None
    configured_note: str = ""
    profile: str = "default"  # the algorithm profile the configured shares are routed with
    versions: Sequence[tuple[str, str]] = ()
    validation_root: Path | None = None
    lake: Path | None = None  # the lake whose silver tables the day was read from (None: handed in without one)
    whatif: str | None = None
    overrides: dict | None = None
    beside: pd.DataFrame | None = None
    disagreements: pd.DataFrame | None = None
    disagreement_total: int | None = None
    low_puts: int = 0
    delayed: pd.DataFrame | None = None
    puts: pd.DataFrame | None = None
    skew: pd.DataFrame | None = None
    seen: Seen | None = None  # what the evidence covered (None: not read: the report says so)
    # What sections derive from the day and more than one reads, made once by the module that knows how
    # (clwl.report.incidents: day_troubles, day_incidents); not part of the day's identity.
    derived: dict = field(default_factory=dict, repr=False, compare=False)

    @cached_property
    def summary(self) -> tuple[dict, str]:
        """The run summary row of this run (or the latest of the date, with a note saying so)."""
        return summary_row(self.run_summary, self.run_id)

    @cached_property
    def stuck_rows(self) -> pd.DataFrame:
        """The stuck rows with their age as h:mm."""
        stuck = self.stuck.copy()
        if not stuck.empty:
            stuck["age"] = stuck["age_seconds"].map(hmm)
        return stuck


def summary_row(summary: pd.DataFrame, run_id: str) -> tuple[dict, str]:
    if summary.empty:
        return {}, "no run summary published for this run date"
    mine = summary[summary["run_id"] == run_id] if "run_id" in summary.columns else summary.iloc[0:0]
    if not mine.empty:
        return mine.iloc[0].to_dict(), ""
    latest = summary.sort_values("started_at" if "started_at" in summary.columns else summary.columns[0]).iloc[-1]
    return latest.to_dict(), f"run {run_id} has no published summary; showing the latest published run of this date"


# ------------------------------------------------------------------------------------------------ formatting


def fmt(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NaT:
        return ""
    if isinstance(v, pd.Timestamp):
        return v.strftime("%Y-%m-%d %H:%M:%SZ" if v.tzinfo else "%Y-%m-%d %H:%M:%S")
    if isinstance(v, dt.datetime):
        return v.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, dict):
        return ", ".join(f"{k}={x}" for k, x in sorted(v.items()))
    if isinstance(v, (list, tuple)) and v and all(isinstance(p, tuple) and len(p) == 2 for p in v):
        return ", ".join(f"{k}={x}" for k, x in sorted(v))
    try:
        if pd.isna(v):
            return ""
    except (TypeError, ValueError):
        pass
    return str(v)


def hmm(seconds: Any) -> str:
    """A duration as h:mm (2:59 for 10 742 s)."""
    if seconds is None or pd.isna(seconds):
        return ""
    minutes = int(seconds) // 60
    return f"{minutes // 60}:{minutes % 60:02d}"


def clock(t: Any) -> str:
    return "" if t is None or pd.isna(t) else pd.Timestamp(t).strftime("%H:%M")


def pct(part: float, whole: float) -> str:
    return f"{100.0 * part / whole:.1f} %" if whole else "n/a"


def _sort_key(v: Any) -> str:
    """A key the inline script sorts numerically (numbers) or as text (timestamps sort as their ISO text)."""
    if isinstance(v, bool) or v is None:
        return ""
    if isinstance(v, (int, float)) and not (isinstance(v, float) and math.isnan(v)):
        return repr(float(v))
    return ""


def table_view(id: str, frame: pd.DataFrame, columns: Sequence[str], empty: str, *,
               wrap: Iterable[str] = (), keys: dict[str, str] | None = None,
               limit: int = MAX_TABLE_ROWS, details: Iterable[str] = (), ids: Iterable[str] = ()) -> TableView:
    """keys: a column whose sort key is another column (e.g. "oldest" h:mm sorted by its seconds)."""
    cols = [c for c in columns if c in frame.columns]
    keys = keys or {}
    shown = frame.head(limit)
    rows = []
    for rec in shown.to_dict("records"):
        rows.append([(fmt(rec[c]), _sort_key(rec[keys[c]] if c in keys else rec[c])) for c in cols])
    return TableView(id, cols, rows, len(frame), empty, frozenset(wrap), frozenset(details), frozenset(ids))


# The HTML report's table layout (templates/report.html.j2's CSS), for estimated_width: a page of PAGE_PX
# (1400 px less the body's padding) holds a table whose columns' narrowest widths add up to no more.
PAGE_PX = 1400 - 2 * 24
CHAR_PX = 7.2  # an average character at the tables' .85em of 16 px
CELL_PAD_PX = 16  # padding and borders of a cell
WRAP_MIN_PX = 8 * 13.6  # td.wrap: min-width 8em; it breaks between the parts of a name (report/build.py breakable)
ID_SHOWN = 8  # characters of an id shown (the rest in its title and the copy button)
DETAILS_INLINE = 24  # a details column's text up to this long is shown as it is, longer behind the disclosure
COPY_PX = 26  # the copy button


def _longest_word(texts: Iterable[str]) -> int:
    return max((len(w) for x in texts for w in x.split()), default=0)


def _longest_part(texts: Iterable[str]) -> int:
    """The longest piece a wrap cell cannot break: words cut after . _ / , ; = (where the HTML puts <wbr>)."""
    return max((len(p) for x in texts for w in x.split() for p in re.split(r"(?<=[._/,;=])", w)), default=0)


def estimated_width(t: TableView) -> float:
    """The narrowest width in px the HTML report's CSS lets ``t`` take (the browser's automatic table layout
    shrinks a table that does not fit down to it, and scrolls sideways only below it): per column, the header
    (never wrapped), else its cells' narrowest form: an ids column its short id and copy button, a details
    column the disclosure's summary (or its short text), a wrap column its min-width or its longest unbreakable part
    (it breaks between the parts of names, never inside one), any
    other its longest word. A screenshot-free check that a table fits the page without sideways scrolling."""
    total = 0.0
    for i, c in enumerate(t.columns):
        texts = [row[i][0] for row in t.rows]
        if c in t.ids:
            cell = max((len(t.short(x)) for x in texts), default=0) * CHAR_PX + COPY_PX
        elif c in t.details:
            cell = max([len(c) + 3] + [_longest_word([x]) for x in texts if len(x) <= DETAILS_INLINE]) * CHAR_PX
        elif c in t.wrap:
            cell = max(WRAP_MIN_PX, _longest_part(texts) * CHAR_PX)
        else:
            cell = _longest_word(texts) * CHAR_PX
        total += max(cell, len(c) * CHAR_PX * 1.1) + CELL_PAD_PX  # headers are bold and never wrap
    return total


def png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    return buf.getvalue()


def safe_file(text: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in text)
