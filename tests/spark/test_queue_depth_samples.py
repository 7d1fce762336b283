"""gold.queue_depth as `clwl run` publishes it for the bundled samples (the session's samples_lake: no pipeline run
of its own), and `clwl depth` reading it without a JVM.

The samples trace only QM5's cluster-sender agents on 2026-11-20 (their MQGETs from CLUS.XMITQ.QM and
CLUS.XMITQ.QM2); the applications' puts are puts.csv rows, not traced. So every depth the trace could give is an
evidence gap (docs/depth.md): the transmission queues lose messages whose arrival no trace holds (at the first get
the queue is empty: the start, from the 06:00 capture's CURDEPTH 0 and no traced change before it, is 0), and QM2,
QM3 and QM4, to which QM5's agents sent messages, have no trace at all. The published table therefore holds no row
on either date (a wrong line would be rows), and `clwl depth` names the gaps. Rebuilt depths equal to a generator's
truth: tests/unit/test_depth_generated.py."""

from __future__ import annotations

import contextlib
import io
import json
from datetime import date

import pytest

from clwl.analyses.depth_day import day_depth
from clwl.cli import main
from clwl.lake.door import Lake

pytestmark = [pytest.mark.spark]


def test_the_samples_publish_an_empty_depth_table_and_clwl_depth_names_the_gaps(samples_lake):
    lk = Lake(samples_lake.lake)
    pub = lk.published()
    assert pub.visible("queue_depth")
    for day in ("2026-11-19", "2026-11-20"):
        rows = lk.rows("gold.queue_depth", filters=[("run_date", "=", date.fromisoformat(day))],
                       version=pub.version("queue_depth"))
        assert rows.num_rows == 0, day
    rebuilt, _ = day_depth(lk, "2026-11-20")  # what detect staged: gaps, no line
    assert rebuilt.changes == []
    assert sorted((g.qmgr, g.queue) for g in rebuilt.gaps) == [
        ("QM2", None), ("QM3", None), ("QM4", None), ("QM5", "CLUS.XMITQ.QM"), ("QM5", "CLUS.XMITQ.QM2")]

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["depth", "--lake", str(samples_lake.lake), "--queue", "CLUS.XMITQ.QM2", "--qmgr", "QM5",
                     "--date", "2026-11-20", "--json"])
    assert code == 0
    found = json.loads(out.getvalue())
    assert found["lines"] == [] and [(g["qmgr"], g["queue"]) for g in found["gaps"]] == [("QM5", "CLUS.XMITQ.QM2")]
    assert "putting applications" in found["gaps"][0]["reason"]

    out = io.StringIO()
    with contextlib.redirect_stdout(out):  # a queue of QM2, which has no trace: named, not a flat line
        assert main(["depth", "--lake", str(samples_lake.lake), "--queue", "APP.BILLING", "--qmgr", "QM2",
                     "--date", "2026-11-20"]) == 0
    assert "gap  QM2: no activity trace from this queue manager on the day" in out.getvalue()
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(["depth", "--lake", str(samples_lake.lake), "--queue", "NO.SUCH.Q", "--date", "2026-11-20"]) == 2
    assert err.getvalue().count("\n") == 1 and "NO.SUCH.Q" in err.getvalue()
