"""What the report is made of: the day gathered from the lake (:class:`Day`), the report the templates show
(:class:`Report`, its tables as :class:`TableView` and its charts as :class:`Chart`), and the formatting every
section shares (cells, h:mm, percentages, sort keys)."""

from __future__ import annotations

import base64
import datetime as dt
import io
import math
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
    incidents: TableView | None = None
    findings_stuck: list[str] = field(default_factory=list)
    findings_distribution: list[str] = field(default_factory=list)
    findings_agreement: list[str] = field(default_factory=list)
    disagreements: TableView | None = None  # None: nothing disagrees (or nothing was traced)
    disagreement_query: str = ""
    stuck_total: int = 0
    stuck_groups: TableView | None = None
    stuck_rows: TableView | None = None
    shares: TableView | None = None
    shares_note: str = ""
    charts: list[Chart] = field(default_factory=list)
    unexpected: TableView | None = None
    dist_overview: TableView | None = None
    replay_overview: TableView | None = None
    channel_trouble: TableView | None = None
    timeline_trouble: Chart | None = None
    timeline_rest: Chart | None = None
    timeline_rest_count: int = 0
    timeline_note: str = ""
    xmitq_chart: Chart | None = None
    xmitq_table: TableView | None = None
    xmitq_note: str = ""
    summary: list[tuple[str, str, bool]] = field(default_factory=list)  # (field, value, is it bad)
    summary_note: str = ""
    versions: list[tuple[str, str]] = field(default_factory=list)
    # The answers before anything goes wrong (lint, drift, advise, blast): clwl.report.advice.Answer, in order.
    answers: list[Any] = field(default_factory=list)

    @property
    def all_charts(self) -> list[Chart]:
        return [c for c in [*self.charts, self.timeline_trouble, self.timeline_rest, self.xmitq_chart] if c]




@dataclass
class Day:
    """Everything the sections read, gathered once from the lake (clwl.report.read.gather) or handed in by a
    test: the run date's rows of the published tables, as plain frames.

    routing_cube: routing_replay as its count cube (clwl.report.read.replay_cube; batches combined); stuck,
    distribution, run_summary: the run date's rows of those gold tables; channel_status: silver.channel_status
    (None: no table, channel_note says why); xmitq_contents: silver.xmitq_contents' browses; timelines: the
    configuration timelines the configured shares are computed from (None: not read, configured_note says
    why); disagreements: the first routing_replay rows with agrees = false, of disagreement_total (default: as
    many as given); low_puts: the run date's puts traced at LOW; whatif, overrides, beside: a what-if run's
    name, overrides and the published day beside it; versions: (table, version) of every table read.

    Who and why (clwl.report.incidents): delayed: routing_replay's rows of the messages that waited
    (clwl.report.read.DELAYED_COLS; None: not read); puts: silver.message_events' rows of the delayed and stuck
    messages with their ``application`` (clwl.incidents.application_of); skew: per unexpected destination-
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
    configured_note: str = ""
    profile: str = "default"  # the algorithm profile the configured shares are routed with
    versions: Sequence[tuple[str, str]] = ()
    validation_root: Path | None = None
    whatif: str | None = None
    overrides: dict | None = None
    beside: pd.DataFrame | None = None
    disagreements: pd.DataFrame | None = None
    disagreement_total: int | None = None
    low_puts: int = 0
    delayed: pd.DataFrame | None = None
    puts: pd.DataFrame | None = None
    skew: pd.DataFrame | None = None

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
               limit: int = MAX_TABLE_ROWS) -> TableView:
    """keys: a column whose sort key is another column (e.g. "oldest" h:mm sorted by its seconds)."""
    cols = [c for c in columns if c in frame.columns]
    keys = keys or {}
    shown = frame.head(limit)
    rows = []
    for rec in shown.to_dict("records"):
        rows.append([(fmt(rec[c]), _sort_key(rec[keys[c]] if c in keys else rec[c])) for c in cols])
    return TableView(id, cols, rows, len(frame), empty, frozenset(wrap))


def png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    return buf.getvalue()


def safe_file(text: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in text)
