"""`clwl lint --lake` with the stale-knowledge rules (docs/lint.md), on the samples' published lake (the session's
``samples_lake``: no pipeline run of its own). What the samples hold (samples/README.md):

- 2026-11-20: QM1 captured its configuration at 06:00, 12:00, 14:00, 17:00 and 18:00; QM3 at 06:00 and 14:00, the
  14:00 file not runmqsc output (the ingest rejects it); FR1 and FR2, the full repositories, at 06:00 only.
- QM1's put records of the day: 340, of which APP.ORDERS 80 + 106 + 76 + 53 = 315 (to QM1, QM2, QM3, QM4) and
  APP.AUDIT 25; none arrived over a cluster channel.
- Nothing is stale: QM4's APP.ORDERS went PUT(DISABLED) at 17:55, which the full repositories' 06:00 capture
  cannot show, so no view is compared with an older one.
"""

from __future__ import annotations

from datetime import date, datetime, timezone

from clwl.analyses.lint_lake import config_capture_times, day_messages, lint_lake
from clwl.lake.door import Lake

DAY = date(2026, 11, 20)
STALE_RULES = {"partial-view-differs", "local-definition-differs", "departed-qmgr-chosen", "backout-or-streamq-differs"}


def test_the_samples_lake_has_no_stale_finding_and_reads_the_day_for_the_replay(samples_lake):
    assert not [f for f in lint_lake(samples_lake.lake, DAY.isoformat()) if f.rule in STALE_RULES]

    lk = Lake(samples_lake.lake)
    files = lk.rows("silver.ingest_files", ["run_date", "status", "observing_qmgr", "source_file",
                                            "capture_time"]).to_pylist()
    times = config_capture_times(files, DAY)
    hours = {qm: [t.hour for t in ts] for qm, ts in times.items()}
    assert hours["QM1"] == [6, 12, 14, 17, 18] and hours["QM3"] == [6] and hours["FR1"] == [6]

    read = day_messages(lk, DAY)
    orders = read("QM1", frozenset({"APP.ORDERS"}))
    assert len(orders) == 315 and {m.event.queue for m in orders} == {"APP.ORDERS"}
    assert [m.event.put_time for m in orders] == sorted(m.event.put_time for m in orders)
    assert all(datetime(2026, 11, 20, tzinfo=timezone.utc) <= m.event.put_time for m in orders)
    assert len(read("QM1", frozenset({"APP.ORDERS", "APP.AUDIT"}))) == 340
