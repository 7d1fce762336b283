"""`clwl blast` on the command line (issue 28): its refusals (exit 2, one line, no Spark), and on the session's
published samples (tests/conftest.py samples_lake) the answer the samples' story gives (samples/README.md, "The
story, with times", and the held messages' table).

2026-11-20's busiest hour is 13:00-14:00 UTC. What one hour of QM3 (TO.QM3 on QM1 and on QM5) STOPPED then
leaves stuck, from the story (in the day as it was TO.QM3 moves messages until 13:52, and the captures show it
RETRYING only from 14:00):
- QM1's orders-batch session `orders-batch:22453:7`, opened 12:31:28 and bound to QM3 (bind on open), puts every
  4 minutes: 13:03:28 ... 13:59:28 are 15 puts in the hour, each waiting behind TO.QM3 and not re-allocatable;
- orders-recon names QM3 at HH:40: the 13:40 message (named queue manager);
- APP.AUDIT has its only instance on QM3: orders-api's APP.AUDIT records of the hour (2) wait, still the most
  favourable destination (single instance);
- what begins inside the hour chooses among the channels still moving: the group of orders-batch started 13:12:58
  and QM5's billing-batch session opened 13:15:22 are not bound to QM3, so they are not stuck.
So 18 stuck (bind-on-open 15, named-qmgr 1, single-instance 2), all from QM1 (TO.QM3 of QM5: none). The stop's
wait: the longest is the 13:03:28 put's, to 14:00, 56 min 31 s and a fraction. At 14:00 the window ends on the day's own capture
of TO.QM3 RETRYING (QM3's host failed at 13:52), so all 18 wait on until the 17:00 capture shows it RUNNING: 3 h
more, the day's own outage, reported apart (issue 39: never one wait of 3 h 56 min for a one-hour stop).
"""

from __future__ import annotations

import json
import re

import pytest

from clwl.cli import main


def _clwl(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_refusals_are_one_line_and_exit_2(capsys, tmp_path):
    code, out, err = _clwl(capsys, "blast", "--lake", str(tmp_path / "none"), "--date", "2026-11-20")
    assert (code, out) == (2, "") and err == f"clwl blast: no lake at {tmp_path / 'none'} (name it with --lake or " \
                                             "$CLWL_LAKE)\n"
    code, out, err = _clwl(capsys, "blast", "--lake", str(tmp_path), "--date", "2026-11-20")
    assert code == 2 and err == f"clwl blast: no silver.message_events in {tmp_path} (run `clwl run` first, or " \
                                "name the lake with --lake)\n"
    code, out, err = _clwl(capsys, "blast", "--lake", str(tmp_path))
    assert code == 2 and err == "clwl blast: --date is required: the run date to examine (YYYY-MM-DD)\n"


@pytest.mark.spark
@pytest.mark.slow
def test_the_samples_single_point_of_failure_is_qm3(samples_lake, capsys):
    lake = str(samples_lake.lake)
    code, out, err = _clwl(capsys, "blast", "--lake", lake, "--date", "2026-11-20", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["run_date"] == "2026-11-20" and d["busiest_hour"] == "13:00-14:00"
    top = d["cases"][0]
    assert (top["kind"], top["name"], top["sender"], top["stuck"]) == ("qmgr", "QM3", None, 18)
    assert top["by_reason"] == {"bind-on-open": 15, "named-qmgr": 1, "single-instance": 2}
    assert {q: c["stuck"] for q, c in top["queues"].items() if c["stuck"]} == {"APP.ORDERS": 16, "APP.AUDIT": 2}
    assert {a: c["stuck"] for a, c in top["applications"].items() if c["stuck"]} == {
        "orders-batch": 15, "orders-recon": 1, "orders-api": 2}
    assert 56 * 60 + 31 <= top["longest_wait_seconds"] < 56 * 60 + 32  # 13:03:28.x to 14:00
    assert top["own_outage"] == {"messages": 18, "longest_seconds": 3 * 3600, "until": "2026-11-20T17:00:00+00:00"}
    cases = {(c["kind"], c["name"], c["sender"]): c for c in d["cases"]}
    assert cases[("channel", "TO.QM3", "QM1")]["stuck"] == 18 and cases[("channel", "TO.QM3", "QM5")]["stuck"] == 0
    assert [c["stuck"] for c in d["cases"]] == sorted((c["stuck"] for c in d["cases"]), reverse=True)

    code, out, err = _clwl(capsys, "blast", "--lake", lake, "--date", "2026-11-20")
    assert code == 0, err
    assert "busiest hour, 13:00-14:00 UTC" in out
    assert re.search(r"^queue manager QM3 +all +18 .* 56m 31s +18 held until 17:00, the longest 3h 00m more$", out,
                     re.M)
    code, out, err = _clwl(capsys, "blast", "--lake", lake, "--date", "2026-11-21")
    assert code == 2 and err == (f"clwl blast: no messages of 2026-11-21 in silver.message_events of {lake} (its run "
                                 "dates: 2026-11-19, 2026-11-20)\n")
