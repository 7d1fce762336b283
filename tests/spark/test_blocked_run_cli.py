"""`clwl run` exits 4 when the quality gate blocks publishing (docs/cli-contract.md, README "Exit codes"), end to
end: the real command in a child process, on a landing whose day fails a Great Expectations check because of its
data, not because of an edited suite.

The data: two sending queue managers put a message with the same MsgId on one day. An application may set MsgId
itself (a bridge that takes a message from QM1 and puts it again on QM2 keeps its MsgId, for one), so every file
parses and nothing is held back (docs/landing.md, "Held back": a repeat is held back only when the *same* sender
put it before), yet the expectation suites ask for a msg_id once per run date: `silver.message_events`
(expectations/silver.message_events.json, expect_column_values_to_be_unique msg_id) and `gold.routing_replay`
((run_date, msg_id) unique). So the gate blocks the day.

First the day is published as it was before the second sender's file arrived (in-process, with the shared Spark
session: the run to compare with). Then the file arrives and `clwl run` runs on the same lake: exit 4, the failed
expectations and the validation result are printed, and gold stays exactly as the first run published it (the
pointer gold/_published.json, the tables' versions and rows).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest

from spark.config import PipelineConfig
from tests.handmade import DAY, PUTS_HEADER, T0, chstatus_capture, config_capture, msg, put_row, write_day

pytestmark = [pytest.mark.spark, pytest.mark.slow]

GOLD = ("routing_replay", "stuck_messages", "distribution", "run_summary")


def qm2_msg(n: int) -> str:
    """A MsgId as QM2 makes them ("AMQ QM2" and blanks, then a counter: 48 hex digits, like handmade.msg)."""
    return f"414D5120514D32202020202020202020{n:016X}"


QM1_PUTS = [put_row(T0 + timedelta(minutes=10 * i), "QM1", "APP.ORDERS", msg(i)) for i in range(1, 5)]
QM2_PUTS = [put_row(T0 + timedelta(minutes=10 * i + 5), "QM2", "APP.ORDERS", qm2_msg(i)) for i in range(1, 3)]
SHARED = msg(2)  # QM1's second message, put again by QM2 with the same MsgId
BRIDGE_PUT = put_row(T0 + timedelta(minutes=40), "QM2", "APP.ORDERS", SHARED)


def landing(root: Path) -> Path:
    """QM1 and QM2 of cluster CL1 each put to APP.ORDERS (instances on QM2 and QM3), with their own configuration
    and channel status captured at 06:00: 4 puts from QM1, 2 from QM2, every MsgId different."""
    queues = {"APP.ORDERS": {"QM2": {}, "QM3": {}}}
    for qm, others, rows in (("QM1", ("QM2", "QM3"), QM1_PUTS), ("QM2", ("QM1", "QM3"), QM2_PUTS)):
        write_day(root, DAY, qm, {
            "config_060000.mqsc": config_capture(qm, {o: {} for o in others}, queues),
            "chstatus_060000.mqsc": chstatus_capture(qm, {f"TO.{o}": "RUNNING" for o in others}),
            "puts.csv": "\n".join([PUTS_HEADER, *rows]) + "\n"})
    return root


def gold_state(lake: Path) -> dict:
    """What readers of gold see: the pointer file, each table's latest Delta version and its rows."""
    import deltalake

    state = {"pointer": json.loads((lake / "gold" / "_published.json").read_text())}
    for t in GOLD:
        table = deltalake.DeltaTable(str(lake / "gold" / t))
        rows = table.to_pyarrow_table().to_pylist()
        state[t] = (table.version(), sorted(json.dumps(r, sort_keys=True, default=str) for r in rows))
    return state


def test_a_day_that_fails_an_expectation_exits_4_and_keeps_the_published_day(spark, tmp_path):
    from spark.pipeline import run_pipeline

    root = landing(tmp_path / "landing")
    lake = tmp_path / "lake"
    config = PipelineConfig(lake=lake, landing=root)

    # 1. The day as it was first published: 4 + 2 messages, each MsgId once.
    started = time.monotonic()
    first = run_pipeline(config, [DAY], spark=spark, progress=lambda line: None)
    print(f"run_pipeline (published): {time.monotonic() - started:.1f} s")
    (day,) = first.dates
    assert day.published, day.failures
    assert day.messages == len(QM1_PUTS) + len(QM2_PUTS)
    before = gold_state(lake)
    assert before["pointer"]["dates"] == {DAY: first.run_id}
    assert {json.loads(r)["msg_id"] for r in before["routing_replay"][1]} == \
        {msg(i) for i in range(1, 5)} | {qm2_msg(i) for i in range(1, 3)}

    # 2. QM2's second put file arrives: one put of QM1's msg(2). Nothing in it is a parse error or a repeat of
    # QM2's own puts, so the day now has 7 messages of which two share a msg_id.
    write_day(root, DAY, "QM2", {"puts_bridge.csv": "\n".join([PUTS_HEADER, BRIDGE_PUT]) + "\n"})
    env = {k: v for k, v in os.environ.items() if k not in ("CLWL_SPARK_VERBOSE", "CLWL_LOCK_WAIT",
                                                            "CLWL_SPARK_MASTER", "CLWL_LANDING", "CLWL_LAKE")}
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "clwl", "run", "--landing", str(root), "--lake", str(lake),
                           "--date", DAY], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    print(f"clwl run (blocked): {time.monotonic() - started:.1f} s")  # the child's own JVM start included

    assert done.returncode == 4, (done.stdout[-3000:], done.stderr[-3000:])
    out = done.stdout
    # What was replayed: 4 + 2 + the bridge's 1 (nothing held back).
    assert f"  {DAY}: BLOCKED by the quality gate; {len(QM1_PUTS) + len(QM2_PUTS) + 1} messages" in out
    assert "the last good published tables stay in place" in out
    failed = [line.removeprefix("    failed: ") for line in out.splitlines() if line.startswith("    failed: ")]
    # The failing checks named, table by table: the silver suite's msg_id uniqueness (the repeated value quoted)
    # and gold.routing_replay's (run_date, msg_id) uniqueness.
    assert any(f.startswith("silver.message_events: expect_column_values_to_be_unique msg_id") and SHARED in f
               for f in failed), failed
    assert any(f.startswith("gold.routing_replay: expect_compound_columns_to_be_unique (run_date, msg_id)")
               for f in failed), failed
    assert {f.split(":")[0] for f in failed} <= {"silver.message_events", "gold.routing_replay"}, failed
    # The validation result printed is where the failed expectations are kept, as GX reported them.
    (result_line,) = [line for line in out.splitlines() if line.startswith("    validation result: ")]
    results = Path(result_line.removeprefix("    validation result: "))
    silver = json.loads((results / "silver.message_events.json").read_text())
    assert silver["success"] is False
    unique = [r for r in silver["results"] if r["expectation_config"]["type"] == "expect_column_values_to_be_unique"]
    assert [(r["success"], r["result"]["unexpected_count"]) for r in unique] == [(False, 2)]  # both copies
    verdict = json.loads((results / "_publish.json").read_text())
    assert verdict["published"] is False and verdict["run_date"] == DAY

    # Gold is what the first run published: the pointer names its run for the day, no table has a commit after
    # it, the rows are the same 6 messages.
    assert gold_state(lake) == before
