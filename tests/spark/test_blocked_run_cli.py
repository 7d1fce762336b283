"""`clwl run` exits 4 when the quality gate blocks publishing (docs/cli-contract.md, README "Exit codes"), end to
end: the real command in a child process, on a landing whose day fails a Great Expectations check because of its
data, not because of an edited suite.

The data: two sending queue managers put a message with the same MsgId on one day. An application may set MsgId
itself (a bridge that takes a message from QM1 and puts it again on QM2 keeps its MsgId, for one), so every file
parses and nothing is held back (docs/landing.md, "Held back": a repeat is held back only when the *same* sender
put it before), yet the expectation suites ask for a msg_id once per run date: `silver.message_events`
(expectations/silver.message_events.json, expect_column_values_to_be_unique msg_id) and `gold.routing_replay`
((run_date, msg_id) unique). So the gate blocks the day.

`clwl run` runs on a fresh lake: exit 4, the failed expectations and the validation result are printed, and
nothing of the day is published (no pointer names it). That a blocked gate keeps the last good published
version, rows and pointer alike, is tests/spark/test_quality_publish.py's (in-process, sparing a second run here).

The run is the session fixture ``blocked_day_runs`` (tests/conftest.py): a second `clwl run` of the day, started
while this one holds the lake lock, is refused at once, which tests/spark/test_lake_lock.py checks; one pipeline
run serves both files.
"""

from __future__ import annotations

import datetime as dt
import json
from datetime import timedelta
from pathlib import Path

import pytest

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


def blocked_landing(root: Path) -> Path:
    """QM1 and QM2 of cluster CL1 each put to APP.ORDERS (instances on QM2 and QM3), with their own configuration
    and channel status captured at 06:00: 4 puts from QM1, 2 from QM2, every MsgId different. Then QM2's second
    put file: one put of QM1's msg(2). Nothing in it is a parse error or a repeat of QM2's own puts, so the day has
    7 messages of which two share a msg_id."""
    queues = {"APP.ORDERS": {"QM2": {}, "QM3": {}}}
    for qm, others, rows in (("QM1", ("QM2", "QM3"), QM1_PUTS), ("QM2", ("QM1", "QM3"), QM2_PUTS)):
        write_day(root, DAY, qm, {
            "config_060000.mqsc": config_capture(qm, {o: {} for o in others}, queues),
            "chstatus_060000.mqsc": chstatus_capture(qm, {f"TO.{o}": "RUNNING" for o in others}),
            "puts.csv": "\n".join([PUTS_HEADER, *rows]) + "\n"})
    write_day(root, DAY, "QM2", {"puts_bridge.csv": "\n".join([PUTS_HEADER, BRIDGE_PUT]) + "\n"})
    return root


def test_a_day_that_fails_an_expectation_exits_4_and_publishes_nothing(blocked_day_runs):
    done, lake = blocked_day_runs.first, blocked_day_runs.lake  # the child process that held the lake lock

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

    # Nothing of the day reached readers: no pointer names it (a fresh lake: no pointer at all).
    pointer = lake / "gold" / "_published.json"
    assert not pointer.exists() or DAY not in json.loads(pointer.read_text()).get("dates", {})
    # The day's trend facts were made (staged) and held back with the rest: gold.trend_facts has none of them.
    from clwl.lake.door import Lake

    lk = Lake(lake)
    day_filter = [("run_date", "=", dt.date.fromisoformat(DAY))]
    assert lk.rows("staging.trend_facts", ["metric"], filters=day_filter).num_rows > 0
    assert not lk.exists("gold.trend_facts") or lk.rows("gold.trend_facts", ["metric"], filters=day_filter).num_rows == 0
