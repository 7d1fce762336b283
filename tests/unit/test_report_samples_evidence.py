"""The samples' 2026-11-20 report (the session's published ``samples_lake``): issue 27's sample-specific facts.

- QM4 has channel status captures at 06:00 and 18:00 only (samples/landing/2026-11-20/QM4): 720 min unseen, said in
  the findings and hatched in the picture, as ``clwl check`` says.
- QM5 TO.QM3 is RETRYING 10:00-12:00 and 14:00-17:00; of its 23 stuck messages, 9 waited 10:20-12:00 and 14 from
  13:55 (one seen by the 15:30 browse) to 17:00: each window shows its own count, not 23.
- QM1's 18:00 capture has QM4's APP.ORDERS instance PUT(DISABLED): the configured share of QM4 is 21.7 % (50 of
  CLWLWGHT 50 + 80 + 50 + the local instance's 50 = 230) from 06:00 to 18:00 beside the replay's 53 messages, and
  0.0 % from 18:00 beside none."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def test_the_samples_gap_per_window_counts_and_split_share(samples_lake, tmp_path):
    from clwl.report import Place, write_report
    from clwl.report.build import build_report
    from clwl.report.read import gather

    day = gather(Path(samples_lake.lake), dt.date(2026, 11, 20), "issue-27")
    rep = build_report(day)
    assert any(s.startswith("QM4: no channel status capture from 06:00:00 to 18:00:00 (720 min)")
               for s in rep.findings_evidence)
    assert rep.picture is not None
    cols = rep.channel_trouble.columns
    rows = [dict(zip(cols, [c for c, _ in r])) for r in rep.channel_trouble.rows]
    qm5 = [(r["start"][11:16], r["stuck"]) for r in rows if r["sending_qmgr"] == "QM5" and r["channel"] == "TO.QM3"]
    assert qm5 == [("10:00", "9"), ("14:00", "14")]
    cols = rep.shares.columns
    shares = [dict(zip(cols, [c for c, _ in r])) for r in rep.shares.rows]
    qm4 = [(r["interval"], r["configured"], r["replayed"]) for r in shares
           if r["queue"] == "APP.ORDERS" and r["sending_qmgr"] == "QM1" and r["qmgr"] == "QM4"]
    assert qm4 == [("06:00\u201318:00", "21.7 %", "53"), ("18:00\u201324:00", "0.0 %", "0")]
    html_path, _ = write_report(Place(samples_lake.lake, tmp_path), "2026-11-20", "issue-27")
    assert (html_path.parent / "charts" / "messages_waiting.png").is_file()
