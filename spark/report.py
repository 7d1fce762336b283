"""The report people read: `<reports>/<run_date>/report.html` (self-contained, charts embedded as base64 PNG)
and `summary.md` (Markdown, with the same charts as PNG files beside it).

It reads the published gold tables with the `deltalake` package and pandas, so it needs no JVM; when a Spark
session is given it is used only if deltalake cannot read a table. The Delta version of every table read is
printed in the report, so the report can be reproduced by time travel.
"""

from __future__ import annotations

import base64
import datetime as dt
import html
import io
import json
import logging
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import pandas as pd

from clwl.lake import GOLD_TABLES, is_delta_table, latest_version
from spark.config import PipelineConfig

log = logging.getLogger(__name__)

MAX_TABLE_ROWS = 200  # rows of a table shown in the report; the rest are counted, and `clwl query` has them all
MAX_QUEUE_CHARTS = 30

STATE_COLOURS = {
    "RUNNING": "#2e7d32", "INACTIVE": "#bdbdbd", "STOPPED": "#c62828", "RETRYING": "#ef6c00",
    "BINDING": "#fdd835", "INITIALIZING": "#fdd835", "STARTING": "#fdd835", "STOPPING": "#f9a825",
    "PAUSED": "#6a1b9a", "REQUESTING": "#8e24aa",
}
OTHER_STATE_COLOUR = "#757575"
SOURCE_LABELS = {"accounting": "observed (amqsmon accounting)", "observed_destination": "observed (destinations)"}


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


@dataclass
class _Report:
    run_date: dt.date
    run_id: str
    tables: dict[str, _Table] = field(default_factory=dict)
    charts: list[_Chart] = field(default_factory=list)
    timeline: _Chart | None = None
    timeline_note: str = ""
    whatif: str | None = None  # the what-if's name, for a what-if run's report
    overrides: dict = field(default_factory=dict)
    beside: pd.DataFrame | None = None  # per queue and destination: published against what-if


# ------------------------------------------------------------------------------------------------ reading


def _read(spark: Any, path: str, day: dt.date, name: str, *, by_date: bool = True, load: bool = True,
          columns: Sequence[str] | None = None,
          reduce: Callable[[pd.DataFrame], pd.DataFrame] | None = None, version: int | None = None) -> _Table:
    """The run date's rows of a Delta table (load=False: only its version; columns: only those; version: that
    version, else the latest).

    reduce: a summary that adds up across parts of the table (e.g. counts per queue): it is taken batch by batch
    and the parts combined with `_combine`, so that a table with a row per message is never held whole (at 10M
    messages, reading routing_replay's overview columns into pandas took the driver to 1.8 GiB)."""
    if not is_delta_table(path):
        return _Table(name, path, pd.DataFrame(), None, "not published")
    try:
        from deltalake import DeltaTable

        t = DeltaTable(path, version=version)
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
        if spark is None:
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
        frame = df.toPandas()
        return _Table(name, path, _combine([reduce(frame)]) if reduce is not None else frame, version,
                      "read with Spark")


_BATCH_ROWS = 1 << 18  # rows per batch when a table is summarised batch by batch (`_read`'s reduce)


