"""`clwl check` and the ingest hold back the same put rows for the same reasons (issue 26 item 2): both apply
clwl.landing.held_back, the check in Python over the landing folder, the ingest in Spark over bronze. One landing, one
date, sender QM1, three put files read in name order (a fresh lake ingests them all in one run, so copies are kept
by file name, then position):

- puts_a.csv: msg 1, 2, 3 at 10:00-10:02, and msg 4 put at 23:59:59.999 on the day before (the date rule);
- puts_b.csv: msg 2 again, the very same record (a duplicate: "the same record"), and msg 3 again with another
  length (a duplicate: "it differs in length"), then msg 5;
- puts_c.csv: msg 5 again, to another queue (it differs in queue).

Held back, by the rules of clwl.landing.held_back: a.csv line 5 (date), b.csv lines 2 and 3, c.csv line 2: four rows, each
with the reason text the ingest writes to silver.quarantine, and the check prints the same four.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from spark.config import PipelineConfig
from tests.handmade import PUTS_HEADER, chstatus_capture, config_capture, msg, put_row, write_day

pytestmark = [pytest.mark.spark]

DAY = "2026-11-20"
T0 = datetime(2026, 11, 20, 10, 0, tzinfo=timezone.utc)


def _landing(root):
    queues = {"APP.ORDERS": {"QM2": {}, "QM3": {}}, "APP.OTHER": {"QM2": {}}}
    a = [put_row(T0 + timedelta(minutes=i), "QM1", "APP.ORDERS", msg(i + 1)) for i in range(3)]
    a.append(put_row(datetime(2026, 11, 19, 23, 59, 59, 999000, tzinfo=timezone.utc), "QM1", "APP.ORDERS", msg(4)))
    b = [a[1], put_row(T0 + timedelta(minutes=2), "QM1", "APP.ORDERS", msg(3), length=999),
         put_row(T0 + timedelta(minutes=5), "QM1", "APP.ORDERS", msg(5))]
    c = [put_row(T0 + timedelta(minutes=5), "QM1", "APP.OTHER", msg(5))]
    write_day(root, DAY, "QM1", {
        "config_060000.mqsc": config_capture("QM1", {"QM2": {}, "QM3": {}}, queues),
        "chstatus_060000.mqsc": chstatus_capture("QM1", {"TO.QM2": "RUNNING", "TO.QM3": "RUNNING"}),
        **{f"puts_{n}.csv": "\n".join([PUTS_HEADER, *rows]) + "\n" for n, rows in (("a", a), ("b", b), ("c", c))}})
    return root


def test_check_and_ingest_hold_back_the_same_rows_with_the_same_reasons(spark, tmp_path):
    from clwl.analyses.check import check_landing
    from clwl.lake.door import Lake
    from spark.ingest import ingest

    landing = _landing(tmp_path / "landing")
    checked = check_landing(landing)
    from_check = sorted((f.source_file, p.position, p.reason) for f in checked.files for p in f.problems
                        if p.level == "message")

    config = PipelineConfig(lake=tmp_path / "lake", landing=landing)
    ingest(config, [DAY], spark=spark, progress=lambda line: None)
    rows = Lake(config.lake).rows("silver.quarantine").to_pylist()
    from_ingest = sorted((r["source_file"], r["position"], r["reason"]) for r in rows if r["level"] == "message")

    assert from_check == from_ingest, (from_check, from_ingest)
    where = {(f.rsplit("/", 1)[-1], line): reason for f, line, reason in from_ingest}
    assert set(where) == {("puts_a.csv", 5), ("puts_b.csv", 2), ("puts_b.csv", 3), ("puts_c.csv", 2)}
    assert where[("puts_a.csv", 5)].startswith("put time 2026-11-19T23:59:59.999Z is not in run date 2026-11-20")
    assert where[("puts_b.csv", 2)].endswith("is not replayed (the same record)")
    assert where[("puts_b.csv", 3)].endswith("is not replayed (it differs in length; the kept copy is replayed)")
    assert where[("puts_c.csv", 2)].endswith("(it differs in queue; the kept copy is replayed)")
    assert "already in " in where[("puts_c.csv", 2)] and "puts_b.csv line 4" in where[("puts_c.csv", 2)]
