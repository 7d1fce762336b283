"""A day's observed timeline over Arrow columns: :func:`clwl.analyses.observed.observed_timeline`'s answer for millions of
channel-agent rows without a Python object per row.

The rules are :mod:`clwl.analyses.observed`'s, applied to whole columns: the same event rules (``_departure``,
``_arrival``), the same units of work (:data:`clwl.analyses.observed.UNIT_OF_WORK_ENDS`) and the same choice of the first
departure and the last arrival, ties broken by the order the row-at-a-time walk would have listed the events in.
``clwl explain``'s flow of one message keeps the row-at-a-time path; tests/unit/test_observed_columns.py holds the
two to the same answer on generated traces, and the pipeline's replay takes this one (1M messages traced at both
ends: BENCHMARKS.md, session 11).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clwl.analyses.observed import (
    MCA_ENVIRONMENT,
    MQGMO_BROWSE,
    MQGMO_SYNCPOINT,
    MQGMO_SYNCPOINT_IF_PERSISTENT,
    MQPMO_SYNCPOINT,
    OPERATION_COLUMNS,
    RECEIVING_AGENTS,
    UNIT_OF_WORK_ENDS,
    ObservedMessage,
    agent_filters,
)

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import pyarrow as pa

__all__ = ["observed_day", "observed_timeline_columns"]

#: How a unit-of-work end settles the connection's open events (what clwl.analyses.observed.UNIT_OF_WORK_ENDS' functions
#: do): a successful MQCMIT or MQDISC commits them; an MQBACK, or a failed MQCMIT, drops them; a failed MQDISC
#: leaves the unit open.
_COMMIT, _DROP = 1, 2
_NEVER = 1 << 62  # an event whose unit of work the trace does not end: listed after every settled one
assert set(UNIT_OF_WORK_ENDS) == {"MQCMIT", "MQBACK", "MQDISC"}, "clwl.analyses.observed changed its units of work"


def _codes(column) -> "np.ndarray":
    """Each value's code, numbered in the order the values first appear (nulls as ``""``)."""
    import numpy as np
    import pyarrow.compute as pc

    # One array first: each chunk of a chunked column (one per data file) would get a dictionary of its own.
    whole = column.combine_chunks() if hasattr(column, "combine_chunks") else column
    encoded = pc.dictionary_encode(pc.fill_null(whole, ""))
    return np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype="int64")


def _ints(column, missing: int) -> "np.ndarray":
    import numpy as np
    import pyarrow.compute as pc

    return np.asarray(pc.fill_null(column, missing).to_numpy(zero_copy_only=False), dtype="int64")


def _strings(column) -> "np.ndarray":
    import numpy as np
    import pyarrow.compute as pc

    return np.asarray(pc.fill_null(column, "").to_numpy(zero_copy_only=False), dtype=object)


