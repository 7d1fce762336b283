"""The report people read: `<reports>/<run_date>/report.html` (one self-contained file: charts embedded as base64
PNG, a few lines of inline JavaScript to sort and filter the tables, nothing fetched) and `summary.md` (Markdown,
with the same charts as PNG files beside it), both rendered from the Jinja2 templates in `spark/templates/`.

The order answers the administrator first: findings, each a sentence with its numbers (what is stuck, grouped by
channel, reason and time window; which distributions are unexpected and why; on how many traced puts the replay
agrees with MQ's own answer, every disagreement listed, and why puts traced at LOW have none); then the stuck
groups (the messages behind a disclosure), configured against replayed against observed shares, the replay per
queue, the channels (troubled ones first, transmission queue depth where browses exist); the technical run
summary last.

It reads the published gold tables with the `deltalake` package and pandas, so it needs no JVM; when a Spark
session is given it is used only if deltalake cannot read a table. routing_replay (a row per message) is only
ever read batch by batch into a small count cube (`_replay_cube`), never whole, and its disagreeing rows
(agrees = false) through a pushed-down filter, keeping the first `MAX_DISAGREEMENTS`. The Delta version of every
table read is printed in the run summary, so the report can be reproduced by time travel.
"""

from __future__ import annotations

import base64
import datetime as dt
import io
import json
import logging
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import pandas as pd

from clwl.lake import GOLD_TABLES, LakeFileError, is_delta_table, latest_version, open_delta
from spark.config import PipelineConfig

log = logging.getLogger(__name__)

TEMPLATES = Path(__file__).with_name("templates")  # package data: beside this module when installed too
MAX_TABLE_ROWS = 200  # rows of a table shown in the report; the rest are counted, and `clwl query` has them all
MAX_QUEUE_CHARTS = 30
MAX_FINDINGS = 12  # sentences per kind of finding; the tables below them have the rest
MAX_DISAGREEMENTS = 100  # disagreements listed in the findings; the rest are counted, with the query for them all

STATE_COLOURS = {
    "RUNNING": "#2e7d32", "INACTIVE": "#bdbdbd", "STOPPED": "#c62828", "RETRYING": "#ef6c00",
    "BINDING": "#fdd835", "INITIALIZING": "#fdd835", "STARTING": "#fdd835", "STOPPING": "#f9a825",
    "PAUSED": "#6a1b9a", "REQUESTING": "#8e24aa",
}
OTHER_STATE_COLOUR = "#757575"
HEALTHY_STATES = frozenset({"RUNNING", "INACTIVE"})  # the first tier of steps 6-9: nothing waits behind these
SOURCE_LABELS = {"accounting": "observed (receiver accounting, all senders)",
                 "observed_destination": "observed (destinations in the put records)"}
# What a not-reallocatable reason means, in words (clwl.replay's not_reallocatable_reason values).
BOUND_BY = {
    "bind-on-open": "opened with bind on open",
    "bind-on-group": "part of a message group",
    "named-qmgr": "put to a named queue manager",
}
MISSED = "on-xmitq-after-delivery"  # a stuck row from a browse: the replay had delivered it


@dataclass
class _Table:
    name: str
    path: str
    frame: pd.DataFrame
    version: int | None = None
    note: str = ""


@dataclass
class _Chart:
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
    """Everything the templates show, built from plain pandas frames (`build_report`)."""

    title: str
    run_date: dt.date
    run_id: str
    generated: str
    whatif: str | None = None
    overrides: dict = field(default_factory=dict)
    beside: TableView | None = None
    warnings: list[str] = field(default_factory=list)
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
    charts: list[_Chart] = field(default_factory=list)
    unexpected: TableView | None = None
    dist_overview: TableView | None = None
    replay_overview: TableView | None = None
    channel_trouble: TableView | None = None
    timeline_trouble: _Chart | None = None
    timeline_rest: _Chart | None = None
    timeline_rest_count: int = 0
    timeline_note: str = ""
    xmitq_chart: _Chart | None = None
    xmitq_table: TableView | None = None
    xmitq_note: str = ""
    summary: list[tuple[str, str, bool]] = field(default_factory=list)  # (field, value, is it bad)
    summary_note: str = ""
    versions: list[tuple[str, str]] = field(default_factory=list)

    @property
    def all_charts(self) -> list[_Chart]:
        return [c for c in [*self.charts, self.timeline_trouble, self.timeline_rest, self.xmitq_chart] if c]


# ------------------------------------------------------------------------------------------------ reading


def _read(spark: Any, path: str, day: dt.date, name: str, *, by_date: bool = True, load: bool = True,
          columns: Sequence[str] | None = None,
          reduce: Callable[[pd.DataFrame], pd.DataFrame] | None = None, version: int | None = None) -> _Table:
    """The run date's rows of a Delta table (load=False: only its version; columns: only those; version: that
    version, else the latest).

    reduce: a summary that adds up across parts of the table (a count cube): it is taken batch by batch and the
    parts combined with `_combine`, so that a table with a row per message is never held whole (at 10M
    messages, reading routing_replay's overview columns into pandas took the driver to 1.8 GiB)."""
    if not is_delta_table(path):
        return _Table(name, path, pd.DataFrame(), None, "not published")
    try:
        t = open_delta(path, version)
        if not load:
            return _Table(name, path, pd.DataFrame(), t.version())
        cols = [f.name for f in t.schema().fields]
        filters = [("run_date", "=", day)] if by_date and "run_date" in cols else None
        wanted = [c for c in columns if c in cols] if columns else None
        if reduce is not None:
            import pyarrow.dataset as pads

            expr = (pads.field("run_date") == pads.scalar(day)) if filters else None
            parts = [reduce(b.to_pandas()) for b in t.to_pyarrow_dataset().to_batches(
                columns=wanted, filter=expr, batch_size=_BATCH_ROWS) if b.num_rows]
            return _Table(name, path, _combine(parts), t.version())
        frame = t.to_pandas(filters=filters, columns=wanted)
        return _Table(name, path, frame, t.version())
    except Exception as exc:
        if spark is None or isinstance(exc, LakeFileError):  # damage: Spark would hang on a FIFO just the same
            raise
        log.warning("report: deltalake could not read %s (%s); reading it with Spark", path, exc)
        from pyspark.sql import functions as F

        version = latest_version(path) if version is None else version
        if version is None:
            from delta.tables import DeltaTable as SparkDeltaTable

            version = int(SparkDeltaTable.forPath(spark, path).history(1).select("version").first()[0])
        if not load:
            return _Table(name, path, pd.DataFrame(), version, "read with Spark")
        df = spark.read.format("delta").option("versionAsOf", version).load(path)
        if by_date and "run_date" in df.columns:
            df = df.where(F.col("run_date") == F.lit(day))
        if columns:
            df = df.select(*[c for c in columns if c in df.columns])
        if reduce is not None:  # batch by batch on the driver too: never the whole table in pandas
            parts, batch = [], []
            for row in df.toLocalIterator():
                batch.append(row.asDict())
                if len(batch) >= _BATCH_ROWS:
                    parts.append(reduce(pd.DataFrame(batch)))
                    batch = []
            if batch:
                parts.append(reduce(pd.DataFrame(batch)))
            return _Table(name, path, _combine(parts), version, "read with Spark")
        return _Table(name, path, df.toPandas(), version, "read with Spark")


_BATCH_ROWS = 1 << 18  # rows per batch when a table is summarised batch by batch (`_read`'s reduce)

# routing_replay's columns the report needs; per batch they become a count cube over CUBE_KEYS.
REPLAY_CUBE_COLS = ("sending_qmgr", "queue", "path", "error", "reallocatable", "held", "held_from", "stay_reason",
                    "agrees", "reallocations", "final_qmgr", "observed_qmgr")
CUBE_KEYS = ("sending_qmgr", "queue", "path", "unroutable", "not_reallocatable", "reallocated", "waited_and_stayed",
             "still_waiting", "final_qmgr", "observed_qmgr", "agrees")
NONE = ""  # a missing key in the cube (groupby drops nulls otherwise)


