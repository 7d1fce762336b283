"""The replay's inputs from the silver tables, read without Spark (deltalake and pyarrow, imported when read).

- :func:`load_timelines`: every observing queue manager's configuration timeline for a run date, from
  ``silver.config_history`` and ``silver.channel_status`` (small tables: a few rows per object and capture).
- :func:`sender_inputs` and :func:`sender_batches`: one sending queue manager's day of
  ``silver.message_events``, its files found in the Delta log and read in put order, as Arrow batches.

The pipeline's replay (spark/replay.py) hands these to its Spark tasks; ``clwl explain`` and the report read them
in-process. A lake is given by its root folder; the tables are the registry's (clwl/lake/registry.py).
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Collection, Iterable, Iterator, Optional
from urllib.parse import unquote

from clwl.days import as_utc, day_bounds, run_day
from clwl.engine.qsg import membership_from_history
from clwl.engine.replay import PutColumns, PutEvent, Snapshot, timeline_from_history
from clwl.lake.registry import check_partitioning, columns_of, spec
from clwl.lake.storage import arrow_paths, lake_root

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa

#: The columns of silver.message_events that the replay reads, in the order the replay loop takes them.
INPUT_COLUMNS = columns_of("silver.message_events", "sending_qmgr", "msg_id", "put_time", "queue", "target_qmgr",
                           "bind", "open_handle", "group_id", "logical_order", "from_cluster_channel", "pcf",
                           "length", "observed_qmgr", "observed_xmitq", "source", "source_file", "position")
#: silver.message_events.source of a put whose observed answer is MQ's choice at the put (the activity trace), not
#: where the message arrived: it is compared with the replay's first destination, not its final one.
OBSERVED_AT_PUT = "activity_trace"
#: Put order within a sending queue manager (source file and position break ties in put time).
PUT_ORDER = ("put_time", "source_file", "position")
#: Messages per Arrow batch handed to the replay loop (64k against 10k: 12% less Python CPU at 1M messages).
BATCH_ROWS = 65_536

_HISTORY = columns_of("silver.config_history", "observing_qmgr", "kind", "attrs", "valid_from", "valid_to",
                      "source_file")
_STATUS = columns_of("silver.channel_status", "observing_qmgr", "channel", "chltype", "status", "xmitq", "substate",
                     "valid_from", "valid_to", "source_file")


def table_path(lake: Path | str, key: str) -> str:
    """``<lake>/<layer>/<name>`` of the registry's table ``key``, as a string (what deltalake takes)."""
    t = spec(key)
    return str(lake_root(lake) / t.layer / t.name)  # a folder, or an s3:// location (clwl.lake.storage)


def load_timelines(lake: Path | str, run_date: str, overrides=None) -> dict[str, list[Snapshot]]:
    """The configuration timeline of every observing queue manager for ``run_date``, from silver history.

    ``overrides`` (optional) is a callable (qmgr, kind, attrs, valid_from) -> attrs used by what-if runs.
    The history tables are small (a few rows per object and capture), so they are read on the driver without
    the JVM: two Spark jobs cost 0.6 s warm and several seconds in a fresh session.
    """
    start, end = day_bounds(run_date)
    hist = _history_rows(lake, "silver.config_history", _HISTORY, end)
    status = _history_rows(lake, "silver.channel_status", _STATUS, end)
    return timelines_from_rows(hist, status, start, end, overrides)