def observed_timeline_columns(table: "pa.Table") -> dict[str, ObservedMessage]:
    """:func:`clwl.analyses.observed.observed_timeline` of the rows of ``table`` (bronze.activity_operations' columns,
    :data:`clwl.analyses.observed.OPERATION_COLUMNS`), keyed and sorted by message id as that function keys them."""
    import numpy as np
    import pyarrow as pa

    n = table.num_rows
    if n == 0:
        return {}
    col = table.column
    # The walk's order: connections in the order they first appear, each by (SeqNumber, operation index, row).
    conn = _codes(col("connection"))
    order = np.lexsort((np.arange(n), _ints(col("operation_index"), -1), _ints(col("seq_number"), -1), conn))
    conn = conn[order]
    step = np.arange(n)

    op = _strings(col("operation"))[order]
    succeeded = _strings(col("comp_code"))[order] != "MQCC_FAILED"
    options = _ints(col("options"), 0)[order]
    xmitq_id = _strings(col("xmitq_msg_id"))[order]
    put_id = _strings(col("msg_id"))[order]
    channel_type = col("channel_type").to_numpy(zero_copy_only=False)[order]
    environment = _strings(col("api_environment"))[order]

    is_end = np.isin(op, list(UNIT_OF_WORK_ENDS))
    departure = ~is_end & (op == "MQGET") & succeeded & (xmitq_id != "") & ((options & MQGMO_BROWSE) == 0)
    no_type = np.array([t is None for t in channel_type], dtype=bool)
    receiving = np.isin(channel_type, list(RECEIVING_AGENTS)) | (no_type & (environment == MCA_ENVIRONMENT))
    arrival = ~is_end & ~departure & np.isin(op, ["MQPUT", "MQPUT1"]) & succeeded & (put_id != "") & receiving
    syncpoint = np.where(departure, (options & (MQGMO_SYNCPOINT | MQGMO_SYNCPOINT_IF_PERSISTENT)) != 0,
                         (options & MQPMO_SYNCPOINT) != 0)

    # The next end of the same connection that settles the unit of work (at or after each row), and how.
    settles = np.select([(op == "MQCMIT") & succeeded, (op == "MQCMIT") & ~succeeded, op == "MQBACK",
                         (op == "MQDISC") & succeeded], [_COMMIT, _DROP, _DROP, _COMMIT], 0)
    at_end = np.where(settles > 0, step, n)
    next_end = np.minimum.accumulate(at_end[::-1])[::-1]  # the nearest settling end at or after the row
    found = next_end < n
    found[found] = conn[next_end[found]] == conn[found]  # an end of a later connection settles nothing here
    next_how = np.where(found, settles[np.minimum(next_end, n - 1)], 0)

    event = departure | arrival
    open_unit = event & syncpoint
    keep = event & ~(open_unit & (next_how == _DROP))
    committed = ~open_unit | (next_how == _COMMIT)
    # Where the walk lists the event: at its own row, at the end that committed it, or after everything.
    listed = np.where(~open_unit, step, np.where(next_how == _COMMIT, next_end, _NEVER))

    rows = order[keep]  # the events' rows of ``table``
    if len(rows) == 0:
        return {}
    is_departure = departure[keep]
    msg_ids = np.where(is_departure, xmitq_id[keep], put_id[keep])
    listing = np.lexsort((step[keep], listed[keep], conn[keep]))  # the walk's list order
    rank = np.empty(len(rows), dtype="int64")
    rank[listing] = np.arange(len(rows))
    times = col("operation_time").take(pa.array(rows)).combine_chunks()
    timed = np.asarray(times.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    at = np.asarray(times.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False), dtype="int64")
    ids, id_code = np.unique(msg_ids, return_inverse=True)  # sorted message ids, each event's index in them

    def pick(mask: "np.ndarray", keys: tuple) -> dict[int, int]:
        """The first event of each message id among ``mask`` in the order ``keys`` (np.lexsort's, last key first)."""
        idx = np.flatnonzero(mask)
        if len(idx) == 0:
            return {}
        ranked = idx[np.lexsort(tuple(k[idx] for k in keys) + (id_code[idx],))]
        first = np.unique(id_code[ranked], return_index=True)[1]
        return dict(zip(id_code[ranked][first].tolist(), ranked[first].tolist()))

    # First departure: the earliest time, ties to the first listed; none timed: the first listed.
    gone = pick(is_departure, (rank, at, ~timed))
    # Last arrival: the latest time, ties to the first listed; none timed: the last listed.
    came = pick(~is_departure & timed, (rank, -at))
    for i, e in pick(~is_departure, (-rank,)).items():
        came.setdefault(i, e)
    departures = np.bincount(id_code[is_departure], minlength=len(ids))
    arrivals = np.bincount(id_code[~is_departure], minlength=len(ids))

    needed = sorted(set(gone.values()) | set(came.values()))
    fields = table.select(["operation_time", "qmgr", "channel_name", "object_name", "xmitq_remote_qmgr",
                           "xmitq_remote_queue"]).take(pa.array(rows[needed])).to_pylist()
    value = dict(zip(needed, fields))
    done = committed[keep]
    timeline: dict[str, ObservedMessage] = {}
    for i, msg_id in enumerate(ids.tolist()):
        d, a = gone.get(i), came.get(i)
        g = value[d] if d is not None else None
        c = value[a] if a is not None else None
        timeline[msg_id] = ObservedMessage(
            msg_id=msg_id,
            left_xmitq_at=g["operation_time"] if g else None, left_qmgr=g["qmgr"] if g else None,
            xmitq=g["object_name"] if g else None, channel=g["channel_name"] if g else None,
            remote_qmgr=g["xmitq_remote_qmgr"] if g else None, remote_queue=g["xmitq_remote_queue"] if g else None,
            left_committed=bool(done[d]) if g else None,
            arrived_at=c["operation_time"] if c else None, arrived_qmgr=c["qmgr"] if c else None,
            arrival_channel=c["channel_name"] if c else None, target_queue=c["object_name"] if c else None,
            arrived_committed=bool(done[a]) if c else None,
            departures=int(departures[i]), arrivals=int(arrivals[i]))
    return timeline


def observed_day(lake, run_date) -> dict[str, ObservedMessage]:
    """:func:`clwl.analyses.observed.observed_timeline` of the run date's channel agents' trace, keyed by upper-case message
    id: computed over the rows' Arrow columns (a day traced at both ends has millions of agent rows)."""
    from clwl.days import run_day
    from clwl.lake.door import Lake

    lake = Lake.of(lake)
    if not lake.exists("bronze.activity_operations"):
        return {}
    rows = lake.rows("bronze.activity_operations", OPERATION_COLUMNS, agent_filters(run_day(run_date)))
    return {k.upper(): v for k, v in observed_timeline_columns(rows).items()}
