"""The day's observed timeline over Arrow columns (clwl/analyses/observed_columns.py) gives exactly the row-at-a-time
answer (clwl.analyses.observed.observed_timeline): on the channel agents' fixtures, and on generated traces that mix
everything the rules look at (units of work settled by MQCMIT, MQBACK, failed MQCMIT, MQDISC good and failed,
events left open, browses, failed calls, client connections, missing times and sequence numbers, one message id
got or put several times, ties in time). The row-at-a-time path is the reference: its rules are written one
function each in clwl/analyses/observed.py and derived there."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

import pyarrow as pa
import pytest

from clwl.analyses.observed import observed_timeline
from clwl.analyses.observed_columns import observed_timeline_columns
from tests.unit.test_observed import _lake_rows, _traced

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=timezone.utc)
SCHEMA = pa.schema([
    ("connection", pa.string()), ("seq_number", pa.int64()), ("operation_index", pa.int64()),
    ("operation", pa.string()), ("comp_code", pa.string()), ("options", pa.int64()),
    ("operation_time", pa.timestamp("us", "UTC")), ("qmgr", pa.string()), ("channel_name", pa.string()),
    ("channel_type", pa.string()), ("api_environment", pa.string()), ("object_name", pa.string()),
    ("msg_id", pa.string()), ("xmitq_msg_id", pa.string()), ("xmitq_remote_qmgr", pa.string()),
    ("xmitq_remote_queue", pa.string()), ("application_name", pa.string()), ("source_file", pa.string()),
    ("position", pa.int64()),
])


def _table(rows: list[dict]) -> pa.Table:
    """The rows as a table of several chunks, as a read of several data files gives them."""
    whole = pa.Table.from_pylist([{f.name: r.get(f.name) for f in SCHEMA} for r in rows], schema=SCHEMA)
    cuts = [0, len(rows) // 3, 2 * len(rows) // 3, len(rows)]
    return pa.concat_tables([whole.slice(a, b - a) for a, b in zip(cuts, cuts[1:])])


def test_the_fixtures_give_the_same_timeline():
    rows = _lake_rows(_traced())
    expected = observed_timeline(rows)
    assert expected  # the fixtures hold departures and arrivals
    assert observed_timeline_columns(_table(rows)) == expected


def _generated(seed: int) -> list[dict]:
    """A shuffled trace of a few connections: sending agents' MQGETs (with and without syncpoint, some browses,
    some failed, some without a transmission header), receiving agents' MQPUT/MQPUT1 (by channel type, by the
    MCA environment alone, or a client's), and the ends of their units of work, over six message ids so that ids
    repeat, times on a coarse grid so that they tie, and a few missing times and sequence numbers."""
    rng = random.Random(seed)
    ids = [f"{n:048X}" for n in range(1, 7)]
    rows: list[dict] = []
    for c in range(rng.randint(1, 5)):
        sending = rng.random() < 0.5
        kind = rng.choice(["MQCHT_CLUSSDR", "MQCHT_SENDER"] if sending else
                          ["MQCHT_CLUSRCVR", "MQCHT_RECEIVER", None, None])
        env = "MQXE_MCA" if kind is not None or rng.random() < 0.6 else "MQXE_MCA_SVRCONN"
        conn = rng.choice([f"C{c}", f"C{c}", None, ""])
        for seq in range(rng.randint(1, 4)):
            for i in range(rng.randint(1, 6)):
                r = rng.random()
                if r < 0.2:
                    op = rng.choice(["MQCMIT", "MQCMIT", "MQBACK", "MQDISC"])
                elif sending:
                    op = rng.choice(["MQGET", "MQGET", "MQOPEN"])
                else:
                    op = rng.choice(["MQPUT", "MQPUT1", "MQCLOSE"])
                mid = rng.choice(ids)
                rows.append({
                    "connection": conn, "seq_number": None if rng.random() < 0.1 else seq,
                    "operation_index": None if rng.random() < 0.1 else i, "operation": op,
                    "comp_code": "MQCC_FAILED" if rng.random() < 0.15 else rng.choice(["MQCC_OK", None]),
                    "options": rng.choice([None, 0, 0x2, 0x1000, 0x10, 0x2 | 0x10, 0x4]),
                    "operation_time": None if rng.random() < 0.1 else T0 + timedelta(seconds=rng.randint(0, 5)),
                    "qmgr": f"QM{rng.randint(1, 3)}", "channel_name": f"TO.QM{rng.randint(1, 3)}",
                    "channel_type": kind, "api_environment": env, "object_name": rng.choice(["SCTQ", "APP.Q"]),
                    "msg_id": mid if (not sending or rng.random() < 0.3) and rng.random() < 0.9 else None,
                    "xmitq_msg_id": rng.choice([mid, mid, "", None]) if sending else None,
                    "xmitq_remote_qmgr": "QM2" if sending else None, "xmitq_remote_queue": "APP.Q" if sending else None,
                    "source_file": "f", "position": len(rows) + 1,
                })
    rng.shuffle(rows)
    return rows


@pytest.mark.parametrize("seed", range(400))
def test_generated_traces_give_the_same_timeline(seed):
    rows = _generated(seed)
    assert observed_timeline_columns(_table(rows)) == observed_timeline(rows)


def test_an_empty_day_is_empty():
    assert observed_timeline_columns(_table([])) == {}