def timelines_from_rows(hist: Iterable[dict], status: Iterable[dict], start: datetime, end: datetime,
                        overrides=None) -> dict[str, list[Snapshot]]:
    """:func:`load_timelines` once the rows are read: ``hist`` rows of silver.config_history and ``status`` rows
    of silver.channel_status (as dicts of their columns), each record's attributes through ``overrides``, then
    each queue manager's snapshots. Pure Python: what a what-if's overrides become in the replay."""
    rows: dict[str, list] = defaultdict(list)
    for r in hist:
        if r["kind"] == "CHSTATUS":
            continue
        attrs = dict(r["attrs"] or ())
        if overrides is not None:
            attrs = overrides(r["observing_qmgr"], r["kind"], attrs, as_utc(r["valid_from"]))
        rows[r["observing_qmgr"]].append((r["kind"], attrs, as_utc(r["valid_from"]), as_utc(r["valid_to"]),
                                          r["source_file"]))
    for r in status:
        if (r["chltype"] or "CLUSSDR") not in ("CLUSSDR", ""):
            continue
        attrs = {"CHANNEL": r["channel"], "CHLTYPE": r["chltype"] or "CLUSSDR", "STATUS": r["status"],
                 "XMITQ": r["xmitq"] or "", "SUBSTATE": r["substate"] or ""}
        if overrides is not None:
            attrs = overrides(r["observing_qmgr"], "CHSTATUS", attrs, as_utc(r["valid_from"]))
        rows[r["observing_qmgr"]].append(("CHSTATUS", attrs, as_utc(r["valid_from"]), as_utc(r["valid_to"]),
                                          r["source_file"]))
    groups = membership_from_history((qm, kind, attrs, vf, vt) for qm, rs in rows.items()
                                     for kind, attrs, vf, vt, _src in rs)
    return {qm: tl for qm, rs in rows.items() if (tl := timeline_from_history(qm, rs, start, end, groups=groups))}