def _replay_cube(replay: pd.DataFrame) -> pd.DataFrame:
    """Messages per combination of CUBE_KEYS: a few hundred rows for a day of any size."""
    if replay.empty:
        return pd.DataFrame(columns=[*CUBE_KEYS, "messages"])
    n = len(replay)

    def col(name: str, default: Any = None) -> pd.Series:
        return replay[name] if name in replay.columns else pd.Series([default] * n, index=replay.index)

    def text(s: pd.Series) -> pd.Series:
        return s.astype("object").where(s.notna(), NONE).astype(str)

    error = col("error").notna()
    cube = pd.DataFrame({
        "sending_qmgr": text(col("sending_qmgr")), "queue": text(col("queue")), "path": text(col("path")),
        "unroutable": error,
        "not_reallocatable": ~error & (col("reallocatable") == False),  # noqa: E712
        "reallocated": col("reallocations").fillna(0).astype(float) > 0,
        "waited_and_stayed": col("held_from").notna() & col("stay_reason").notna(),
        "still_waiting": col("held") == True,  # noqa: E712
        "final_qmgr": text(col("final_qmgr")).where(~error, "(error)"),
        "observed_qmgr": text(col("observed_qmgr")),
        "agrees": text(col("agrees").map({True: "yes", False: "no"})),
    })
    return cube.groupby(list(CUBE_KEYS), dropna=False).size().rename("messages").reset_index()