def _combine(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """Partial per-queue summaries (`_replay_overview` of parts of a table) added up into one."""
    parts = [p for p in parts if not p.empty]
    if not parts:
        return pd.DataFrame()
    total = pd.concat(parts).groupby("queue", as_index=False).sum()
    return total.sort_values(["messages", "queue"], ascending=[False, True]).reset_index(drop=True)


# ------------------------------------------------------------------------------------------------ charts


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    return buf.getvalue()


def _safe_file(text: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in text)


def _distribution_charts(dist: pd.DataFrame, day: dt.date) -> list[_Chart]:
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
        fig = Figure(figsize=(max(6.0, 1.6 + 1.2 * q["qmgr"].nunique()) * (1 if len(sources) < 2 else 1.6), 4.2))
        axes = fig.subplots(1, max(1, len(sources)), squeeze=False)[0]
        for ax, source in zip(axes, sources or [None]):
            part = q if source is None else q[q["source"] == source]
            if (part["sending_qmgr"] == "*").any():  # receiver accounting for all senders: do not add senders
                part = part[part["sending_qmgr"] == "*"]
            agg = part.groupby("qmgr").agg(expected=("expected", "sum"), observed=("observed", "sum"),
                                           unexpected=("verdict", lambda v: bool((v == "unexpected").any())))
            agg = agg.sort_index()
            x = range(len(agg))
            w = 0.4
            ax.bar([i - w / 2 for i in x], agg["expected"], w, label="expected (replay)", color="#1565c0")
            bars = ax.bar([i + w / 2 for i in x], agg["observed"], w,
                          label=SOURCE_LABELS.get(source, "observed"), color="#90caf9")
            for i, (bar, bad) in enumerate(zip(bars, agg["unexpected"])):
                if bad:
                    bar.set_edgecolor("#c62828")
                    bar.set_linewidth(2)
                    ax.annotate("unexpected", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                                ha="center", va="bottom", color="#c62828", fontsize=8)
            ax.set_xticks(list(x))
            ax.set_xticklabels(list(agg.index))
            ax.set_xlabel("destination queue manager")
            ax.set_ylabel("messages")
            ax.set_title(f"source: {source}" if source else "", fontsize=9)
            top = float(max(agg["expected"].max(), agg["observed"].max(), 1))
            ax.set_ylim(0, top * 1.35)  # headroom for the legend and the "unexpected" marks
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
            handles, _ = ax.get_legend_handles_labels()
            if agg["unexpected"].any():
                handles.append(Patch(facecolor="white", edgecolor="#c62828", linewidth=2,
                                     label="verdict: unexpected"))
            ax.legend(handles=handles, loc="upper left", fontsize=8, ncols=2 if len(agg) < 4 else 1)
            ax.grid(axis="y", alpha=0.3)
        fig.suptitle(f"{queue}: expected vs observed messages per destination, {day.isoformat()}")
        charts.append(_Chart(f"{queue}", _png(fig), f"distribution_{_safe_file(queue)}.png",
                             f"Bar chart of expected against observed messages per destination for {queue}"))
    return charts


_CHANNEL_COLS = ("channel", "channel_name", "chl", "chlname")
_STATE_COLS = ("state", "status", "channel_state", "chstatus")
_START_COLS = ("valid_from", "status_time", "captured_at", "capture_time", "observed_at", "time", "at", "ts")
_END_COLS = ("valid_to", "until", "ended_at")
_QMGR_COLS = ("qmgr", "observing_qmgr", "sending_qmgr", "local_qmgr", "source_qmgr")


def _pick(columns: Iterable[str], names: Sequence[str]) -> str | None:
    lower = {c.lower(): c for c in columns}
    return next((lower[n] for n in names if n in lower), None)


def _timeline_chart(status: pd.DataFrame, day: dt.date) -> tuple[_Chart | None, str]:
    """One bar per channel across the run date, coloured by state: from the channel status timeline
    (valid_from/valid_to intervals, or snapshots each holding until the next one)."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    if status.empty:
        return None, "no channel status rows for this run date"
    ch, st, start = (_pick(status.columns, n) for n in (_CHANNEL_COLS, _STATE_COLS, _START_COLS))
    if not (ch and st and start):
        return None, ("the channel status table has no recognisable channel/state/time columns "
                      f"({', '.join(status.columns)})")
    end, qm = _pick(status.columns, _END_COLS), _pick(status.columns, _QMGR_COLS)
    kind = _pick(status.columns, ("chltype", "channel_type"))
    if kind and status[kind].astype(str).str.upper().str.contains("SDR").any():
        # Sending channels are the ones messages wait behind; receivers would only add rows.
        status = status[status[kind].astype(str).str.upper().str.contains("SDR")]
    day_start = pd.Timestamp(day, tz="UTC")
    day_end = day_start + pd.Timedelta(days=1)
    df = pd.DataFrame({
        "label": (status[qm].astype(str) + " \u2192 " if qm else "") + status[ch].astype(str),
        "state": status[st].astype(str).str.upper(),
        "start": pd.to_datetime(status[start], utc=True),
        "end": pd.to_datetime(status[end], utc=True) if end else pd.NaT,
    }).dropna(subset=["start"]).sort_values(["label", "start"])
    if not end:  # snapshots: each state holds until the channel's next snapshot
        df["end"] = df.groupby("label")["start"].shift(-1)
    df["end"] = df["end"].fillna(day_end)
    df = df[(df["end"] > day_start) & (df["start"] < day_end)]
    if df.empty:
        return None, "no channel status intervals overlap this run date"
    df["start"] = df["start"].clip(lower=day_start)
    df["end"] = df["end"].clip(upper=day_end)
    labels = sorted(df["label"].unique())
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
    ax.set_ylabel("sending queue manager \u2192 channel" if qm else "channel")
    ax.set_title(f"Channel states, {day.isoformat()}")
    seen = [s for s in STATE_COLOURS if s in set(df["state"])] + sorted(set(df["state"]) - set(STATE_COLOURS))
    ax.legend(handles=[Patch(color=STATE_COLOURS.get(s, OTHER_STATE_COLOUR), label=s) for s in seen],
              loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8, title="state")
    ax.grid(axis="x", alpha=0.3)
    return _Chart("Channel state timeline", _png(fig), "channel_states.png",
                  "Timeline of channel states over the run date"), ""


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


def _rows(frame: pd.DataFrame, columns: Sequence[str]) -> tuple[list[str], list[list[str]], int]:
    cols = [c for c in columns if c in frame.columns]
    shown = frame.head(MAX_TABLE_ROWS)
    return cols, [[_fmt(v) for v in rec] for rec in shown[cols].itertuples(index=False, name=None)], len(frame)


def _html_table(frame: pd.DataFrame, columns: Sequence[str], empty: str) -> str:
    cols, rows, total = _rows(frame, columns)
    if not rows:
        return f"<p class='muted'>{html.escape(empty)}</p>"
    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(v)}</td>" for v in r) + "</tr>" for r in rows)
    more = f"<p class='muted'>{total - len(rows)} more rows not shown.</p>" if total > len(rows) else ""
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}"


def _md_cell(v: str) -> str:
    return v.replace("|", "\\|").replace("\n", " ")


def _md_table(frame: pd.DataFrame, columns: Sequence[str], empty: str) -> str:
    cols, rows, total = _rows(frame, columns)
    if not rows:
        return f"_{empty}_\n"
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    out += ["| " + " | ".join(_md_cell(v) for v in r) + " |" for r in rows]
    if total > len(rows):
        out.append(f"\n_{total - len(rows)} more rows not shown._")
    return "\n".join(out) + "\n"


STUCK_COLS = ("sending_qmgr", "msg_id", "queue", "qmgr", "channel", "channel_state", "held_from", "released_at",
              "age_seconds", "why", "detail", "observed_on_xmitq")
DIST_COLS = ("sending_qmgr", "queue", "interval_start", "interval_end", "qmgr", "expected", "observed", "deviation",
             "p_value", "verdict", "explanation", "source")
SUMMARY_FIELDS = ("run_id", "run_date", "status", "started_at", "finished_at", "rows_read", "rows_accepted",
                  "rows_quarantined", "messages_replayed", "messages_stuck", "distribution_unexpected",
                  "validation_result", "table_versions", "warnings")


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


REPLAY_OVERVIEW_COLS = ("queue", "path", "error", "reallocatable", "held", "agrees", "reallocations")


def _replay_overview(replay: pd.DataFrame) -> pd.DataFrame:
    """Per queue: messages, by path, unroutable, not re-allocatable, re-allocated, still held, and how many
    observed destinations agree with the replay."""
    if replay.empty:
        return replay
    r = replay.assign(
        local=replay["path"] == "local", cluster=replay["path"] == "cluster", igq=replay["path"] == "igq",
        unroutable=replay["error"].notna(),
        not_reallocatable=replay["error"].isna() & (replay["reallocatable"] == False),  # noqa: E712
        reallocated=replay["reallocations"].fillna(0) > 0, still_held=replay["held"] == True,  # noqa: E712
        observed=replay["agrees"].notna(), agree=replay["agrees"] == True,  # noqa: E712
    )
    cols = ["local", "cluster", "igq", "unroutable", "not_reallocatable", "reallocated", "still_held", "observed",
            "agree"]
    g = r.groupby("queue")[cols].sum().astype(int)
    g.insert(0, "messages", r.groupby("queue").size())
    return g.reset_index().sort_values("messages", ascending=False)


REPLAY_OVERVIEW = ("queue", "messages", "local", "cluster", "igq", "unroutable", "not_reallocatable", "reallocated",
                   "still_held", "observed", "agree")


def _dist_overview(dist: pd.DataFrame) -> pd.DataFrame:
    if dist.empty:
        return dist
    g = dist.groupby(["queue", "source", "qmgr"], dropna=False).agg(
        expected=("expected", "sum"), observed=("observed", "sum"),
        intervals=("interval_start", "nunique"),
        unexpected=("verdict", lambda v: int((v == "unexpected").sum())),
    ).reset_index()
    return g.sort_values(["queue", "source", "qmgr"])


# ------------------------------------------------------------------------------------------------ main


def read_gold(spark_or_none: Any, config: PipelineConfig, day: dt.date) -> dict[str, _Table]:
    """The run date's rows of the published gold tables, each at the version `<lake>/gold/_published.json` names
    (clwl/published.py), so that all four come from one publish even while another is being written."""
    from clwl.published import read_published

    published = read_published(config.lake / "gold")  # read once: one consistent set of versions
    tables: dict[str, _Table] = {}
    for name in GOLD_TABLES:
        path = config.table_path("gold", name)
        if not published.visible(name):  # its first publish has not finished
            tables[name] = _Table(name, path, pd.DataFrame(), None, "not published")
            continue
        # routing_replay has a row per message: only the columns of the overview are read, and only its per-queue
        # overview is kept.
        per_message = name == "routing_replay"
        tables[name] = _read(spark_or_none, path, day, f"gold.{name}",
                             columns=REPLAY_OVERVIEW_COLS if per_message else None,
                             reduce=_replay_overview if per_message else None, version=published.version(name))
    return tables


def destination_counts(config: PipelineConfig, day: dt.date) -> pd.DataFrame:
    """Messages per (queue, final destination) of ``day`` in the lake's gold routing_replay, at its published
    version (failed puts as destination "(error)"). Two columns of the table, read with deltalake."""
    import pyarrow.compute as pc
    from deltalake import DeltaTable

    from clwl.published import read_published

    published = read_published(config.lake / "gold")
    path = config.table_path("gold", "routing_replay")
    if not is_delta_table(path) or not published.visible("routing_replay"):
        return pd.DataFrame(columns=["queue", "qmgr", "messages"])
    t = DeltaTable(path, version=published.version("routing_replay")).to_pyarrow_table(
        columns=["queue", "final_qmgr"], filters=[("run_date", "=", day)])
    t = t.set_column(1, "qmgr", pc.fill_null(t.column("final_qmgr"), "(error)"))
    return t.group_by(["queue", "qmgr"]).aggregate([("qmgr", "count")]).rename_columns(
        ["queue", "qmgr", "messages"]).to_pandas()


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


def write_report(spark_or_none: Any, config: PipelineConfig, run_date: dt.date | str, run_id: str, *,
                 channel_status: str | Path | None = None, whatif: Any = None,
                 published: PipelineConfig | None = None) -> tuple[Path, Path]:
    """Write `<reports>/<run_date>/report.html` and `summary.md` from the published gold tables.

    channel_status: the channel status timeline table (default `<lake>/silver/channel_status`); the timeline
    is left out, with a note, when it is absent or has no usable columns. whatif (a clwl.whatif.WhatIf) and
    published (the main lake's configuration): a what-if run's report, titled as one, listing its overrides and
    showing the published day beside it.
    """
    day = run_date if isinstance(run_date, dt.date) else dt.date.fromisoformat(str(run_date))
    rep = _Report(day, run_id)
    rep.tables.update(read_gold(spark_or_none, config, day))
    if whatif is not None:
        rep.whatif, rep.overrides = whatif.name, whatif.overrides()
        if published is not None:
            rep.beside = whatif_beside_published(destination_counts(published, day), destination_counts(config, day))
    cs_path = str(channel_status) if channel_status is not None else config.table_path("silver", "channel_status")
    cs = _read(spark_or_none, cs_path, day, "silver.channel_status", by_date=False)
    if cs.note == "not published":
        rep.timeline_note = f"no channel status table at {cs_path}"
    else:
        rep.tables["channel_status"] = cs
        try:
            rep.timeline, rep.timeline_note = _timeline_chart(cs.frame, day)
        except Exception as exc:  # the timeline is optional; the rest of the report stands
            log.warning("report: channel state timeline skipped: %s", exc)
            rep.timeline_note = f"channel state timeline skipped: {exc}"
    rep.charts = _distribution_charts(rep.tables["distribution"].frame, day)

    out = config.reports / day.isoformat()
    out.mkdir(parents=True, exist_ok=True)
    charts_dir = out / "charts"
    for c in rep.charts + ([rep.timeline] if rep.timeline else []):
        charts_dir.mkdir(exist_ok=True)
        (charts_dir / c.file).write_bytes(c.png)
    html_path, md_path = out / "report.html", out / "summary.md"
    html_path.write_text(_render_html(rep), encoding="utf-8")
    md_path.write_text(_render_md(rep), encoding="utf-8")
    return html_path, md_path


def _facts(rep: _Report) -> tuple[dict, str, list[tuple[str, str]]]:
    summary, note = _summary_row(rep.tables["run_summary"].frame, rep.run_id)
    versions = [(t.name, "not published" if t.version is None else f"version {t.version}")
                for t in rep.tables.values()]
    return summary, note, versions


CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em;color:#212121;max-width:1200px}
h1{font-size:1.6em}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}th,td{border:1px solid #ddd;padding:3px 7px;
text-align:left;vertical-align:top}th{background:#f5f5f5}.muted{color:#757575}.bad{color:#c62828;font-weight:bold}
img{max-width:100%;border:1px solid #eee;margin:.5em 0}dl{display:grid;grid-template-columns:max-content auto;
gap:2px 12px}dt{font-weight:bold}dd{margin:0}
.warn{background:#fff3e0;border:2px solid #ef6c00;border-radius:4px;padding:.6em 1em;margin:1em 0}
.warn strong{color:#e65100}.warn ul{margin:.3em 0 0 0}
"""


def _title(rep: _Report) -> str:
    if rep.whatif:
        return f"CLWL what-if report: {rep.whatif}, {rep.run_date.isoformat()}"
    return f"CLWL replay report: {rep.run_date.isoformat()}"


def _render_html(rep: _Report) -> str:
    summary, note, versions = _facts(rep)
    e = html.escape
    dist = rep.tables["distribution"].frame
    stuck = rep.tables["stuck_messages"].frame
    title = _title(rep)
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
             f"<title>{e(title)}</title><style>{CSS}</style></head><body>",
             f"<h1>{e(title)}</h1>",
             f"<p class='muted'>run {e(rep.run_id)}; generated "
             f"{e(dt.datetime.now(dt.timezone.utc).strftime('%Y-%m-%d %H:%M:%SZ'))}</p>"]
    if rep.whatif:
        parts.append(f"<div class='warn'><strong>What-if {e(rep.whatif)}</strong>: a replay of the ingested day with "
                     "these overrides; its tables are under <code>whatif/" + e(rep.whatif) + "/</code>, and the "
                     "published tables are unchanged.<ul>" + "".join(
                         f"<li><code>{e(k)}</code>: <code>{e(json.dumps(v, sort_keys=True))}</code></li>"
                         for k, v in rep.overrides.items()) + "</ul></div>")
        if rep.beside is not None:
            parts.append("<h2>Published day against the what-if</h2>")
            parts.append(_html_table(rep.beside, WHATIF_COLS, "No messages on either side."))
            parts.append("<p class='muted'>messages and share (% of the queue's messages) per final destination; "
                         "difference: what-if minus published.</p>")
    warnings = _warnings(summary)
    if warnings:  # at the top, before anything else: e.g. a day published with no messages at all
        parts.append("<div class='warn' role='alert'><strong>Warning</strong><ul>"
                     + "".join(f"<li>{e(w)}</li>" for w in warnings) + "</ul></div>")
    parts.append("<h2>Run summary</h2>")
    if note:
        parts.append(f"<p class='muted'>{e(note)}</p>")
    if summary:
        if rep.whatif:  # written under whatif/<name>: never the published status
            summary = {**summary, "status": f"what-if {rep.whatif} (not published)"}
        status = _fmt(summary.get("status"))
        parts.append("<dl>" + "".join(
            f"<dt>{e(k)}</dt><dd{' class=bad' if k == 'status' and status != 'published' else ''}>"
            f"{e(_fmt(summary.get(k)))}</dd>" for k in SUMMARY_FIELDS if k in summary) + "</dl>")
    parts.append("<p>Tables read: " + "; ".join(f"{e(n)} ({e(v)})" for n, v in versions) +
                 ". Reproduce with Delta time travel at these versions.</p>")

    parts.append("<h2>Replay per queue</h2>")
    parts.append(_html_table(rep.tables["routing_replay"].frame, REPLAY_OVERVIEW,
                             "No messages replayed for this run date."))
    parts.append("<p class='muted'>observed: messages whose destination was observed; agree: of those, how many "
                 "went where the replay says.</p>")

    parts.append("<h2>Distribution: expected against observed</h2>")
    if not rep.charts:
        parts.append("<p class='muted'>No distribution rows for this run date.</p>")
    for c in rep.charts:
        parts.append(f"<h3>{e(c.title)}</h3><img alt='{e(c.alt)}' "
                     f"src='data:image/png;base64,{base64.b64encode(c.png).decode('ascii')}'>")
    parts.append(_html_table(_dist_overview(dist), ("queue", "source", "qmgr", "expected", "observed", "intervals",
                                                    "unexpected"), "No distribution rows."))
    flagged = dist[dist["verdict"] == "unexpected"] if not dist.empty else dist
    parts.append("<h3>Unexpected distributions</h3>")
    parts.append(_html_table(flagged, DIST_COLS, "No interval was flagged as unexpected."))

    parts.append("<h2>Channel state timeline</h2>")
    if rep.timeline:
        parts.append(f"<img alt='{e(rep.timeline.alt)}' "
                     f"src='data:image/png;base64,{base64.b64encode(rep.timeline.png).decode('ascii')}'>")
    else:
        parts.append(f"<p class='muted'>{e(rep.timeline_note)}</p>")

    parts.append(f"<h2>Stuck messages ({len(stuck)})</h2>")
    parts.append(_html_table(stuck.sort_values("held_from") if "held_from" in stuck.columns else stuck,
                             STUCK_COLS, "No stuck messages."))
    parts.append("</body></html>\n")
    return "\n".join(parts)


def _render_md(rep: _Report) -> str:
    summary, note, versions = _facts(rep)
    dist = rep.tables["distribution"].frame
    stuck = rep.tables["stuck_messages"].frame
    out = [f"# {_title(rep)}", "", f"Run `{rep.run_id}`. Full report: [report.html](report.html).", ""]
    if rep.whatif:
        out += [f"**What-if {rep.whatif}**: a replay of the ingested day with these overrides; the published "
                "tables are unchanged.", ""] + [f"- `{k}`: `{json.dumps(v, sort_keys=True)}`"
                                                for k, v in rep.overrides.items()] + [""]
        summary = {**summary, "status": f"what-if {rep.whatif} (not published)"} if summary else summary
        if rep.beside is not None:
            out += ["## Published day against the what-if", "",
                    _md_table(rep.beside, WHATIF_COLS, "No messages on either side.")]
    for warning in _warnings(summary):  # at the top, before anything else
        out += [f"> **WARNING:** {warning}", ""]
    out += ["## Run summary", ""]
    if note:
        out += [f"_{note}_", ""]
    if summary:
        out += ["| | |", "|---|---|"] + [f"| {k} | {_md_cell(_fmt(summary.get(k)))} |"
                                          for k in SUMMARY_FIELDS if k in summary] + [""]
    out += ["Tables read: " + "; ".join(f"`{n}` ({v})" for n, v in versions) + ".", "",
            "## Replay per queue", "",
            _md_table(rep.tables["routing_replay"].frame, REPLAY_OVERVIEW,
                      "No messages replayed for this run date."),
            "## Distribution: expected against observed", ""]
    for c in rep.charts:
        out += [f"![{c.alt}](charts/{c.file})", ""]
    out += [_md_table(_dist_overview(dist), ("queue", "source", "qmgr", "expected", "observed", "intervals",
                                             "unexpected"), "No distribution rows for this run date.")]
    flagged = dist[dist["verdict"] == "unexpected"] if not dist.empty else dist
    out += ["### Unexpected distributions", "", _md_table(flagged, DIST_COLS, "No interval was flagged as unexpected.")]
    out += ["## Channel state timeline", ""]
    if rep.timeline:
        out += [f"![{rep.timeline.alt}](charts/{rep.timeline.file})", ""]
    else:
        out += [f"_{rep.timeline_note}_", ""]
    out += [f"## Stuck messages ({len(stuck)})", "",
            _md_table(stuck.sort_values("held_from") if "held_from" in stuck.columns else stuck, STUCK_COLS,
                      "No stuck messages.")]
    return "\n".join(out)
