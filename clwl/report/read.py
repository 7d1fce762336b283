"""Reading the lake for the report, without Spark: the published gold tables at the versions
``gold/_published.json`` names (clwl/lake/published.py), the silver tables it shows beside them, with deltalake and
pandas through clwl.lake.door (:func:`~clwl.lake.door.snapshot`, :func:`~clwl.lake.door.read_rows`). Every column read is named from the table registry
(clwl/lake/registry.py).

routing_replay (a row per message) is only ever read batch by batch into a small count cube (:func:`arrow_cube`:
counted in Arrow first, so pandas sees a few hundred rows), never whole, and its disagreeing rows (agrees = false)
through a pushed-down filter, keeping the first ``MAX_DISAGREEMENTS``. The other reads of a table with a row per
message count in Arrow too (:func:`read_skew`, :func:`read_seen`); only the rows a section shows singly (the stuck
and delayed messages, their puts, the disagreements) reach pandas as rows. :func:`gather` reads one run date into
the :class:`~clwl.report.model.Day` the sections take; the Delta version of every table read goes with it, so the report can be reproduced by time travel.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import pandas as pd

from clwl.lake.door import GOLD_TABLES, VALIDATION, is_delta_table, read_rows, snapshot
from clwl.lake.registry import columns_of
from clwl.lake.silver import table_path, trace_applications
from clwl.lake.storage import lake_root
from clwl.report.agreement import mq_counts
from clwl.report.model import MAX_DISAGREEMENTS, Day, Seen, summary_row

log = logging.getLogger(__name__)


@dataclass
class _Table:
    name: str
    path: str
    frame: pd.DataFrame
    version: int | None = None
    note: str = ""


def read_table(path: str, day: dt.date, name: str, *, by_date: bool = True, load: bool = True,
               columns: Sequence[str] | None = None,
               reduce: Callable[[Any], pd.DataFrame] | None = None, version: int | None = None) -> _Table:
    """The run date's rows of a Delta table (load=False: only its version; columns: only those the table has;
    version: that version, else the latest).

    reduce: a summary that adds up across parts of the table (a count cube): it is taken of each pyarrow
    RecordBatch and the parts combined with :func:`combine`, so that a table with a row per message is never held
    whole (at 10M messages, reading routing_replay's overview columns into pandas took the driver to 1.8 GiB)."""
    if not is_delta_table(path):
        return _Table(name, path, pd.DataFrame(), None, "not published")
    t = snapshot(path, version)
    if not load:
        return _Table(name, path, pd.DataFrame(), t.version)
    cols = t.columns
    filters = [("run_date", "=", day)] if by_date and "run_date" in cols else None
    wanted = [c for c in columns if c in cols] if columns else None
    if reduce is not None:
        parts = [reduce(b) for b in t.batches(wanted, filters, batch_size=BATCH_ROWS) if b.num_rows]
        return _Table(name, path, combine(parts), t.version)
    return _Table(name, path, t.rows(wanted, filters).to_pandas(), t.version)


BATCH_ROWS = 1 << 18  # rows per batch when a table is summarised or filtered batch by batch

# routing_replay's columns the report needs; per batch they become a count cube over CUBE_KEYS.
REPLAY_CUBE_COLS = columns_of("gold.routing_replay", "sending_qmgr", "queue", "path", "error", "reallocatable", "held",
                              "held_from", "stay_reason", "agrees", "reallocations", "final_qmgr", "observed_qmgr",
                              "config_time")
# config_time (ISO text): the configuration snapshot each message was routed with, so the replayed share splits at
# the same configuration changes as the configured one (clwl.report.shares).
CUBE_KEYS = ("sending_qmgr", "queue", "path", "unroutable", "not_reallocatable", "reallocated", "waited_and_stayed",
             "still_waiting", "final_qmgr", "observed_qmgr", "agrees", "config_time")

NONE = ""  # a missing key in the cube (groupby drops nulls otherwise)
WEIGHT = "__messages"  # a pre-counted frame's rows per combination (arrow_cube); absent: one message a row


def arrow_cube(batch: Any) -> pd.DataFrame:
    """:func:`replay_cube` of a pyarrow RecordBatch of routing_replay: its rows first counted in Arrow per
    combination of the columns the cube reads (each reduced to what the cube asks of it: held_from and
    reallocations to whether set), so that pandas and the ISO texts of config_time see a few hundred rows, not
    one per message (at 10M messages, a Python loop over every row)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if batch.num_rows == 0:
        return replay_cube(batch.to_pandas())
    cols = {name: batch.column(name) for name in batch.schema.names}
    if "held_from" in cols:  # only whether it is set is read
        cols["held_from"] = pc.if_else(pc.is_valid(cols["held_from"]), True, pa.scalar(None, pa.bool_()))
    if "reallocations" in cols:  # only whether it is above 0 is read
        cols["reallocations"] = pc.if_else(pc.greater(pc.fill_null(cols["reallocations"], 0), 0), 1, 0)
    table = pa.table(cols)
    keys = list(cols)
    counted = table.group_by(keys, use_threads=False).aggregate([([], "count_all")])
    return replay_cube(counted.rename_columns([*keys, WEIGHT]).to_pandas())


def replay_cube(replay: pd.DataFrame) -> pd.DataFrame:
    """Messages per combination of CUBE_KEYS: a few hundred rows for a day of any size. A frame with a
    ``WEIGHT`` column (:func:`arrow_cube`) counts each row as that many messages."""
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
        "config_time": iso(col("config_time")),
    })
    if WEIGHT in replay.columns:
        cube["messages"] = replay[WEIGHT].astype("int64")
        return cube.groupby(list(CUBE_KEYS), dropna=False)["messages"].sum().reset_index()
    return cube.groupby(list(CUBE_KEYS), dropna=False).size().rename("messages").reset_index()


def read_igq_rows(lake: Path, day: dt.date, senders: Sequence[str], version: int) -> pd.DataFrame:
    """gold.routing_replay's (sending_qmgr, qmgr, path, length, config_time) of ``senders`` on ``day``, at the
    published ``version``: sending_qmgr is a statistics column, so the files of other senders are skipped."""
    path = table_path(lake, "gold.routing_replay")
    cols = list(columns_of("gold.routing_replay", "sending_qmgr", "qmgr", "path", "length", "config_time"))
    return read_rows(path, cols, [("run_date", "=", day), ("sending_qmgr", "in", list(senders))], version).to_pandas()


def iso(times: pd.Series) -> pd.Series:
    """Timestamps as UTC ISO text, NONE for null (a cube key)."""
    t = pd.to_datetime(times, utc=True)
    return pd.Series([NONE if pd.isna(v) else v.isoformat() for v in t], index=times.index, dtype=object)


def combine(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """Partial count cubes (`replay_cube` of parts of a table) added up into one."""
    parts = [p for p in parts if not p.empty]
    if not parts:
        return pd.DataFrame(columns=[*CUBE_KEYS, "messages"])
    return pd.concat(parts).groupby(list(CUBE_KEYS), as_index=False, dropna=False)["messages"].sum()


def read_gold(lake: Path, day: dt.date) -> dict[str, _Table]:
    """The run date's rows of the published gold tables of ``lake``, each at the version
    ``<lake>/gold/_published.json`` names (clwl/lake/published.py), so that all of them come from one publish even while
    another is being written. routing_replay comes back as its count cube (:func:`replay_cube`)."""
    from clwl.lake.published import read_published

    published = read_published(lake_root(lake) / "gold")  # read once: one consistent set of versions
    tables: dict[str, _Table] = {}
    for name in GOLD_TABLES:
        path = table_path(lake, f"gold.{name}")
        if not published.visible(name):  # its first publish has not finished
            tables[name] = _Table(name, path, pd.DataFrame(), None, "not published")
            continue
        per_message = name == "routing_replay"
        tables[name] = read_table(path, day, f"gold.{name}", columns=REPLAY_CUBE_COLS if per_message else None,
                                  reduce=arrow_cube if per_message else None, version=published.version(name))
    return tables


def destination_counts(lake: Path, day: dt.date) -> pd.DataFrame:
    """Messages per (queue, final destination) of ``day`` in the lake's gold routing_replay, at its published
    version (failed puts as destination "(error)"). Two columns of the table, read with deltalake."""
    import pyarrow.compute as pc

    from clwl.lake.published import read_published

    published = read_published(lake_root(lake) / "gold")
    path = table_path(lake, "gold.routing_replay")
    if not is_delta_table(path) or not published.visible("routing_replay"):
        return pd.DataFrame(columns=["queue", "qmgr", "messages"])
    t = read_rows(path, columns_of("gold.routing_replay", "queue", "final_qmgr"), [("run_date", "=", day)],
                  published.version("routing_replay"))
    t = t.set_column(1, "qmgr", pc.fill_null(t.column("final_qmgr"), "(error)"))
    return t.group_by(["queue", "qmgr"]).aggregate([("qmgr", "count")]).rename_columns(
        ["queue", "qmgr", "messages"]).to_pandas()


def fold(path: str, day: dt.date, columns: Sequence[str], where: Sequence[tuple[str, str, Any]],
         step: Callable[[Any, Any], Any], start: Any, *, version: int | None = None, arrow: bool = False
         ) -> tuple[Any, int | None]:
    """``step(state, batch)`` over the run date's rows of a Delta table that match ``where``, batch by batch
    (pandas frames; arrow: the pyarrow RecordBatches, for a step that counts them before pandas sees them),
    and the version read: only those rows and columns are ever read. ``where``: (column, op, value) with op
    "=", "in", "is not null" (value ignored) or "is distinct from" (not equal, or null), pushed down to deltalake's pyarrow dataset.
    Of ``columns``, those the table has (an older table lacks some); (None, version) when it lacks a column of
    ``where``, (None, None) when there is no table."""
    import pyarrow.dataset as pads

    if not is_delta_table(path):
        return None, None
    needed = {"run_date", *(c for c, _, _ in where)}
    t = snapshot(path, version)
    present = set(t.columns)
    if not needed <= present:
        return None, t.version
    columns = [c for c in columns if c in present]
    expr = pads.field("run_date") == pads.scalar(day)
    for col, op, value in where:
        f = pads.field(col)
        expr &= (f == pads.scalar(value) if op == "=" else f.isin(list(value)) if op == "in"
                 else f.is_valid() if op == "is not null"
                 else (f != pads.scalar(value)) | f.is_null())
    state = start
    for batch in t.batches(columns, expr, batch_size=BATCH_ROWS):
        if batch.num_rows:
            state = step(state, batch if arrow else batch.to_pandas())
    return state, t.version


# The disagreements: routing_replay's columns (clwl.report.agreement shows them under the query's names), and
# the order of the query, so "the rest" follow on.
DISAGREEMENT_READ = columns_of("gold.routing_replay", "sending_qmgr", "msg_id", "put_time", "queue", "final_qmgr",
                               "final_xmitq", "observed_qmgr", "observed_xmitq", "decided_by", "config_time", "trace")
DISAGREEMENT_ORDER = ["sending_qmgr", "put_time", "msg_id"]


def read_disagreements(lake: Path, day: dt.date, *, version: int | None,
                       limit: int = MAX_DISAGREEMENTS) -> tuple[pd.DataFrame, int] | None:
    """The first ``limit`` of the run date's disagreements (routing_replay rows with agrees = false, in the
    query's order) and how many there are, reading only those rows; None for a lake without ``agrees``."""

    def keep_first(state: tuple[pd.DataFrame | None, int], batch: pd.DataFrame):
        kept, n = state
        both = batch if kept is None else pd.concat([kept, batch], ignore_index=True)
        order = [c for c in DISAGREEMENT_ORDER if c in both.columns]
        return both.sort_values(order, kind="stable").head(limit), n + len(batch)

    state, _ = fold(table_path(lake, "gold.routing_replay"), day, DISAGREEMENT_READ, [("agrees", "=", False)],
                    keep_first, (None, 0), version=version)
    if state is None:
        return None
    kept, n = state
    return (kept if kept is not None else pd.DataFrame(columns=list(DISAGREEMENT_READ))).reset_index(drop=True), n


# Who and why (clwl.report.incidents): the messages that waited, the puts behind them, the applications.
DELAYED_COLS = columns_of("gold.routing_replay", "sending_qmgr", "msg_id", "queue", "qmgr", "channel", "final_qmgr",
                          "final_channel", "held_from", "released_at", "reallocations", "held", "stay_reason",
                          "stay_detail", "bind", "target_qmgr")
PUT_COLS = columns_of("silver.message_events", "sending_qmgr", "msg_id", "queue", "put_time", "bind", "target_qmgr",
                      "open_handle", "source")
APPLICATION_COLUMN = "application"  # the put file's optional column, read when the table has it


def read_delayed(lake: Path, day: dt.date, *, version: int | None) -> pd.DataFrame | None:
    """routing_replay's rows of the run date's messages that waited on a transmission queue (held_from set):
    a small part of the day, read alone."""
    state, _ = fold(table_path(lake, "gold.routing_replay"), day, DELAYED_COLS, [("held_from", "is not null", None)],
                    lambda parts, batch: [*parts, batch], [], version=version)
    if state is None:
        return None
    return pd.concat(state, ignore_index=True) if state else pd.DataFrame(columns=list(DELAYED_COLS))


def with_applications(lake: Path, day: dt.date, puts: pd.DataFrame) -> pd.DataFrame:
    """``puts`` (message_events rows) with their ``application`` (clwl.analyses.incidents.application_of): the put file's
    application column, else the traced connection's ApplName, else the open handle's first field."""
    from clwl.analyses.incidents import application_of

    puts = puts.copy()
    given = puts[APPLICATION_COLUMN] if APPLICATION_COLUMN in puts.columns else pd.Series(None, index=puts.index)
    traced = puts["source"] == "activity_trace" if "source" in puts.columns else pd.Series(False, index=puts.index)
    handles = puts["open_handle"].where(puts["open_handle"].notna(), "").astype(str)
    connection = handles.str.split(":").str[0]
    names = trace_applications(lake, day, set(connection[traced]))
    puts["application"] = [application_of(h, names.get(c) if t else None, None if pd.isna(g) else g)
                           for h, c, t, g in zip(handles, connection, traced, given)]
    return puts


def read_puts(lake: Path, day: dt.date, msg_ids: set[str]) -> pd.DataFrame | None:
    """silver.message_events' rows of ``msg_ids`` with their application."""
    if not msg_ids:
        return pd.DataFrame(columns=[*PUT_COLS, "application"])
    state, _ = fold(table_path(lake, "silver.message_events"), day, [*PUT_COLS, APPLICATION_COLUMN],
                    [("msg_id", "in", sorted(msg_ids))], lambda parts, batch: [*parts, batch], [])
    if state is None:
        return None
    rows = pd.concat(state, ignore_index=True) if state else pd.DataFrame(columns=list(PUT_COLS))
    return with_applications(lake, day, rows)


SKEW_KEYS = ["sending_qmgr", "queue", "interval_start"]


def _at(t: pd.Timestamp, type_: Any) -> Any:
    """A UTC instant as a pyarrow scalar of a timestamp column's type, to compare the column with."""
    import pyarrow as pa

    return pa.scalar(t.to_pydatetime(), pa.timestamp("us", tz="UTC")).cast(type_)


def read_skew(lake: Path, day: dt.date, unexpected: pd.DataFrame) -> pd.DataFrame | None:
    """Per unexpected destination-interval (SKEW_KEYS; sending_qmgr "*": every sender), its puts per
    application and bind (``messages``), counted batch by batch from silver.message_events."""
    if unexpected.empty:
        return None
    spans = unexpected[[*SKEW_KEYS, "interval_end"]].drop_duplicates()
    spans = spans.assign(interval_start=pd.to_datetime(spans["interval_start"], utc=True),
                         interval_end=pd.to_datetime(spans["interval_end"], utc=True))

    def step(parts: list[pd.DataFrame], batch: Any) -> list[pd.DataFrame]:
        import pyarrow as pa
        import pyarrow.compute as pc

        puts = pa.Table.from_batches([batch])
        times = puts.column("put_time")
        for sender, queue, start, end in zip(spans["sending_qmgr"], spans["queue"], spans["interval_start"],
                                             spans["interval_end"]):
            hit = pc.and_kleene(pc.equal(puts.column("queue"), queue),
                                pc.and_kleene(pc.greater_equal(times, _at(start, times.type)),
                                              pc.less(times, _at(end, times.type))))
            if sender != "*":
                hit = pc.and_kleene(hit, pc.equal(puts.column("sending_qmgr"), sender))
            rows = puts.filter(hit)
            if not rows.num_rows:
                continue
            # The application depends on these columns alone: it is found once per combination, not per put.
            keys = [c for c in ("open_handle", "source", APPLICATION_COLUMN, "bind") if c in rows.column_names]
            combos = with_applications(lake, day, rows.group_by(keys, use_threads=False).aggregate(
                [([], "count_all")]).rename_columns([*keys, "messages"]).to_pandas())
            parts.append(combos.groupby(["application", "bind"], dropna=False)["messages"].sum().astype("int64")
                         .reset_index().assign(sending_qmgr=sender, queue=queue, interval_start=start))
        return parts

    state, _ = fold(table_path(lake, "silver.message_events"), day, [*PUT_COLS, APPLICATION_COLUMN],
                    [("queue", "in", sorted(set(spans["queue"])))], step, [], arrow=True)
    if state is None:
        return None
    if not state:
        return pd.DataFrame(columns=[*SKEW_KEYS, "application", "bind", "messages"])
    return (pd.concat(state, ignore_index=True).groupby([*SKEW_KEYS, "application", "bind"], dropna=False)
            ["messages"].sum().reset_index())


# What the day's evidence covered (clwl.report.model.Seen; clwl/landing/evidence.py's rules are applied to it).
CAPTURE_COLS = columns_of("bronze.capture_files", "observing_qmgr", "capture_time")
ACCOUNTING_COLS = columns_of("silver.queue_accounting", "qmgr")
QUARANTINE_COLS = columns_of("silver.quarantine", "source_file", "level", "reason")


def read_seen(silver: Path, lake: Path, day: dt.date, *, replay_version: int | None) -> Seen:
    """The run date's channel status capture times per queue manager (bronze.capture_files, accepted chstatus
    captures), each sender's first and last put (gold.routing_replay), the queue managers with queue accounting
    (silver.queue_accounting, QueueAccounting records; None: no such table) and the records quarantined per file,
    level and reason (silver.quarantine). Each read alone, a few columns."""

    def times(found: dict, batch: pd.DataFrame) -> dict:
        for q, t in zip(batch["observing_qmgr"], pd.to_datetime(batch["capture_time"], utc=True)):
            found.setdefault(str(q), []).append(t.to_pydatetime())
        return found

    captures, _ = fold(table_path(silver, "bronze.capture_files"), day, CAPTURE_COLS,
                       [("capture_type", "=", "chstatus")], times, {})

    def spans(found: dict, batch: Any) -> dict:
        # Each sender's first and last put counted in Arrow: pandas sees a row per sender, not per message.
        import pyarrow as pa

        g = pa.Table.from_batches([batch]).group_by("sending_qmgr", use_threads=False).aggregate(
            [("put_time", "min"), ("put_time", "max")]).to_pandas()
        g = g[g["sending_qmgr"].notna()].sort_values("sending_qmgr", kind="stable")  # pandas' groupby order
        lo, hi = pd.to_datetime(g["put_time_min"], utc=True), pd.to_datetime(g["put_time_max"], utc=True)
        for q, a, b in zip(g["sending_qmgr"], lo, hi):
            old = found.get(q)
            found[q] = (a.to_pydatetime(), b.to_pydatetime()) if old is None else (min(old[0], a.to_pydatetime()),
                                                                                 max(old[1], b.to_pydatetime()))
        return found

    puts, _ = fold(table_path(lake, "gold.routing_replay"), day,
                   columns_of("gold.routing_replay", "sending_qmgr", "put_time"), [], spans, {},
                   version=replay_version, arrow=True)
    accounting, _ = fold(table_path(silver, "silver.queue_accounting"), day, ACCOUNTING_COLS,
                         [("monitoring_type", "=", "QueueAccounting")],
                         lambda found, batch: found | set(batch["qmgr"].astype(str)), set())
    quarantined, _ = fold(table_path(silver, "silver.quarantine"), day, QUARANTINE_COLS, [],
                          lambda parts, batch: [*parts, batch], [])
    q = (pd.concat(quarantined, ignore_index=True) if quarantined else pd.DataFrame(columns=list(QUARANTINE_COLS)))
    q = q.groupby(list(QUARANTINE_COLS), dropna=False).size().rename("records").reset_index()
    return Seen(chstatus=captures or {}, puts=puts or {}, accounting=accounting, quarantine=q,
                chstatus_read=captures is not None)


PUT_OPERATIONS = ("MQPUT", "MQPUT1")


def low_trace_puts(lake: Path, day: dt.date) -> tuple[int, int | None]:
    """How many of the run date's traced puts were traced at LOW (bronze.activity_operations), and the
    table's version (None: no such table). Counted as the ingest makes put events of them: verbose form,
    completion code not MQCC_FAILED; a summary-form put gives no event, so it is not replayed at all."""
    n, version = fold(table_path(lake, "bronze.activity_operations"), day,
                      columns_of("bronze.activity_operations", "position"),
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



CHANNEL_STATUS_COLS = columns_of("silver.channel_status", "observing_qmgr", "channel", "chltype", "status",
                                 "valid_from", "valid_to")
XMITQ_COLS_READ = columns_of("silver.xmitq_contents", "run_date", "observing_qmgr", "capture_time", "xmitq",
                             "remote_qmgr_name")


def gather(lake: Path, day: dt.date, run_id: str, *, silver_lake: Path | None = None,
           channel_status: str | Path | None = None, whatif: Any = None) -> Day:
    """One run date of ``lake``'s published tables, read for the report.

    silver_lake: the lake whose silver (and bronze) tables go with it (a what-if run's folder has none of its
    own: the main lake's; default ``lake``). channel_status: the channel status timeline table (default
    ``<silver_lake>/silver/channel_status``); the timeline is left out, with a note, when it is absent. whatif
    (a clwl.analyses.whatif.WhatIf): a what-if run's report, its overrides applied to the configuration and the published
    day (``silver_lake``'s) beside it."""
    from clwl.lake.silver import load_timelines

    silver = lake_root(silver_lake) if silver_lake is not None else lake_root(lake)
    gold = read_gold(lake, day)
    beside = None
    if whatif is not None and silver_lake is not None:
        beside = whatif_beside_published(destination_counts(silver, day), destination_counts(lake, day))
    cs_path = str(channel_status) if channel_status is not None else table_path(silver, "silver.channel_status")
    cs = read_table(cs_path, day, "silver.channel_status", by_date=False, columns=CHANNEL_STATUS_COLS)
    xq_path = table_path(silver, "silver.xmitq_contents")
    try:
        xq = read_table(xq_path, day, "silver.xmitq_contents", columns=XMITQ_COLS_READ)
        xq_note = "no transmission queue browses in this lake" if xq.note == "not published" else ""
    except Exception as exc:
        xq, xq_note = _Table("silver.xmitq_contents", xq_path, pd.DataFrame()), f"browses not read: {exc}"
    timelines, configured_note = None, ""
    try:
        timelines = load_timelines(silver, day.isoformat(), whatif.apply if whatif is not None else None)
    except Exception as exc:  # the configured columns are left blank; the rest of the report stands
        log.warning("report: configuration timelines not read: %s", exc)
        configured_note = f"the configured weights could not be read ({type(exc).__name__}: {exc})"
    tables = [*gold.values(), cs] + ([xq] if xq.version is not None else [])
    versions = [(t.name, "not published" if t.version is None else f"version {t.version}") for t in tables]
    # Only the disagreeing rows of routing_replay, at the version the cube came from; none read when the
    # published counts say there are none.
    replay = gold["routing_replay"]
    counts = mq_counts(summary_row(gold["run_summary"].frame, run_id)[0])
    wrong = None
    if replay.version is not None and (counts is None or counts[2] > 0):
        wrong = read_disagreements(lake, day, version=replay.version)
    try:
        low, ops_version = low_trace_puts(silver, day)
        if ops_version is not None:
            versions.append(("bronze.activity_operations", f"version {ops_version}"))
    except Exception as exc:  # only the LOW sentence depends on it; the rest of the report stands
        log.warning("report: bronze.activity_operations not read: %s", exc)
        low = 0
        versions.append(("bronze.activity_operations", f"not read ({exc}): puts traced at LOW not counted"))
    delayed = puts = skew = None
    try:  # who and why: the incidents' and remedies' facts; the rest of the report stands without them
        if replay.version is not None:
            delayed = read_delayed(lake, day, version=replay.version)
        ids = set(gold["stuck_messages"].frame.get("msg_id", pd.Series(dtype=str)).dropna().astype(str))
        if delayed is not None:
            ids |= set(delayed["msg_id"].astype(str))
        puts = read_puts(silver, day, ids)
        dist = gold["distribution"].frame
        if not dist.empty and "verdict" in dist.columns:
            skew = read_skew(silver, day, dist[dist["verdict"] == "unexpected"])
    except Exception as exc:
        log.warning("report: the applications and delays behind the incidents not read: %s", exc)
        versions.append(("silver.message_events", f"not read ({type(exc).__name__}: {exc}): applications unknown"))
    igq_rows = None
    try:  # the delivery paths of IGQ senders (z/OS queue-sharing groups): their rows alone, none elsewhere
        from clwl.report.paths import igq_senders

        senders = igq_senders(timelines)
        if senders and replay.version is not None:
            igq_rows = read_igq_rows(lake, day, senders, replay.version)
    except Exception as exc:
        log.warning("report: the intra-group queuing rows not read: %s", exc)
    seen = None
    try:  # what the day's evidence covered; without it the report says so rather than look healthy
        seen = read_seen(silver, lake, day, replay_version=replay.version)
    except Exception as exc:
        log.warning("report: the evidence's coverage not read: %s", exc)
    return Day(
        day, run_id, seen=seen, routing_cube=replay.frame, stuck=gold["stuck_messages"].frame,
        distribution=gold["distribution"].frame, run_summary=gold["run_summary"].frame,
        channel_status=None if cs.note == "not published" else cs.frame,
        channel_note=f"no channel status table at {cs_path}" if cs.note == "not published" else "",
        xmitq_contents=xq.frame, xmitq_note=xq_note, timelines=timelines, configured_note=configured_note,
        versions=versions, validation_root=lake_root(lake) / VALIDATION, lake=silver,
        whatif=whatif.name if whatif is not None else None,
        overrides=whatif.overrides() if whatif is not None else None, beside=beside,
        disagreements=wrong[0] if wrong else None, disagreement_total=wrong[1] if wrong else None, low_puts=low,
        delayed=delayed, puts=puts, skew=skew, igq_rows=igq_rows)