def _combine(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """Partial count cubes (`_replay_cube` of parts of a table) added up into one."""
    parts = [p for p in parts if not p.empty]
    if not parts:
        return pd.DataFrame(columns=[*CUBE_KEYS, "messages"])
    return pd.concat(parts).groupby(list(CUBE_KEYS), as_index=False, dropna=False)["messages"].sum()


def read_gold(spark_or_none: Any, config: PipelineConfig, day: dt.date) -> dict[str, _Table]:
    """The run date's rows of the published gold tables, each at the version `<lake>/gold/_published.json` names
    (clwl/published.py), so that all four come from one publish even while another is being written.
    routing_replay comes back as its count cube (`_replay_cube`)."""
    from clwl.published import read_published

    published = read_published(config.lake / "gold")  # read once: one consistent set of versions
    tables: dict[str, _Table] = {}
    for name in GOLD_TABLES:
        path = config.table_path("gold", name)
        if not published.visible(name):  # its first publish has not finished
            tables[name] = _Table(name, path, pd.DataFrame(), None, "not published")
            continue
        per_message = name == "routing_replay"
        tables[name] = _read(spark_or_none, path, day, f"gold.{name}",
                             columns=REPLAY_CUBE_COLS if per_message else None,
                             reduce=_replay_cube if per_message else None, version=published.version(name))
    return tables


def destination_counts(config: PipelineConfig, day: dt.date) -> pd.DataFrame:
    """Messages per (queue, final destination) of ``day`` in the lake's gold routing_replay, at its published
    version (failed puts as destination "(error)"). Two columns of the table, read with deltalake."""
    import pyarrow.compute as pc

    from clwl.published import read_published

    published = read_published(config.lake / "gold")
    path = config.table_path("gold", "routing_replay")
    if not is_delta_table(path) or not published.visible("routing_replay"):
        return pd.DataFrame(columns=["queue", "qmgr", "messages"])
    t = open_delta(path, published.version("routing_replay")).to_pyarrow_table(
        columns=["queue", "final_qmgr"], filters=[("run_date", "=", day)])
    t = t.set_column(1, "qmgr", pc.fill_null(t.column("final_qmgr"), "(error)"))
    return t.group_by(["queue", "qmgr"]).aggregate([("qmgr", "count")]).rename_columns(
        ["queue", "qmgr", "messages"]).to_pandas()


def _fold(spark: Any, path: str, day: dt.date, name: str, columns: Sequence[str],
          where: Sequence[tuple[str, str, Any]], step: Callable[[Any, pd.DataFrame], Any], start: Any, *,
          version: int | None = None) -> tuple[Any, int | None]:
    """``step(state, batch)`` over the run date's rows of a Delta table that match ``where``, batch by batch,
    and the version read: only those rows and columns are ever read. ``where``: (column, op, value) with op
    "=", "in" or "is distinct from" (not equal, or null), pushed down to deltalake's pyarrow dataset (or Spark).
    Of ``columns``, those the table has (an older table lacks some); (None, version) when it lacks a column of
    ``where``, (None, None) when there is no table."""
    if not is_delta_table(path):
        return None, None
    needed = {"run_date", *(c for c, _, _ in where)}
    try:
        import pyarrow.dataset as pads

        t = open_delta(path, version)
        present = {f.name for f in t.schema().fields}
        if not needed <= present:
            return None, t.version()
        columns = [c for c in columns if c in present]
        expr = pads.field("run_date") == pads.scalar(day)
        for col, op, value in where:
            f = pads.field(col)
            expr &= (f == pads.scalar(value) if op == "=" else f.isin(list(value)) if op == "in"
                     else (f != pads.scalar(value)) | f.is_null())
        state = start
        for batch in t.to_pyarrow_dataset().to_batches(columns=list(columns), filter=expr,
                                                      batch_size=_BATCH_ROWS):
            if batch.num_rows:
                state = step(state, batch.to_pandas())
        return state, t.version()
    except Exception as exc:
        if spark is None or isinstance(exc, LakeFileError):  # damage: Spark would hang on a FIFO just the same
            raise
        log.warning("report: deltalake could not read %s at %s (%s); reading it with Spark", name, path, exc)
        from pyspark.sql import functions as F

        version = latest_version(path) if version is None else version
        reader = spark.read.format("delta")
        df = (reader.option("versionAsOf", version) if version is not None else reader).load(path)
        if not needed <= set(df.columns):
            return None, version
        columns = [c for c in columns if c in df.columns]
        df = df.where(F.col("run_date") == F.lit(day))
        for col, op, value in where:
            c = F.col(col)
            df = df.where(c == F.lit(value) if op == "=" else c.isin(list(value)) if op == "in"
                          else ~c.eqNullSafe(F.lit(value)))
        state, rows = start, []
        for row in df.select(*columns).toLocalIterator():
            rows.append(row.asDict())
            if len(rows) >= _BATCH_ROWS:
                state, rows = step(state, pd.DataFrame(rows, columns=list(columns))), []
        if rows:
            state = step(state, pd.DataFrame(rows, columns=list(columns)))
        return state, version


def read_disagreements(spark: Any, config: PipelineConfig, day: dt.date, *, version: int | None,
                       limit: int = MAX_DISAGREEMENTS) -> tuple[pd.DataFrame, int] | None:
    """The first ``limit`` of the run date's disagreements (routing_replay rows with agrees = false, in the
    query's order) and how many there are, reading only those rows; None for a lake without ``agrees``."""

    def keep_first(state: tuple[pd.DataFrame | None, int], batch: pd.DataFrame):
        kept, n = state
        both = batch if kept is None else pd.concat([kept, batch], ignore_index=True)
        order = [c for c in DISAGREEMENT_ORDER if c in both.columns]
        return both.sort_values(order, kind="stable").head(limit), n + len(batch)

    state, _ = _fold(spark, config.table_path("gold", "routing_replay"), day, "gold.routing_replay",
                     DISAGREEMENT_READ, [("agrees", "=", False)], keep_first, (None, 0), version=version)
    if state is None:
        return None
    kept, n = state
    return (kept if kept is not None else pd.DataFrame(columns=list(DISAGREEMENT_READ))).reset_index(drop=True), n


PUT_OPERATIONS = ("MQPUT", "MQPUT1")


def low_trace_puts(spark: Any, config: PipelineConfig, day: dt.date) -> tuple[int, int | None]:
    """How many of the run date's traced puts were traced at LOW (bronze.activity_operations), and the
    table's version (None: no such table). Counted as the ingest makes put events of them: verbose form,
    completion code not MQCC_FAILED; a summary-form put gives no event, so it is not replayed at all."""
    n, version = _fold(spark, config.table_path("bronze", "activity_operations"), day,
                       "bronze.activity_operations", ("position",),
                       [("trace_level", "=", "low"), ("operation", "in", PUT_OPERATIONS), ("form", "=", "verbose"),
                        ("comp_code", "is distinct from", "MQCC_FAILED")],
                       lambda total, batch: total + len(batch), 0)
    return int(n or 0), version


def whatif_beside_published(published: pd.DataFrame, whatif: pd.DataFrame) -> pd.DataFrame:
    """Per queue and destination: the published day's count and share beside the what-if's, and the change."""
    both = published.merge(whatif, on=["queue", "qmgr"], how="outer", suffixes=("_published", "_whatif"))
    both = both.fillna({"messages_published": 0, "messages_whatif": 0})
    for side in ("published", "whatif"):
        n = both[f"messages_{side}"].astype("int64")
        both[f"messages_{side}"] = n
        totals = both.groupby("queue")[f"messages_{side}"].transform("sum")
        both[f"share_{side}"] = (100.0 * n / totals.where(totals > 0)).round(1).fillna(0.0)
    both["difference"] = both["messages_whatif"] - both["messages_published"]
    return both.sort_values(["queue", "qmgr"]).reset_index(drop=True)


WHATIF_COLS = ("queue", "qmgr", "messages_published", "share_published", "messages_whatif", "share_whatif",
               "difference")


# ------------------------------------------------------------------------------------------------ formatting


def _fmt(v: Any) -> str:
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


def _clock(t: Any) -> str:
    return "" if t is None or pd.isna(t) else pd.Timestamp(t).strftime("%H:%M")


def _pct(part: float, whole: float) -> str:
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
        rows.append([(_fmt(rec[c]), _sort_key(rec[keys[c]] if c in keys else rec[c])) for c in cols])
    return TableView(id, cols, rows, len(frame), empty, frozenset(wrap))


# ------------------------------------------------------------------------------------------------ stuck


def _reason(row: pd.Series) -> str:
    head = str(row["detail"] or "").split(";")[0].strip() if not pd.isna(row["detail"]) else ""
    if _missed(row):
        return f"on the transmission queue after the replay delivered it ({head or row['why']})"
    if row["why"] == "not-reallocatable":
        return f"not re-allocatable: {head}" if head else "not re-allocatable"
    if row["why"] == "still-most-favourable":
        return f"still the most favourable: {head}" if head else "still the most favourable"
    return f"{row['why']}: {head}" if head else str(row["why"])


def _missed(row: pd.Series) -> bool:
    """A row from a browse: seen on a transmission queue although the replay had it delivered (no hold state)."""
    return (pd.isna(row.get("channel_state")) or not row.get("channel_state")) and bool(row.get("observed_on_xmitq"))


def _release(group: pd.DataFrame) -> str:
    """What released the group's messages, or what would."""
    first = group.iloc[0]
    channel, qmgr, queue = first["channel"], first["qmgr"], first["queue"]
    if _missed(first):
        seen = (group["held_from"] + pd.to_timedelta(group["age_seconds"], unit="s")).max()
        return (f"{channel} running again: a browse at {_clock(seen)} still had them on the transmission queue "
                "(the channel failed between status captures)")
    released = group["released_at"]
    if released.notna().all():
        last = released.max()
        return f"released at {_clock(last)} when {channel} ran again"
    if first["why"] == "not-reallocatable":
        head = str(first["detail"] or "").split(";")[0].strip()
        return (f"only {channel} running again: {BOUND_BY.get(head, head)}, they stay bound to {qmgr}"
                if head else f"only {channel} running again")
    return (f"{channel} running again, or another instance of {queue} becoming more favourable than {qmgr} "
            "(they are re-allocated when it does)")


def _released(group: pd.DataFrame) -> str:
    """When the group's messages left the transmission queue, as far as the data says."""
    if _missed(group.iloc[0]):  # not a wait in the replay: all we know is when a browse saw them
        seen = (group["held_from"] + pd.to_timedelta(group["age_seconds"], unit="s")).max()
        return f"unknown: still on the queue at {_clock(seen)} (browse)"
    if group["released_at"].isna().any():
        return STILL_WAITING
    return _clock(group["released_at"].max())


STILL_WAITING = "still waiting at the end of the day"


def _windows(stuck: pd.DataFrame, day_end: pd.Timestamp) -> pd.Series:
    """Per row, the outage window it belongs to: the union of overlapping [held_from, held_from + age] spans of
    its (sending queue manager, channel), as "HH:MM-HH:MM"."""
    spans = pd.DataFrame({
        "key": stuck["sending_qmgr"].astype(str) + "\0" + stuck["channel"].astype(str),
        "start": stuck["held_from"],
        "end": (stuck["held_from"] + pd.to_timedelta(stuck["age_seconds"].fillna(0), unit="s")).fillna(day_end),
    }, index=stuck.index).sort_values(["key", "start"])
    label = pd.Series("", index=stuck.index)
    for _, part in spans.groupby("key", sort=False):
        members: list[Any] = []
        w_start = w_end = None
        for idx, s, e in zip(part.index, part["start"], part["end"]):
            if w_end is not None and s > w_end:
                label[members] = f"{_clock(w_start)}\u2013{_clock(w_end)}"
                members = []
                w_start = w_end = None
            members.append(idx)
            w_start = s if w_start is None else w_start
            w_end = e if w_end is None else max(w_end, e)
        if members:
            label[members] = f"{_clock(w_start)}\u2013{_clock(w_end)}"
    return label


STUCK_GROUP_COLS = ("sending_qmgr", "channel", "qmgr", "channel_state", "window", "reason", "messages", "oldest",
                    "queues", "released", "release", "example_msg_id", "explain")


def annotate_stuck(stuck: pd.DataFrame, day: dt.date) -> pd.DataFrame:
    """The stuck rows with their outage window, reason (why: detail) and kind: waited in the replay and was
    not re-allocatable, waited as still the most favourable, or seen by a browse after the replay delivered it."""
    s = stuck.copy()
    s["held_from"] = pd.to_datetime(s["held_from"], utc=True)
    s["released_at"] = pd.to_datetime(s["released_at"], utc=True)
    s["channel_state"] = s["channel_state"].where(s["channel_state"].notna(), "")
    s["window"] = _windows(s, pd.Timestamp(day, tz="UTC") + pd.Timedelta(days=1))
    s["reason"] = s.apply(_reason, axis=1)
    s["kind"] = ["browse" if _missed(r) else str(r["why"]) for _, r in s.iterrows()]
    s["head"] = [str(d).split(";")[0].strip() if not pd.isna(d) else "" for d in s["detail"]]
    return s.sort_values(["held_from", "msg_id"], kind="stable")


def stuck_groups(stuck: pd.DataFrame, day: dt.date, explain: bool = True) -> pd.DataFrame:
    """The stuck messages grouped by sending queue manager, channel, time window and reason: count, the oldest
    age (h:mm), when they were released or what would release them, and one message id to look at (the one that
    waited longest), with the `clwl explain` command that tells its story (``explain``; not in a what-if report:
    the command reads the published tables)."""
    if stuck.empty:
        return pd.DataFrame(columns=[*STUCK_GROUP_COLS, "oldest_seconds"])
    s = annotate_stuck(stuck, day)
    out = []
    keys = ["sending_qmgr", "channel", "qmgr", "channel_state", "window", "reason"]
    for key, g in s.groupby(keys, sort=False, dropna=False):
        g = g.sort_values("held_from")
        rec = dict(zip(keys, key))
        rec.update(messages=len(g), oldest_seconds=int(g["age_seconds"].max()) if g["age_seconds"].notna().any()
                   else None, queues=", ".join(sorted(g["queue"].dropna().astype(str).unique())),
                   released=_released(g), release=_release(g), example_msg_id=g["msg_id"].iloc[0],
                   explain=f"clwl explain {g['msg_id'].iloc[0]} --date {day.isoformat()}" if explain else "",
                   first=g["held_from"].min())
        rec["oldest"] = hmm(rec["oldest_seconds"])
        out.append(rec)
    groups = pd.DataFrame(out)
    return groups.sort_values(["first", "sending_qmgr", "channel", "messages"],
                              ascending=[True, True, True, False]).reset_index(drop=True)


def _counted(part: pd.DataFrame) -> str:
    """"bind-on-open 11, named-qmgr 3" for a part of the annotated stuck rows."""
    return ", ".join(f"{h or 'no detail'} {n}" for h, n in part["head"].value_counts().items())


def stuck_findings(stuck: pd.DataFrame, groups: pd.DataFrame, day: dt.date) -> list[str]:
    """One sentence per (sending queue manager, channel, window), with the reasons counted inside it."""
    if stuck.empty:
        return [f"No message was stuck on {day.isoformat()}: none waited on a transmission queue behind a channel "
                "that moved nothing."]
    s = annotate_stuck(stuck, day)
    still = int(groups.loc[groups["released"] == STILL_WAITING, "messages"].sum())
    channels = s[["sending_qmgr", "channel"]].drop_duplicates()
    out = [f"{len(s)} messages were stuck on {day.isoformat()} behind {len(channels)} "
           f"channel{'s' if len(channels) != 1 else ''}, the longest for {hmm(s['age_seconds'].max())}; "
           + (f"{still} of them still waiting at the end of the day." if still
              else "none was still waiting at the end of the day.")]
    for (sender, channel, window), g in s.groupby(["sending_qmgr", "channel", "window"], sort=False):
        n = len(g)
        state = next((x for x in g["channel_state"] if x), "")
        parts = []
        bound, favourite, seen = (g[g["kind"] == k] for k in ("not-reallocatable", "still-most-favourable", "browse"))
        if len(bound):
            parts.append(f"{len(bound)} not re-allocatable ({_counted(bound)})")
        if len(favourite):
            parts.append(f"{len(favourite)} with {g['qmgr'].iloc[0]} still the most favourable ({_counted(favourite)})")
        if len(seen):
            last = (seen["held_from"] + pd.to_timedelta(seen["age_seconds"], unit="s")).max()
            parts.append(f"{len(seen)} seen on the transmission queue by the {_clock(last)} browse after the replay "
                         "had delivered them (the channel failed between status captures)")
        waited = g[g["kind"] != "browse"]
        if len(waited) and waited["released_at"].notna().all():
            release = f"released at {_clock(waited['released_at'].max())} when {channel} ran again"
        elif len(waited):
            release = "still waiting at the end of the day: " + _release(waited[waited["released_at"].isna()])
        else:
            release = _release(g)
        out.append(f"{sender} \u2192 {g['qmgr'].iloc[0]} over {channel}{f' ({state})' if state else ''}, "
                   f"{window}: {n} message{'s' if n != 1 else ''} stuck, the oldest for "
                   f"{hmm(g['age_seconds'].max())}: {'; '.join(parts)}. {release[0].upper()}{release[1:]}.")
        if len(out) > MAX_FINDINGS:
            out.append(f"... and more: see the {len(groups)} groups below.")
            break
    return out


STUCK_COLS = ("sending_qmgr", "msg_id", "queue", "qmgr", "channel", "channel_state", "held_from", "released_at",
              "age", "why", "detail", "observed_on_xmitq")


# ------------------------------------------------------------------------------------------------ distribution

DIST_COLS = ("sending_qmgr", "queue", "interval_start", "interval_end", "qmgr", "expected", "observed", "deviation",
             "p_value", "verdict", "explanation", "source")


def distribution_findings(dist: pd.DataFrame) -> list[str]:
    if dist.empty:
        return ["No distribution rows for this run date: no message had an observed destination or receiver "
                "accounting to compare with."]
    verdicts = dist["verdict"].value_counts()
    bad = dist[dist["verdict"] == "unexpected"]
    tested = int(verdicts.get("expected", 0) + verdicts.get("unexpected", 0))
    few = int(verdicts.get("insufficient data", 0))
    if bad.empty:
        return [f"No distribution is unexpected: all {tested} tested destination-intervals are as the "
                f"configuration predicts; {few} had too few messages to test."]
    out = [f"{len(bad)} of {tested} tested destination-intervals are unexpected ({few} more had too few messages "
           "to test); \"expected\" is the replay's count, the explanation says what the configuration and events "
           "account for."]
    for _, r in bad.sort_values(["queue", "interval_start", "qmgr"]).head(MAX_FINDINGS).iterrows():
        who = "all senders (receiver accounting)" if r["sending_qmgr"] == "*" else f"from {r['sending_qmgr']}"
        p = "" if pd.isna(r["p_value"]) else f", p = {r['p_value']:.3g}"
        out.append(f"{r['queue']} {who}, {_clock(r['interval_start'])}\u2013{_clock(r['interval_end'])}: "
                   f"{r['qmgr']} received {int(r['observed'])} against {int(r['expected'])} replayed{p}: "
                   f"{r['explanation']}.")
    if len(bad) > MAX_FINDINGS:
        out.append(f"... and {len(bad) - MAX_FINDINGS} more: see \"Unexpected intervals\" below.")
    return out


MQ_COUNTS = ("traced", "agreed", "disagreed")  # gold.run_summary's counts of MQ's answers (absent in older lakes)


def mq_counts(summary: dict) -> tuple[int, int, int] | None:
    """(traced, agreed, disagreed) from the run summary row, or None when it has not got all three."""
    values = [summary.get(k) for k in MQ_COUNTS] if summary else [None]
    if any(v is None or pd.isna(v) for v in values):
        return None
    traced, agreed, disagreed = (int(v) for v in values)
    return traced, agreed, disagreed


def _cube_counts(cube: pd.DataFrame) -> tuple[int, int, int]:
    """(traced, agreed, disagreed) counted in the replay cube: what run_summary holds, for lakes before it did."""
    if cube.empty:
        return 0, 0, 0
    agreed = int(cube.loc[cube["agrees"] == "yes", "messages"].sum())
    disagreed = int(cube.loc[cube["agrees"] == "no", "messages"].sum())
    return agreed + disagreed, agreed, disagreed


def _puts(n: int) -> str:
    return f"{n} put" if n == 1 else f"{n} puts"


def low_trace_sentence(low_puts: int) -> str:
    """Why some puts have no observed answer: traced at LOW, where no resolved names are printed."""
    has, their = ("has", "its") if low_puts == 1 else ("have", "their")
    return (f"{_puts(low_puts)} {has} no observed answer because {their} trace level was LOW: at LOW the activity "
            "trace prints no resolved queue manager, so the replay ran but could not be checked. Trace those "
            "applications at MEDIUM (TraceLevel=MEDIUM in the mqat.ini AllActivityTrace stanza) or HIGH to have "
            "MQ's answer.")


def agreement_findings(cube: pd.DataFrame, counts: tuple[int, int, int] | None = None,
                       low_puts: int = 0) -> list[str]:
    """The replay against MQ's own answer: how many traced puts agree (counts: run_summary's traced, agreed,
    disagreed; else counted in the cube), where they differ, and why LOW-level puts have no answer."""
    total = int(cube["messages"].sum()) if not cube.empty else 0
    traced, agreed, disagreed = counts if counts is not None else _cube_counts(cube)
    out = []
    if traced:
        head = f"The replay agrees with MQ on {agreed} of {traced} traced puts ({_pct(agreed, traced)})"
        head += (f"; {disagreed} {'disagrees' if disagreed == 1 else 'disagree'}, listed below." if disagreed
                 else ": no disagreement.")
        if total:
            head += f" {traced} of the {total} replayed messages ({_pct(traced, total)}) have MQ's answer."
        out.append(head)
    elif total:
        out.append(f"None of the {total} replayed messages has MQ's answer (an activity trace at MEDIUM or HIGH, "
                   "or a put file's observed_qmgr): the replay cannot be checked against what MQ did.")
    else:
        out.append("No messages were replayed for this run date.")
    if not cube.empty:
        wrong = (cube[cube["agrees"] == "no"].groupby(["sending_qmgr", "queue", "final_qmgr", "observed_qmgr"])
                 ["messages"].sum().sort_values(ascending=False))
        if len(wrong):
            out.append("Where they differ: " + "; ".join(
                f"{s} {q}: replayed {f}, MQ {o}{' over another transmission queue' if f == o else ''} ({int(m)})"
                for (s, q, f, o), m in wrong.head(8).items())
                + (f"; and {len(wrong) - 8} more combinations." if len(wrong) > 8 else "."))
    if low_puts:
        out.append(low_trace_sentence(low_puts))
    return out


# The disagreements table: routing_replay's columns, under the names the `clwl query` below gives them.
DISAGREEMENT_READ = ("sending_qmgr", "msg_id", "put_time", "queue", "final_qmgr", "final_xmitq", "observed_qmgr",
                     "observed_xmitq", "decided_by", "config_time", "trace")
DISAGREEMENT_COLS = ("sending_qmgr", "msg_id", "put_time", "queue", "replay_qmgr", "replay_xmitq", "mq_qmgr",
                     "mq_xmitq", "decided_by", "config_time", "trace")
DISAGREEMENT_ORDER = ["sending_qmgr", "put_time", "msg_id"]  # the order of the query, so "the rest" follow on


def disagreement_query(day: dt.date, whatif: str | None = None) -> str:
    """The `clwl query` (docs/tables.md, "Disagreements, one by one") for one run date: every disagreement."""
    option = f" --whatif {whatif}" if whatif else ""
    return (
        'clwl query "SELECT r.run_date, r.sending_qmgr, r.msg_id, r.put_time, r.queue, r.bind,\n'
        "                   r.final_qmgr AS replay_qmgr, r.final_xmitq AS replay_xmitq,\n"
        "                   r.observed_qmgr AS mq_qmgr, r.observed_xmitq AS mq_xmitq,\n"
        "                   r.decided_by, r.trace, r.reallocations, r.config_time, e.source, e.source_file, "
        "e.position\n"
        "            FROM routing_replay r\n"
        "            LEFT JOIN message_events e\n"
        "              ON e.run_date = r.run_date AND e.sending_qmgr = r.sending_qmgr AND e.msg_id = r.msg_id\n"
        f"            WHERE r.agrees = false AND r.run_date = DATE '{day.isoformat()}'\n"
        f'            ORDER BY r.sending_qmgr, r.put_time"{option}'
    )


def disagreement_view(rows: pd.DataFrame, total: int) -> TableView:
    """The disagreements shown (the first `MAX_DISAGREEMENTS` in query order) out of total."""
    named = rows.rename(columns={"final_qmgr": "replay_qmgr", "final_xmitq": "replay_xmitq",
                                 "observed_qmgr": "mq_qmgr", "observed_xmitq": "mq_xmitq"})
    view = table_view("disagreements", named, DISAGREEMENT_COLS, "The replay agrees with MQ on every traced put.",
                      wrap=("msg_id",), limit=MAX_DISAGREEMENTS)
    view.details = frozenset({"trace"})
    view.total = max(total, len(view.rows))
    return view


def _dist_overview(dist: pd.DataFrame) -> pd.DataFrame:
    if dist.empty:
        return dist
    g = dist.groupby(["queue", "source", "qmgr"], dropna=False).agg(
        expected=("expected", "sum"), observed=("observed", "sum"),
        intervals=("interval_start", "nunique"),
        unexpected=("verdict", lambda v: int((v == "unexpected").sum())),
    ).reset_index()
    return g.sort_values(["queue", "source", "qmgr"])


# ------------------------------------------------------------------------------------------------ configured


def configured_shares(timelines: dict[str, list[Any]], day: dt.date) -> pd.DataFrame:
    """Per sending queue manager, queue and destination, the configuration in force at the end of the run date
    and the share it gives each destination with every channel running: among PUT(ENABLED) instances, the local
    one alone when CLWLUSEQ makes it local (step 3); else the highest channel CLWLRANK (4a), queue CLWLRANK (4b),
    not suspended (5), channel CLWLPRTY (11a), queue CLWLPRTY (11b), then shares in proportion to CLWLWGHT (12:
    DestSeqFactor grows by 1000 / CLWLWGHT per choice). Channel state is left out on purpose: the replayed share
    shows what outages did. config_since: from when the queue's configuration stood as shown ("all day" when it
    did not change on the run date); earlier: the configured shares it replaced, with their start."""
    day_start = pd.Timestamp(day, tz="UTC")
    day_end = day_start + pd.Timedelta(days=1)
    rows = []
    for sender, snaps in timelines.items():
        # per queue: [(snapshot time, {qmgr: row})], consecutive equal configurations collapsed
        history: dict[str, list[tuple[pd.Timestamp, dict[str, dict]]]] = {}
        for snap in sorted(snaps, key=lambda sn: sn.time):
            t = pd.Timestamp(snap.time)
            if t >= day_end:
                continue
            for queue, per_qmgr in _snapshot_shares(sender, snap.view).items():
                seq = history.setdefault(queue, [])
                if not seq or seq[-1][1] != per_qmgr:
                    seq.append((t, per_qmgr))
        for seq in history.values():
            since, last = seq[-1]
            for qmgr, row in sorted(last.items()):
                shown: list[str] = []
                last_share = None
                for t, prev in seq[:-1]:
                    share = prev.get(qmgr, {}).get("configured_share")
                    if share is not None and share != last_share:
                        shown.append(f"{share:.1f} % from {max(t, day_start):%H:%M}")
                    last_share = share
                # the same share as now all along: a change elsewhere in the queue's configuration, not worth a note
                same = all(e.startswith(f"{row['configured_share']:.1f} %") for e in shown)
                earlier = "" if same else "; ".join(shown)
                rows.append({**row, "config_since": _since(since, day_start), "earlier": earlier})
    cols = ["sending_qmgr", "queue", "qmgr", "channel", "ch_rank", "q_rank", "ch_prty", "q_prty", "weight",
            "suspended", "put", "configured_share", "config_since", "earlier"]
    return pd.DataFrame(rows, columns=cols) if rows else pd.DataFrame(columns=cols)


def _since(t: pd.Timestamp, day_start: pd.Timestamp) -> str:
    return "all day" if t <= day_start else t.strftime("%H:%M")


def _snapshot_shares(sender: str, view: Any) -> dict[str, dict[str, dict]]:
    """Per queue and destination queue manager: the configured attributes and share in one snapshot's view."""
    channels: dict[str, Any] = {}
    for c in view.channels:  # the best-ranked channel to each queue manager stands for it
        best = channels.get(c.qmgr)
        if best is None or (c.clwlrank, c.clwlprty, c.clwlwght, c.name) > (best.clwlrank, best.clwlprty,
                                                                            best.clwlwght, best.name):
            channels[c.qmgr] = c
    local_weight = max((r.clwlwght for r in view.local_receivers), default=50)
    by_queue: dict[str, list[Any]] = {}
    for inst in view.instances:
        by_queue.setdefault(inst.queue, []).append(inst)
    out: dict[str, dict[str, dict]] = {}
    for queue, insts in by_queue.items():
        cand = []
        for inst in insts:
            local = inst.local or inst.qmgr == view.local_name
            ch = None if local else channels.get(inst.qmgr)
            cand.append(dict(
                sending_qmgr=sender, queue=queue, qmgr=inst.qmgr, local=local,
                local_first=local and (inst.clwluseq == "LOCAL"
                                       or (inst.clwluseq == "QMGR" and view.qmgr.clwluseq == "LOCAL")),
                channel="(local)" if local else (ch.name if ch else ""),
                ch_rank=0 if ch is None else ch.clwlrank, q_rank=inst.clwlrank,
                ch_prty=0 if ch is None else ch.clwlprty, q_prty=inst.clwlprty,
                weight=local_weight if local else (50 if ch is None else ch.clwlwght),
                suspended=bool(ch.suspended) if ch is not None else False,
                put="ENABLED" if inst.put_enabled else "DISABLED"))
        live = [c for c in cand if c["put"] == "ENABLED"]
        chosen = [c for c in live if c["local_first"]] or _keep_best(live)
        total = sum(c["weight"] for c in chosen)
        out[queue] = {}
        for c in cand:
            c["configured_share"] = 100.0 * c["weight"] / total if total and any(c is k for k in chosen) else 0.0
            out[queue][c["qmgr"]] = {k: v for k, v in c.items() if k not in ("local", "local_first")}
    return out


def _keep_best(cands: list[dict]) -> list[dict]:
    """Steps 4a, 4b, 5, 11a, 11b in order (the local instance is never removed by a channel step)."""
    def keep(cs, attr, channel_step):
        scored = [c for c in cs if not (channel_step and c["local"])]
        if not scored:
            return cs
        top = max(c[attr] for c in scored)
        return [c for c in cs if (channel_step and c["local"]) or c[attr] == top]

    cs = keep(cands, "ch_rank", True)
    cs = keep(cs, "q_rank", False)
    if cs and not any(c["local"] for c in cs) and any(not c["suspended"] for c in cs):
        cs = [c for c in cs if not c["suspended"]]
    cs = keep(cs, "ch_prty", True)
    return keep(cs, "q_prty", False)


SHARE_COLS = ("sending_qmgr", "queue", "qmgr", "channel", "put", "suspended", "ch_rank", "q_rank", "ch_prty",
              "q_prty", "weight", "configured", "replayed", "replayed_share", "observed", "observed_share",
              "config_since", "earlier")


def share_table(configured: pd.DataFrame, cube: pd.DataFrame) -> pd.DataFrame:
    """Configured share beside the replayed and the observed share, per sending queue manager, queue and
    destination, for the (sender, queue) pairs that had messages."""
    if cube.empty:
        return pd.DataFrame(columns=SHARE_COLS)
    ok = cube[cube["final_qmgr"] != "(error)"]
    rep = ok.groupby(["sending_qmgr", "queue", "final_qmgr"])["messages"].sum().rename("replayed").reset_index() \
        .rename(columns={"final_qmgr": "qmgr"})
    seen = ok[ok["observed_qmgr"] != NONE]
    obs = seen.groupby(["sending_qmgr", "queue", "observed_qmgr"])["messages"].sum().rename("observed") \
        .reset_index().rename(columns={"observed_qmgr": "qmgr"})
    both = rep.merge(obs, on=["sending_qmgr", "queue", "qmgr"], how="outer")
    pairs = both[["sending_qmgr", "queue"]].drop_duplicates()
    conf = configured.merge(pairs, on=["sending_qmgr", "queue"]) if not configured.empty else configured
    out = both.merge(conf, on=["sending_qmgr", "queue", "qmgr"], how="outer") if not conf.empty else both
    out[["replayed", "observed"]] = out[["replayed", "observed"]].fillna(0).astype("int64")
    for side in ("replayed", "observed"):
        totals = out.groupby(["sending_qmgr", "queue"])[side].transform("sum")
        out[f"{side}_share"] = [_pct(n, t) if t else "" for n, t in zip(out[side], totals)]
    if "configured_share" in out.columns:
        out["configured"] = [("" if pd.isna(v) else f"{v:.1f} %") for v in out["configured_share"]]
    for c in ("ch_rank", "q_rank", "ch_prty", "q_prty", "weight"):
        if c in out.columns:
            out[c] = out[c].astype("Int64")
    return out.sort_values(["queue", "sending_qmgr", "qmgr"]).reset_index(drop=True)


def load_configured(config: PipelineConfig, day: dt.date, overrides: Any = None) -> tuple[pd.DataFrame, str]:
    """The configured shares from the run's configuration timelines (silver, read with deltalake)."""
    try:
        from spark.replay import load_timelines

        timelines = load_timelines(config, day.isoformat(), overrides)
    except Exception as exc:  # the configured columns are left blank; the rest of the report stands
        log.warning("report: configuration timelines not read: %s", exc)
        return pd.DataFrame(), f"the configured weights could not be read ({type(exc).__name__}: {exc})"
    return configured_shares(timelines, day), ""


# ------------------------------------------------------------------------------------------------ replay overview

REPLAY_OVERVIEW = ("queue", "messages", "local", "cluster", "igq", "unroutable", "not_reallocatable", "reallocated",
                   "stuck", "still_waiting_at_day_end", "observed", "agree")


def replay_overview(cube: pd.DataFrame, stuck: pd.DataFrame) -> pd.DataFrame:
    """Per queue: messages, by path, unroutable, not re-allocatable, re-allocated, stuck (the rows of the stuck
    messages table: the same count as its section), of those still waiting at the end of the day, and how many
    observed destinations agree with the replay."""
    if cube.empty:
        return pd.DataFrame(columns=REPLAY_OVERVIEW)
    c = cube.assign(
        local=(cube["path"] == "local") * cube["messages"], cluster=(cube["path"] == "cluster") * cube["messages"],
        igq=(cube["path"] == "igq") * cube["messages"],
        unroutable=cube["unroutable"].astype(bool) * cube["messages"],
        not_reallocatable=cube["not_reallocatable"].astype(bool) * cube["messages"],
        reallocated=cube["reallocated"].astype(bool) * cube["messages"],
        still_waiting_at_day_end=cube["still_waiting"].astype(bool) * cube["messages"],
        observed=(cube["agrees"] != NONE) * cube["messages"], agree=(cube["agrees"] == "yes") * cube["messages"])
    cols = ["messages", "local", "cluster", "igq", "unroutable", "not_reallocatable", "reallocated",
            "still_waiting_at_day_end", "observed", "agree"]
    g = c.groupby("queue")[cols].sum().astype(int)
    per_queue = stuck.groupby("queue").size() if not stuck.empty else pd.Series(dtype=int)
    g["stuck"] = per_queue.reindex(g.index).fillna(0).astype(int)
    return g.reset_index().sort_values(["messages", "queue"], ascending=[False, True])[list(REPLAY_OVERVIEW)]


# ------------------------------------------------------------------------------------------------ charts


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    return buf.getvalue()


def _safe_file(text: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in text)


def _distribution_charts(dist: pd.DataFrame, day: dt.date) -> list[_Chart]:
    """Per queue, the replay's count ("expected") against the observed count per destination. The legend sits
    below the axes (figure legend, constrained layout), so it never covers a bar."""
    from matplotlib.figure import Figure  # the object API: no pyplot, no global state, Agg canvas
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    if dist.empty:
        return []
    charts = []
    totals = dist.groupby("queue")["expected"].sum().sort_values(ascending=False)
    for queue in list(totals.index)[:MAX_QUEUE_CHARTS]:
        q = dist[dist["queue"] == queue]
        sources = sorted(q["source"].dropna().unique())
        fig = Figure(figsize=(max(6.0, 1.6 + 1.2 * q["qmgr"].nunique()) * (1 if len(sources) < 2 else 1.6), 4.2),
                     layout="constrained")
        axes = fig.subplots(1, max(1, len(sources)), squeeze=False)[0]
        handles: dict[str, Any] = {}
        for ax, source in zip(axes, sources or [None]):
            part = q if source is None else q[q["source"] == source]
            if (part["sending_qmgr"] == "*").any():  # receiver accounting for all senders: do not add senders
                part = part[part["sending_qmgr"] == "*"]
            agg = part.groupby("qmgr").agg(expected=("expected", "sum"), observed=("observed", "sum"),
                                           unexpected=("verdict", lambda v: bool((v == "unexpected").any())))
            agg = agg.sort_index()
            x = range(len(agg))
            w = 0.4
            handles["replayed"] = ax.bar([i - w / 2 for i in x], agg["expected"], w,
                                         label="replayed (the replay's count: \"expected\")", color="#1565c0")
            bars = ax.bar([i + w / 2 for i in x], agg["observed"], w, label="observed", color="#90caf9",
                          hatch="//" if source == "accounting" else None)
            handles[SOURCE_LABELS.get(source, "observed")] = bars
            for bar, bad in zip(bars, agg["unexpected"]):
                if bad:
                    bar.set_edgecolor("#c62828")
                    bar.set_linewidth(2)
                    handles["verdict: unexpected"] = Patch(facecolor="white", edgecolor="#c62828", linewidth=2)
            ax.set_xticks(list(x))
            ax.set_xticklabels(list(agg.index))
            ax.set_xlabel("destination queue manager")
            ax.set_ylabel("messages")
            ax.set_title(SOURCE_LABELS.get(source, "") if source else "", fontsize=9)
            ax.set_ylim(0, float(max(agg["expected"].max(), agg["observed"].max(), 1)) * 1.1)
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
            ax.grid(axis="y", alpha=0.3)
        fig.legend(list(handles.values()), [k if k != "replayed" else "replayed (the replay's count: \"expected\")"
                                            for k in handles], loc="outside lower center",
                   ncols=min(3, len(handles)), fontsize=8)
        fig.suptitle(f"{queue}: replayed against observed messages per destination, {day.isoformat()}")
        charts.append(_Chart(f"{queue}", _png(fig), f"distribution_{_safe_file(queue)}.png",
                             f"Bar chart of replayed (expected) against observed messages per destination for "
                             f"{queue}"))
    return charts


_CHANNEL_COLS = ("channel", "channel_name", "chl", "chlname")
_STATE_COLS = ("state", "status", "channel_state", "chstatus")
_START_COLS = ("valid_from", "status_time", "captured_at", "capture_time", "observed_at", "time", "at", "ts")
_END_COLS = ("valid_to", "until", "ended_at")
_QMGR_COLS = ("qmgr", "observing_qmgr", "sending_qmgr", "local_qmgr", "source_qmgr")


def _pick(columns: Iterable[str], names: Sequence[str]) -> str | None:
    lower = {c.lower(): c for c in columns}
    return next((lower[n] for n in names if n in lower), None)


def channel_intervals(status: pd.DataFrame, day: dt.date) -> tuple[pd.DataFrame, str]:
    """The sending channels' state intervals clipped to the run date: label (sender → channel), state, start,
    end; from valid_from/valid_to intervals, or snapshots each holding until the next one."""
    if status.empty:
        return pd.DataFrame(), "no channel status rows for this run date"
    ch, st, start = (_pick(status.columns, n) for n in (_CHANNEL_COLS, _STATE_COLS, _START_COLS))
    if not (ch and st and start):
        return pd.DataFrame(), ("the channel status table has no recognisable channel/state/time columns "
                                f"({', '.join(status.columns)})")
    end, qm = _pick(status.columns, _END_COLS), _pick(status.columns, _QMGR_COLS)
    kind = _pick(status.columns, ("chltype", "channel_type"))
    if kind and status[kind].astype(str).str.upper().str.contains("SDR").any():
        # Sending channels are the ones messages wait behind; receivers would only add rows.
        status = status[status[kind].astype(str).str.upper().str.contains("SDR")]
    day_start = pd.Timestamp(day, tz="UTC")
    day_end = day_start + pd.Timedelta(days=1)
    df = pd.DataFrame({
        "sending_qmgr": status[qm].astype(str) if qm else "",
        "channel": status[ch].astype(str),
        "label": (status[qm].astype(str) + " \u2192 " if qm else "") + status[ch].astype(str),
        "state": status[st].astype(str).str.upper(),
        "start": pd.to_datetime(status[start], utc=True),
        "end": pd.to_datetime(status[end], utc=True) if end else pd.NaT,
    }).dropna(subset=["start"]).sort_values(["label", "start"])
    if not end:  # snapshots: each state holds until the channel's next snapshot
        df["end"] = df.groupby("label")["start"].shift(-1)
    df["end"] = df["end"].fillna(day_end)
    df = df[(df["end"] > day_start) & (df["start"] < day_end)].copy()
    if df.empty:
        return df, "no channel status intervals overlap this run date"
    df["start"] = df["start"].clip(lower=day_start)
    df["end"] = df["end"].clip(upper=day_end)
    return df.reset_index(drop=True), ""


def _timeline_chart(df: pd.DataFrame, day: dt.date, title: str, file: str) -> _Chart:
    """One bar per channel across the run date, coloured by state; the legend outside the axes, at the right."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    day_start = pd.Timestamp(day, tz="UTC")
    labels = list(dict.fromkeys(df["label"]))
    fig = Figure(figsize=(10, 1.2 + 0.32 * len(labels)))
    ax = fig.subplots()
    hours = lambda t: (t - day_start).total_seconds() / 3600.0  # noqa: E731
    for y, label in enumerate(labels):
        rows = df[df["label"] == label]
        ax.broken_barh([(hours(a), max(hours(b) - hours(a), 0.01)) for a, b in zip(rows["start"], rows["end"])],
                       (y - 0.35, 0.7), facecolors=[STATE_COLOURS.get(s, OTHER_STATE_COLOUR) for s in rows["state"]])
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(labels)
    ax.set_ylim(len(labels) - 0.5, -0.5)  # first channel at the top
    ax.set_xlim(0, 24)
    ax.set_xticks(range(0, 25, 2))
    ax.set_xlabel(f"hour of {day.isoformat()} (UTC)")
    ax.set_ylabel("sending queue manager \u2192 channel")
    ax.set_title(title)
    seen = [s for s in STATE_COLOURS if s in set(df["state"])] + sorted(set(df["state"]) - set(STATE_COLOURS))
    ax.legend(handles=[Patch(color=STATE_COLOURS.get(s, OTHER_STATE_COLOUR), label=s) for s in seen],
              loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8, title="state")
    ax.grid(axis="x", alpha=0.3)
    return _Chart(title, _png(fig), file, f"Timeline of channel states over the run date: {title.lower()}")


TROUBLE_COLS = ("sending_qmgr", "channel", "state", "start", "end", "duration", "stuck")


def channel_trouble(intervals: pd.DataFrame, stuck: pd.DataFrame) -> tuple[pd.DataFrame, set[str]]:
    """The intervals in which a sending channel was in a state messages wait behind (not RUNNING or INACTIVE),
    with the stuck messages of that channel; and the labels of every channel with trouble (such an interval,
    or stuck messages)."""
    if intervals.empty:
        return pd.DataFrame(columns=TROUBLE_COLS), set()
    bad = intervals[~intervals["state"].isin(HEALTHY_STATES)].copy()
    per_channel = (stuck.groupby(["sending_qmgr", "channel"]).size() if not stuck.empty
                   else pd.Series(dtype=int))
    bad["duration_seconds"] = (bad["end"] - bad["start"]).dt.total_seconds()
    bad["duration"] = bad["duration_seconds"].map(hmm)
    bad["stuck"] = [int(per_channel.get((s, c), 0)) for s, c in zip(bad["sending_qmgr"], bad["channel"])]
    labels = set(bad["label"])
    if not stuck.empty:
        labels |= {f"{s} \u2192 {c}" for s, c in zip(stuck["sending_qmgr"], stuck["channel"])}
    return bad.sort_values(["start", "label"]).reset_index(drop=True), labels


XMITQ_COLS = ("observing_qmgr", "xmitq", "capture_time", "depth", "by_destination")


def xmitq_depth(contents: pd.DataFrame) -> pd.DataFrame:
    """Messages a browse saw on each transmission queue at each capture, with their destinations."""
    if contents.empty:
        return pd.DataFrame(columns=XMITQ_COLS)
    c = contents.assign(dest=contents.get("remote_qmgr_name", pd.Series("", index=contents.index)).fillna("?"))
    out = []
    for (qm, xq, t), g in c.groupby(["observing_qmgr", "xmitq", "capture_time"], dropna=False):
        by = g["dest"].value_counts()
        out.append(dict(observing_qmgr=qm, xmitq=xq, capture_time=pd.Timestamp(t), depth=len(g),
                        by_destination=", ".join(f"{d} {n}" for d, n in by.items())))
    return pd.DataFrame(out).sort_values(["observing_qmgr", "xmitq", "capture_time"]).reset_index(drop=True)


def _xmitq_chart(depth: pd.DataFrame, day: dt.date) -> _Chart:
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    day_start = pd.Timestamp(day, tz="UTC")
    fig = Figure(figsize=(10, 3.6))
    ax = fig.subplots()
    for (qm, xq), g in depth.groupby(["observing_qmgr", "xmitq"]):
        hours = [(pd.Timestamp(t).tz_convert("UTC") - day_start).total_seconds() / 3600 for t in g["capture_time"]]
        ax.plot(hours, g["depth"], marker="o", label=f"{qm}: {xq}")
    ax.set_xlim(0, 24)
    ax.set_xticks(range(0, 25, 2))
    ax.set_ylim(0, max(1, int(depth["depth"].max())) * 1.1)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(f"hour of {day.isoformat()} (UTC), at each browse")
    ax.set_ylabel("messages on the queue")
    ax.set_title("Transmission queue depth at each browse")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8, title="queue manager: xmitq")
    ax.grid(alpha=0.3)
    return _Chart("Transmission queue depth", _png(fig), "xmitq_depth.png",
                  "Messages on each transmission queue at each browse over the run date")


# ------------------------------------------------------------------------------------------------ run summary

SUMMARY_FIELDS = ("run_id", "run_date", "status", "started_at", "finished_at", "rows_read", "rows_accepted",
                  "rows_quarantined", "messages_replayed", "messages_stuck", "distribution_unexpected",
                  *MQ_COUNTS, "validation_result", "table_versions", "warnings")


def _warnings(summary: dict) -> list[str]:
    """The run summary's warnings (gold.run_summary.warnings, "; "-separated; absent in older tables)."""
    text = _fmt(summary.get("warnings")) if summary else ""
    return [w.strip() for w in text.split("; ") if w.strip()]


def _summary_row(summary: pd.DataFrame, run_id: str) -> tuple[dict, str]:
    if summary.empty:
        return {}, "no run summary published for this run date"
    mine = summary[summary["run_id"] == run_id] if "run_id" in summary.columns else summary.iloc[0:0]
    if not mine.empty:
        return mine.iloc[0].to_dict(), ""
    latest = summary.sort_values("started_at" if "started_at" in summary.columns else summary.columns[0]).iloc[-1]
    return latest.to_dict(), f"run {run_id} has no published summary; showing the latest published run of this date"


# ------------------------------------------------------------------------------------------------ the report


def build_report(run_date: dt.date, run_id: str, *, routing_cube: pd.DataFrame, stuck: pd.DataFrame,
                 distribution: pd.DataFrame, run_summary: pd.DataFrame, channel_status: pd.DataFrame | None = None,
                 channel_note: str = "", xmitq_contents: pd.DataFrame | None = None, xmitq_note: str = "",
                 configured: pd.DataFrame | None = None, configured_note: str = "",
                 versions: Sequence[tuple[str, str]] = (), validation_root: Path | None = None,
                 whatif: str | None = None, overrides: dict | None = None,
                 beside: pd.DataFrame | None = None, disagreements: pd.DataFrame | None = None,
                 disagreement_total: int | None = None, low_puts: int = 0) -> Report:
    """The report from plain frames: routing_cube is `_replay_cube` of routing_replay (batches `_combine`d),
    the others the run date's rows of their tables. disagreements: the first routing_replay rows with agrees =
    false (`read_disagreements`), of disagreement_total (default: as many as given); low_puts: the run date's
    puts traced at LOW (`low_trace_puts`)."""
    day = run_date
    title = (f"CLWL what-if report: {whatif}, {day.isoformat()}" if whatif
             else f"CLWL replay report: {day.isoformat()}")
    rep = Report(title, day, run_id, dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%SZ"),
                 whatif=whatif, overrides=overrides or {})
    if beside is not None:
        rep.beside = table_view("whatif", beside, WHATIF_COLS, "No messages on either side.")
    summary, rep.summary_note = _summary_row(run_summary, run_id)
    rep.warnings = _warnings(summary)

    # Stuck messages: grouped first, every row behind a disclosure.
    stuck = stuck.copy()
    if not stuck.empty:
        stuck["age"] = stuck["age_seconds"].map(hmm)
    groups = stuck_groups(stuck, day, explain=whatif is None)
    rep.stuck_total = len(stuck)
    rep.findings_stuck = stuck_findings(stuck, groups, day)
    rep.stuck_groups = table_view("stuck-groups", groups, STUCK_GROUP_COLS, "No stuck messages.",
                                  wrap=("reason", "release", "queues", "example_msg_id", "explain"),
                                  keys={"oldest": "oldest_seconds"})
    ordered = stuck.sort_values(["held_from", "msg_id"]) if "held_from" in stuck.columns else stuck
    rep.stuck_rows = table_view("stuck-rows", ordered, STUCK_COLS, "No stuck messages.",
                                wrap=("msg_id", "why", "detail"), keys={"age": "age_seconds"})

    # Distribution: findings, configured beside replayed beside observed, charts, the unexpected intervals.
    rep.findings_distribution = distribution_findings(distribution)
    # MQ's answer: the counts from the run summary (older lakes: the cube), every disagreement listed.
    counts = mq_counts(summary)
    rep.findings_agreement = agreement_findings(routing_cube, counts, low_puts)
    if disagreements is not None and not disagreements.empty:
        total = len(disagreements) if disagreement_total is None else disagreement_total
        rep.disagreements = disagreement_view(disagreements, total)
        rep.disagreement_query = disagreement_query(day, whatif)
    elif (counts or _cube_counts(routing_cube))[2]:  # counted but not read (a lake without the columns)
        rep.disagreement_query = disagreement_query(day, whatif)
    shares = share_table(configured if configured is not None else pd.DataFrame(), routing_cube)
    rep.shares = table_view("shares", shares, SHARE_COLS, "No messages replayed for this run date.",
                            limit=MAX_TABLE_ROWS * 2)
    rep.shares_note = configured_note
    rep.charts = _distribution_charts(distribution, day)
    flagged = distribution[distribution["verdict"] == "unexpected"] if not distribution.empty else distribution
    rep.unexpected = table_view("unexpected", flagged, DIST_COLS, "No interval was flagged as unexpected.",
                                wrap=("explanation",))
    rep.dist_overview = table_view("dist-overview", _dist_overview(distribution),
                                   ("queue", "source", "qmgr", "expected", "observed", "intervals", "unexpected"),
                                   "No distribution rows for this run date.")

    rep.replay_overview = table_view("replay", replay_overview(routing_cube, stuck), REPLAY_OVERVIEW,
                                     "No messages replayed for this run date.")

    # Channels: trouble first, the rest collapsed; transmission queue depth where browses exist.
    rep.timeline_note = channel_note
    if channel_status is not None and not rep.timeline_note:
        try:
            intervals, rep.timeline_note = channel_intervals(channel_status, day)
            trouble, labels = channel_trouble(intervals, stuck)
            rep.channel_trouble = table_view("channel-trouble", trouble, TROUBLE_COLS,
                                             "No sending channel was in a state messages wait behind.",
                                             keys={"duration": "duration_seconds"})
            if not intervals.empty:
                bad = intervals[intervals["label"].isin(labels)]
                rest = intervals[~intervals["label"].isin(labels)]
                if not bad.empty:
                    rep.timeline_trouble = _timeline_chart(bad.sort_values(["label", "start"]), day,
                                                           "Channels with trouble", "channel_states_trouble.png")
                if not rest.empty:
                    rep.timeline_rest = _timeline_chart(rest.sort_values(["label", "start"]), day,
                                                        "Other sending channels", "channel_states_other.png")
                    rep.timeline_rest_count = rest["label"].nunique()
        except Exception as exc:  # the timeline is optional; the rest of the report stands
            log.warning("report: channel state timeline skipped: %s", exc)
            rep.timeline_note = f"channel state timeline skipped: {exc}"
    elif not rep.timeline_note:
        rep.timeline_note = "no channel status table"
    rep.xmitq_note = xmitq_note
    if xmitq_contents is not None and not xmitq_contents.empty:
        depth = xmitq_depth(xmitq_contents)
        rep.xmitq_chart = _xmitq_chart(depth, day)
        rep.xmitq_table = table_view("xmitq", depth, XMITQ_COLS, "", wrap=("by_destination",))
    elif not rep.xmitq_note:
        rep.xmitq_note = "no transmission queue browse for this run date"

    # The technical run summary, last.
    if summary:
        if whatif:  # written under whatif/<name>: never the published status
            summary = {**summary, "status": f"what-if {whatif} (not published)"}
        if not _fmt(summary.get("validation_result")):  # written before validation ran: say where it is
            where = (validation_root / str(summary.get("run_id")) / day.isoformat()
                     if validation_root is not None else None)
            summary["validation_result"] = str(where) if where is not None and where.exists() else "not recorded"
        status = _fmt(summary.get("status"))
        rep.summary = [(k, _fmt(summary.get(k)), k == "status" and status != "published")
                       for k in SUMMARY_FIELDS if k in summary]
    rep.versions = list(versions)
    return rep


def _environment(markdown: bool):
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), undefined=jinja2.StrictUndefined,
                             autoescape=not markdown, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True)
    env.filters["md"] = lambda v: str(v).replace("|", "\\|").replace("\n", " ")
    env.filters["json"] = lambda v: json.dumps(v, sort_keys=True)
    return env