def _history_rows(lake: Path | str, key: str, columns: tuple[str, ...], end: datetime) -> list[dict]:
    """Rows of a silver history table that begin before ``end``, in a fixed order (whatever order the files
    come in, the same rows give the same timeline)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from clwl.lake.door import read_rows

    tab = read_rows(table_path(lake, key), columns)
    tab = tab.filter(pc.less(tab.column("valid_from"), pa.scalar(end, tab.schema.field("valid_from").type)))
    rows = tab.to_pylist()
    rows.sort(key=lambda r: tuple("" if r[c] is None else str(r[c]) for c in columns))
    return rows


def put_event(c: dict, i: int) -> PutEvent:
    """Message ``i`` of a batch of INPUT_COLUMNS as columns (``batch.to_pydict()``)."""
    return PutEvent(c["msg_id"][i], as_utc(c["put_time"][i]), c["queue"][i], c["target_qmgr"][i] or None,
                    c["bind"][i], c["open_handle"][i] or "", c["group_id"][i] or "", bool(c["logical_order"][i]),
                    bool(c["from_cluster_channel"][i]), bool(c["pcf"][i]), int(c["length"][i]),
                    c["observed_qmgr"][i] or None, c["observed_xmitq"][i] or None,
                    c["source"][i] == OBSERVED_AT_PUT)


def put_columns(batch: "pa.RecordBatch") -> PutColumns:
    """SenderReplay.put_batch's columns (times_us, queues, targets, binds, handles, groups, logical, from_channel,
    pcf, lengths) from a batch of INPUT_COLUMNS as :func:`sender_batches` gives them, as the pipeline's replay
    (spark/replay.py) takes them: put times in microseconds, a blank target as none, nulls as blank or False."""
    import pyarrow as pa
    import pyarrow.compute as pc

    target = batch.column("target_qmgr")
    target = pc.if_else(pc.equal(target, ""), pa.scalar(None, pa.string()), target)  # "" is no target, as there
    return PutColumns(batch.column("put_time").cast(pa.timestamp("us", "UTC")).cast(pa.int64()).to_pylist(),
            batch.column("queue").to_pylist(), target.to_pylist(), batch.column("bind").to_pylist(),
            pc.fill_null(batch.column("open_handle"), "").to_pylist(),
            pc.fill_null(batch.column("group_id"), "").to_pylist(),
            pc.fill_null(batch.column("logical_order"), False).to_pylist(),
            pc.fill_null(batch.column("from_cluster_channel"), False).to_pylist(),
            pc.fill_null(batch.column("pcf"), False).to_pylist(), batch.column("length").to_pylist())


def batch_event(batch: "pa.RecordBatch") -> Callable[[int], PutEvent]:
    """put_batch's ``event``: message i of ``batch`` as a PutEvent, built only when asked (for a message that
    waits), so the common case costs no object per message."""
    return lambda i: put_event(batch.slice(i, 1).to_pydict(), 0)


@dataclass(frozen=True)
class SenderInput:
    """One sending queue manager's share of a run date in silver.message_events: its data files (absolute
    paths, at one table version) and how many messages they hold."""

    sending_qmgr: str
    messages: int
    files: tuple[str, ...]


def sender_inputs(lake: Path | str, run_date: str, senders: Optional[Iterable[str]] = None
                  ) -> tuple[int, list[SenderInput]]:
    """The Delta version of silver.message_events and ``run_date``'s files per sending queue manager, largest
    first. From the Delta log alone (the table is partitioned by run date and sender): no data is read."""
    from clwl.lake.door import snapshot

    root = table_path(lake, "silver.message_events")
    table = snapshot(root)  # its log checked before check_partitioning's deltalake reads it too
    check_partitioning(spec("silver.message_events"), root)
    wanted = set(senders) if senders else None
    files: dict[str, list[str]] = defaultdict(list)
    counts: dict[str, int] = defaultdict(int)
    for f in table.files({"run_date": run_day(run_date)}):
        qm = f.partition["sending_qmgr"]
        if wanted is not None and qm not in wanted:
            continue
        # Add-action paths are relative URIs: partition values are percent-encoded in them.
        files[qm].append(os.path.join(root, unquote(f.path)))
        counts[qm] += int(f.num_records or 0)
    inputs = [SenderInput(qm, counts[qm], tuple(sorted(fs))) for qm, fs in files.items()]
    # Largest first: Spark starts the tasks in this order, so the longest replays do not start last.
    inputs.sort(key=lambda s: (-s.messages, s.sending_qmgr))
    return table.version, inputs


def sender_batches(sender: SenderInput, queues: Optional[Collection[str]] = None,
                   batch_rows: int = BATCH_ROWS) -> Iterator["pa.RecordBatch"]:
    """One sending queue manager's messages, in put order, as Arrow batches of INPUT_COLUMNS typed as Spark
    would hand them to mapInArrow. Holds the sender's day of these columns in memory (about 150 bytes a
    message) to sort it; the files are read directly, so no shuffle brings a sender's messages together."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    filesystem, paths = arrow_paths(list(sender.files))  # local files, or keys on the lake's object store
    dataset = ds.dataset(paths, format="parquet", filesystem=filesystem)
    # sending_qmgr is a partition column (in the path); a lake from before the source column has none (one
    # rebuild writes a sender's day, so its files agree on it)
    columns = [c for c in INPUT_COLUMNS if c != "sending_qmgr" and (c != "source" or c in dataset.schema.names)]
    where = ds.field("queue").isin(list(queues)) if queues is not None else None
    tab = dataset.to_table(columns=columns, filter=where)
    if "source" not in columns:  # in its place: the batches have INPUT_COLUMNS in order
        tab = tab.add_column(INPUT_COLUMNS.index("source") - 1, "source", pa.nulls(tab.num_rows, pa.string()))
    tab = tab.sort_by([(c, "ascending") for c in PUT_ORDER])
    # Spark's Parquet timestamps (INT96) read as naive nanoseconds; the replay takes UTC microseconds.
    tab = tab.set_column(tab.schema.get_field_index("put_time"), "put_time",
                         tab.column("put_time").cast(pa.timestamp("us", "UTC")))
    tab = tab.add_column(0, "sending_qmgr", pa.repeat(pa.scalar(sender.sending_qmgr, pa.string()), tab.num_rows))
    yield from tab.to_batches(max_chunksize=batch_rows)


def trace_applications(lake: Path | str, run_date: str, connections: Optional[Collection[str]] = None
                       ) -> dict[str, str]:
    """The traced connections' ApplName (``bronze.activity_operations.application_name``) on a run date, by
    connection (the trace message's Correl_id): the name ``clwl.analyses.incidents.application_of`` gives a traced put. Only
    ``connections`` when given (the report asks for its messages' connections; blast for the whole day). Blank
    names are left out, so such a put falls back to its handle. Empty when the lake has no activity trace."""
    from clwl.lake.door import Lake

    lk = Lake.of(lake)
    if (connections is not None and not connections) or not lk.exists("bronze.activity_operations"):
        return {}
    filters = [("run_date", "=", run_day(run_date))]
    if connections is not None:
        filters.append(("connection", "in", sorted(connections)))
    tab = lk.rows("bronze.activity_operations", ["connection", "application_name"], filters=filters)
    names: dict[str, str] = {}
    for conn, name in zip(tab.column("connection").to_pylist(), tab.column("application_name").to_pylist()):
        if conn and name and name.strip():
            names.setdefault(conn, name.strip())
    return names
