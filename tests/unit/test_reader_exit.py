"""A script that reads a gold table with deltalake ends with exit 0, every time (issue 25 item 9).

With deltalake's default file system for a table's files (one written in Python, ``pyarrow.fs.PyFileSystem`` over
``deltalake.fs.DeltaStorageHandler``), Arrow's I/O threads call into Python after a read has returned, and a
process that exits meanwhile dies at exit after printing its result: "terminate called without an active
exception" (exit 134), a segmentation fault (139) or a hang in Arrow's thread pool shutdown; after one plain read
in 30 to one in 3, and after most reads that stop early. clwl.lake.door.open_delta reads a local table's files with Arrow's
own file system, and ``clwl published`` prints a deltalake statement that does the same (clwl.lake.door.open_delta
says why). Here each of those reads runs in fresh interpreters, many times over: one abort, crash or hang fails.
"""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from clwl.lake.door import Lake
from clwl.lake.published import write_published

#: Fresh processes. On the broken path 15 of 20 such processes died (and the first of 30 in each of three tries):
#: 12 runs miss it with odds of 0.25^12, about one in 17 million.
RUNS = 12
DAYS = [dt.date(2026, 11, 17) + dt.timedelta(days=d) for d in range(4)]
SENDERS = [f"QM{s}" for s in range(5)]
ROWS = 300  # per sender and day: one file each, as a publish writes them (20 files, 6,000 rows)
UTC = dt.timezone.utc
TS = pa.timestamp("us", tz="UTC")
S = pa.string()

#: Part of gold.routing_replay's schema (spark/tables.py): the kinds of column it has, partitioned by run_date.
SCHEMA = pa.schema([
    pa.field("run_date", pa.date32(), False), pa.field("sending_qmgr", S, False), pa.field("msg_id", S, False),
    pa.field("put_time", TS, False), pa.field("queue", S, False), pa.field("target_qmgr", S),
    pa.field("length", pa.int64(), False), pa.field("qmgr", S), pa.field("channel", S), pa.field("xmitq", S),
    pa.field("trace", S), pa.field("error", S), pa.field("reason_code", pa.int32()),
    pa.field("reallocatable", pa.bool_()), pa.field("reallocations", pa.int32(), False),
    pa.field("held", pa.bool_(), False), pa.field("delivered_at", TS), pa.field("observed_qmgr", S),
    pa.field("agrees", pa.bool_()), pa.field("profile", S, False),
])

#: What a reader does, in a fresh interpreter: each way of reading the published routing_replay, then its counts.
CHILD = """
import datetime, sys
import pyarrow.fs
from deltalake import DeltaTable
from clwl.lake.door import Lake
from clwl.lake.door import reader_recipes

lake = Lake(sys.argv[1])
key = "gold.routing_replay"
version = lake.published_version(key)
table = lake.open(key, version)  # clwl.lake.door.open_delta
recipe = reader_recipes(lake.layer("gold"))["tables"]["routing_replay"]["deltalake"]  # what clwl published prints
counts = [
    table.to_pyarrow_table().num_rows,
    table.to_pyarrow_dataset().to_table().num_rows,
    len(table.to_pandas(filters=[("run_date", "=", datetime.date(2026, 11, 18))])),
    lake.rows(key, ["msg_id", "qmgr"], version=version).num_rows,
    eval(recipe, {"DeltaTable": DeltaTable, "pyarrow": pyarrow}).num_rows,
    # Reads that stop early: the scan's unfinished work is left to Arrow's threads while the interpreter exits.
    table.to_pyarrow_dataset().head(10).num_rows,
    next(iter(table.to_pyarrow_dataset().to_batches(batch_size=100))).num_rows,
]
print(*counts)
"""
EXPECTED = f"{len(DAYS) * len(SENDERS) * ROWS} {len(DAYS) * len(SENDERS) * ROWS} {len(SENDERS) * ROWS} " \
           f"{len(DAYS) * len(SENDERS) * ROWS} {len(DAYS) * len(SENDERS) * ROWS} 10 100"


def _rows(day: dt.date, sender: str, start: int, n: int) -> pa.Table:
    t0 = dt.datetime(day.year, day.month, day.day, tzinfo=UTC)
    i = range(start, start + n)
    return pa.Table.from_pydict({
        "run_date": [day] * n, "sending_qmgr": [sender] * n, "msg_id": [f"AMQ {sender} {day:%m%d}{k:010d}" for k in i],
        "put_time": [t0 + dt.timedelta(seconds=k) for k in i], "queue": [f"APP.Q{k % 7}" for k in i],
        "target_qmgr": [None if k % 3 else "QMX" for k in i], "length": [(k * 31) % 10_000 for k in i],
        "qmgr": [f"QM{(k * 7) % 9}" for k in i], "channel": [f"TO.QM{(k * 7) % 9}" for k in i],
        "xmitq": ["SYSTEM.CLUSTER.TRANSMIT.QUEUE"] * n, "trace": [f"step {k % 5}: chosen by rank" for k in i],
        "error": [None] * n, "reason_code": [None] * n, "reallocatable": [bool(k % 2) for k in i],
        "reallocations": [k % 2 for k in i], "held": [False] * n,
        "delivered_at": [t0 + dt.timedelta(seconds=k, milliseconds=5) for k in i],
        "observed_qmgr": [None if k % 4 else f"QM{(k * 7) % 9}" for k in i],
        "agrees": [None if k % 4 else True for k in i], "profile": ["default"] * n,
    }, schema=SCHEMA)


@pytest.fixture(scope="module")
def lake(tmp_path_factory) -> Lake:
    lake = Lake(tmp_path_factory.mktemp("reader_exit") / "lake")
    path = str(lake.table("gold.routing_replay"))
    for day in DAYS:
        for sender in SENDERS:
            write_deltalake(path, _rows(day, sender, 0, ROWS), partition_by=["run_date"], mode="append")
    published = len(DAYS) * len(SENDERS) - 1
    write_published(lake.layer("gold"), {"routing_replay": published})
    # A commit past the pointer (a publish that did not finish): the readers must not see its rows.
    write_deltalake(path, _rows(DAYS[0], "QM9", 0, 50), partition_by=["run_date"], mode="append")
    return lake


def test_reads_end_with_exit_0_in_every_fresh_process(lake):
    started = time.monotonic()
    for run in range(1, RUNS + 1):
        try:
            p = subprocess.run([sys.executable, "-c", CHILD, str(lake.root)], capture_output=True, text=True,
                               timeout=60, cwd=Path(__file__).resolve().parents[2])
        except subprocess.TimeoutExpired as exc:
            pytest.fail(f"run {run} of {RUNS}: no exit within 60 s (stdout {exc.stdout!r}): a hang at exit")
        assert (p.returncode, p.stdout.strip()) == (0, EXPECTED), \
            f"run {run} of {RUNS}: exit {p.returncode}, stdout {p.stdout!r}, stderr {p.stderr[-2000:]!r}"
    print(f"{RUNS} fresh readers, all exit 0, in {time.monotonic() - started:.1f} s")