def render_html(rep: Report) -> str:
    return _environment(markdown=False).get_template("report.html.j2").render(rep=rep)


def render_md(rep: Report) -> str:
    return _environment(markdown=True).get_template("summary.md.j2").render(rep=rep)


def write_report(spark_or_none: Any, config: PipelineConfig, run_date: dt.date | str, run_id: str, *,
                 channel_status: str | Path | None = None, whatif: Any = None,
                 published: PipelineConfig | None = None) -> tuple[Path, Path]:
    """Write `<reports>/<run_date>/report.html` and `summary.md` from the published gold tables.

    channel_status: the channel status timeline table (default `<lake>/silver/channel_status`); the timeline
    is left out, with a note, when it is absent or has no usable columns. whatif (a clwl.whatif.WhatIf) and
    published (the main lake's configuration): a what-if run's report, titled as one, listing its overrides and
    showing the published day beside it. The silver tables (configuration, browses) are the main lake's.
    """
    day = run_date if isinstance(run_date, dt.date) else dt.date.fromisoformat(str(run_date))
    gold = read_gold(spark_or_none, config, day)
    silver = published if published is not None else config  # a what-if folder has no silver of its own
    beside = None
    if whatif is not None and published is not None:
        beside = whatif_beside_published(destination_counts(published, day), destination_counts(config, day))
    cs_path = str(channel_status) if channel_status is not None else silver.table_path("silver", "channel_status")
    cs = _read(spark_or_none, cs_path, day, "silver.channel_status", by_date=False)
    xq_path = silver.table_path("silver", "xmitq_contents")
    try:
        xq = _read(None, xq_path, day, "silver.xmitq_contents",
                   columns=("run_date", "observing_qmgr", "capture_time", "xmitq", "remote_qmgr_name"))
        xq_note = "no transmission queue browses in this lake" if xq.note == "not published" else ""
    except Exception as exc:
        xq, xq_note = _Table("silver.xmitq_contents", xq_path, pd.DataFrame()), f"browses not read: {exc}"
    configured, configured_note = load_configured(silver, day, whatif.apply if whatif is not None else None)
    tables = [*gold.values(), cs] + ([xq] if xq.version is not None else [])
    versions = [(t.name, "not published" if t.version is None else f"version {t.version}") for t in tables]
    # Only the disagreeing rows of routing_replay, at the version the cube came from; none read when the
    # published counts say there are none.
    replay = gold["routing_replay"]
    counts = mq_counts(_summary_row(gold["run_summary"].frame, run_id)[0])
    wrong = None
    if replay.version is not None and (counts is None or counts[2] > 0):
        wrong = read_disagreements(spark_or_none, config, day, version=replay.version)
    try:
        low, ops_version = low_trace_puts(spark_or_none, silver, day)
        if ops_version is not None:
            versions.append(("bronze.activity_operations", f"version {ops_version}"))
    except Exception as exc:  # only the LOW sentence depends on it; the rest of the report stands
        log.warning("report: bronze.activity_operations not read: %s", exc)
        low = 0
        versions.append(("bronze.activity_operations", f"not read ({exc}): puts traced at LOW not counted"))
    rep = build_report(
        day, run_id, routing_cube=gold["routing_replay"].frame, stuck=gold["stuck_messages"].frame,
        distribution=gold["distribution"].frame, run_summary=gold["run_summary"].frame,
        channel_status=None if cs.note == "not published" else cs.frame,
        channel_note=f"no channel status table at {cs_path}" if cs.note == "not published" else "",
        xmitq_contents=xq.frame, xmitq_note=xq_note, configured=configured, configured_note=configured_note,
        versions=versions, validation_root=config.lake / "validation",
        whatif=whatif.name if whatif is not None else None,
        overrides=whatif.overrides() if whatif is not None else None, beside=beside,
        disagreements=wrong[0] if wrong else None, disagreement_total=wrong[1] if wrong else None, low_puts=low)

    out = config.reports / day.isoformat()
    out.mkdir(parents=True, exist_ok=True)
    charts_dir = out / "charts"
    for c in rep.all_charts:
        charts_dir.mkdir(exist_ok=True)
        (charts_dir / c.file).write_bytes(c.png)
    html_path, md_path = out / "report.html", out / "summary.md"
    html_path.write_text(render_html(rep), encoding="utf-8")
    md_path.write_text(render_md(rep), encoding="utf-8")
    return html_path, md_path
