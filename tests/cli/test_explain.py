"""`clwl explain MSG_ID` (issue 19, item 13): one replayed message step by step, without Spark, in the words of
`clwl route --explain`, then its fate.

The session's lake of the hand-made re-allocation day (tests/conftest.py reallocation_lake, tests/handmade.py; the
outcomes are derived in tests/spark/test_reallocation_day.py's docstring from docs/algorithm.md):

  06:00 config; CHSTATUS TO.QM2 RETRYING, TO.QM3 RETRYING      07:00 CHSTATUS TO.QM2 RUNNING, TO.QM3 RETRYING
  M1 06:01 not fixed -> QM2 (step 12), waits behind TO.QM2; released 07:00 (TO.QM2 RUNNING)
  M4 06:04 not fixed -> QM3 (step 12: DSF QM2 40 > QM3 20), waits behind TO.QM3; at 07:00 TO.QM3 RETRYING again:
     re-driven, step 6 keeps only TO.QM2 (the one RUNNING channel): re-allocated to QM2, delivered 07:00
  M5 06:05 names QM3 -> QM3 (step 2), waits; not eligible (named queue manager): stays, held to the end of day
  M6 07:30 not fixed -> QM2 (step 6), delivered at once

Added here: the put file says M4 arrived at QM2 (the replay agrees) and M6 at QM3 (the replay has QM2: a
disagreement), so the observed destination and the agreement are shown from the real columns.

Where the trace must equal `clwl route --explain`: `clwl route` on the same landing folder with `--at` the put
time uses the same captures (the latest at or before it), and routes from a fresh routing state, so:
- M4 is the 4th of `--count 4` at 06:04: M1-M3 moved the state exactly as the replay's M1-M3 did (M3's bind on
  open is a first open, recorded by step 12 like a not-fixed choice), so DestSeqFactor/Number as they stood match;
- M5 is decided by step 2 and M6 by step 6, before step 12 reads the state: one message from a fresh state.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest

from tests.handmade import DAY, msg

pytestmark = [pytest.mark.spark, pytest.mark.slow]

M1, M4, M5, M6 = msg(1), msg(4), msg(5), msg(6)


def _utc(hh: int, mm: int) -> datetime:
    return datetime(2026, 11, 20, hh, mm, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def lake(reallocation_lake) -> tuple[Path, Path]:
    """The session's re-allocation lake (tests/conftest.py), with the observed columns this module reads."""
    return reallocation_lake.lake, reallocation_lake.landing / DAY / "QM1"


def _clwl(capsys, *argv: str) -> tuple[int, str, str]:
    from clwl.cli import main

    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _blocks(text: str) -> list[list[str]]:
    """The per-message blocks of `clwl route --explain` output: the table header, the row (its message number
    left out: the replay's message is number 1 of its own output), the trace lines."""
    lines = text.splitlines()
    starts = [i for i, ln in enumerate(lines) if ln.startswith("n  qmgr")]
    out = []
    for s in starts:
        block = [lines[s], re.sub(r"^\d+ ", "", lines[s + 1])]
        for ln in lines[s + 2:]:
            if not ln.startswith("    "):
                break
            block.append(ln)
        out.append(block)
    return out


def _route_part(text: str) -> str:
    """The part of `clwl explain` that `clwl route --explain` prints: from its "Routing ..." line to "Fate"."""
    start, end = text.index("Routing 1 message(s)"), text.index("Fate (gold.routing_replay)")
    return text[start:end]


def test_a_reallocated_message_in_the_state_it_met(lake, capsys):
    root, qm1 = lake
    code, out, err = _clwl(capsys, "explain", M4, "--lake", str(root))
    assert code == 0, err
    # The trace: the 4th message of `clwl route --count 4 --explain` at 06:04 (the module docstring says why).
    rc, routed, _ = _clwl(capsys, "route", "--mqsc", str(qm1), "--at", "06:04", "--queue", "Q1", "--count", "4",
                          "--explain")
    assert rc == 0
    assert _blocks(_route_part(out)) == [_blocks(routed)[3]]
    assert _route_part(out).startswith("Routing 1 message(s) to Q1 from QM1 (profile default, bind notfixed)\n")
    # The state it met: M1 and M3 to TO.QM2 (20 each), M2 to TO.QM3 (20); DestSeqNumbers 1, 2, 3.
    assert ("after 3 earlier message(s) of QM1 that day (the lowest DestSeqFactor is chosen, then the lowest "
            "DestSeqNumber):\n           TO.QM2  DestSeqFactor 40, DestSeqNumber 3\n"
            "           TO.QM3  DestSeqFactor 20, DestSeqNumber 2\n") in out
    assert "config   the captures in force at the put: 2026-11-20 06:00:00 UTC" in out
    fate = out[out.index("Fate"):]
    assert "waited on SYSTEM.CLUSTER.TRANSMIT.QUEUE behind TO.QM3 from 2026-11-20 06:04:00 UTC (RETRYING)" in fate
    assert ("2026-11-20 07:00:00 UTC TO.QM3 RETRYING: re-allocated to QM2/TO.QM2 (step 6 of the algorithm driven "
            "again): left for a working channel") in fate
    assert "delivered 2026-11-20 07:00:00 UTC to QM2/TO.QM2 after 1 re-allocation(s)" in fate
    assert "observed at QM2: agrees with the replay" in fate
    assert "The replay here agrees with gold.routing_replay" in out

    code, out, _ = _clwl(capsys, "explain", M4.lower(), "--lake", str(root), "--date", DAY, "--json")
    doc = json.loads(out)
    assert code == 0 and doc["msg_id"] == M4 and doc["sending_qmgr"] == "QM1" and doc["run_date"] == DAY
    assert doc["routing_state"] == {"TO.QM2": {"dest_seq_factor": "40", "dest_seq_number": 3},
                                    "TO.QM3": {"dest_seq_factor": "20", "dest_seq_number": 2}}
    assert (doc["route"]["qmgr"], doc["route"]["channel"], doc["route"]["decided_by"]) == ("QM3", "TO.QM3", "12")
    (again,) = doc["reexaminations"]
    assert (again["at"], again["channel"], again["state"], again["moved"], again["to_qmgr"], again["waits_again"]) \
        == ("2026-11-20T07:00:00+00:00", "TO.QM3", "RETRYING", True, "QM2", False)
    # The re-driven algorithm's trace: step 6 eliminates TO.QM3 (RETRYING), TO.QM2 RUNNING remains.
    step6 = [t for t in again["redriven"]["trace"] if t["step"] == "6"]
    assert step6 and step6[0]["eliminated"] == ["QM3/TO.QM3"] and step6[0]["remaining"] == ["QM2/TO.QM2"]
    f = doc["fate"]
    assert (f["reallocations"], f["final_qmgr"], f["final_channel"], f["held"], f["stay_reason"]) == \
        (1, "QM2", "TO.QM2", False, None)
    assert (f["held_from"], f["released_at"], f["delivered_at"]) == (
        "2026-11-20T06:04:00+00:00", "2026-11-20T07:00:00+00:00", "2026-11-20T07:00:00+00:00")
    assert doc["matches_routing_replay"] is True and doc["differences"] == []
    assert doc["seconds"]["replay"] >= 0


def test_a_stuck_message_says_why_it_stayed(lake, capsys):
    root, qm1 = lake
    code, out, err = _clwl(capsys, "explain", M5, "--lake", str(root))
    assert code == 0, err
    rc, routed, _ = _clwl(capsys, "route", "--mqsc", str(qm1), "--at", "06:05", "--queue", "Q1", "--qmgr", "QM3",
                          "--explain")
    assert rc == 0
    assert _route_part(out) == routed  # step 2 decides: the same text as a fresh `clwl route`, every line of it
    fate = out[out.index("Fate"):]
    assert "07:00:00 UTC TO.QM3 RETRYING: stayed: not eligible for re-allocation: the application named the " \
           "target queue manager" in fate
    assert ("still waiting at the end of the day behind TO.QM3 (RETRYING) since 2026-11-20 06:05:00 UTC: not "
            "eligible for re-allocation: the application named the target queue manager") in fate
    assert "not observed" in fate

    doc = json.loads(_clwl(capsys, "explain", M5, "--lake", str(root), "--json")[1])
    (stay,) = doc["reexaminations"]
    assert (stay["moved"], stay["stay_reason"], stay["stay_detail"], "redriven" in stay) == \
        (False, "not-reallocatable", "named-qmgr", False)  # not eligible: the algorithm is not driven again
    assert (doc["fate"]["held"], doc["fate"]["delivered_at"], doc["fate"]["agrees"]) == (True, None, None)


def test_a_delivered_message_and_a_disagreement(lake, capsys):
    root, qm1 = lake
    code, out, err = _clwl(capsys, "explain", M6, "--lake", str(root))
    assert code == 0, err
    rc, routed, _ = _clwl(capsys, "route", "--mqsc", str(qm1), "--at", "07:30", "--queue", "Q1", "--explain")
    assert rc == 0 and _route_part(out) == routed  # step 6 decides before the state is read
    fate = out[out.index("Fate"):]
    assert "delivered 2026-11-20 07:30:00 UTC to QM2/TO.QM2: its channel was moving messages" in fate
    assert "observed at QM3: DISAGREES: the replay has QM2/TO.QM2" in fate
    assert "waited" not in fate and "re-allocated" not in fate
    # The route explained is gold's row's first destination: said once, with the version read.
    assert re.search(r"The replay here agrees with gold.routing_replay \(version \d+\): first destination "
                     r"QM2/TO.QM2, ", out)

    doc = json.loads(_clwl(capsys, "explain", M6, "--lake", str(root), "--json")[1])
    _, routed_json, _ = _clwl(capsys, "route", "--mqsc", str(qm1), "--at", "07:30", "--queue", "Q1", "--explain",
                              "--json")
    assert doc["route"] == json.loads(routed_json)  # the same object as `clwl route --json --explain`
    assert doc["fate"]["agrees"] is False and doc["fate"]["observed_qmgr"] == "QM3"
    assert doc["reexaminations"] == [] and doc["released"] is None


def test_a_message_released_when_its_channel_runs_again(lake, capsys):
    root, _ = lake
    doc = json.loads(_clwl(capsys, "explain", M1, "--lake", str(root), "--json")[1])
    assert doc["routing_state"] == {} and doc["earlier_messages"] == 0  # the day's first choice
    assert doc["released"] == {"at": "2026-11-20T07:00:00+00:00", "channel": "TO.QM2", "state": "RUNNING"}
    assert doc["reexaminations"] == []  # TO.QM2 was never seen not moving after the put, until it ran again
    out = _clwl(capsys, "explain", M1, "--lake", str(root))[1]
    assert "(the lowest DestSeqFactor is chosen, then the lowest DestSeqNumber): no destination chosen yet" in out
    assert "2026-11-20 07:00:00 UTC TO.QM2 RUNNING: released, the channel moves messages again" in out


def test_unknown_and_ambiguous_messages_are_one_line_exit_2(lake, capsys, tmp_path):
    from clwl.analyses.explain import ExplainError, pick_row

    root, _ = lake
    code, out, err = _clwl(capsys, "explain", "00" * 24, "--lake", str(root))
    assert code == 2 and out == "" and err.count("\n") == 1 and "not in the published gold.routing_replay" in err
    code, _, err = _clwl(capsys, "explain", M4, "--lake", str(root), "--date", "2026-11-21")
    assert code == 2 and "on 2026-11-21" in err
    # issue 39 item 11: the date that does hold it is named, ready to type.
    assert err.strip().endswith(f"it was replayed on {DAY}: --date {DAY}") and err.count("\n") == 1, err
    code, _, err = _clwl(capsys, "explain", M4, "--lake", str(root), "--date", "2026-11-21", "--sender", "QM9")
    assert code == 2 and "replayed on" not in err  # QM9 never sent it: no other date to name
    # A mistyped id is refused before the lake is read: an id has 48 hex digits.
    for bad, says in ((M4[:-1], "and 47 digits"), (M4[:-2] + "ZZ", "'Z' is not hex"), ("", "and 0 digits")):
        code, out, err = _clwl(capsys, "explain", bad, "--lake", str(tmp_path / "nowhere"))
        assert code == 2 and out == "" and err.count("\n") == 1, err
        assert "is not a message id: an id has 48 hex digits" in err and says in err, err
    code, _, err = _clwl(capsys, "explain", M4, "--lake", str(tmp_path / "nowhere"))
    assert code == 2 and err.startswith("clwl explain: no lake at")
    code, _, err = _clwl(capsys, "explain", M4, "--lake", str(tmp_path))
    assert code == 2 and "no published gold.routing_replay" in err
    # Two run dates replayed the same id (a re-sent export on the next day): --date chooses.
    rows = [{"run_date": "2026-11-20", "sending_qmgr": "QM1"}, {"run_date": "2026-11-21", "sending_qmgr": "QM1"}]
    with pytest.raises(ExplainError, match=r"replayed 2 times \(2026-11-20 from QM1, 2026-11-21 from QM1\): "
                                           r"name one with --date"):
        pick_row(rows, M4, None, None)
    assert pick_row(rows[:1], M4, None, None) is rows[0]


def test_no_spark_session_is_started(lake):
    """In a fresh process (this one holds the module's Spark session) where pyspark cannot be imported at all: the
    command answers all the same (clwl/analyses/explain.py reads the lake with deltalake and routes with the engine)."""
    import subprocess
    import sys

    root, _ = lake
    probe = ("import sys; sys.modules['pyspark'] = None; sys.modules['py4j'] = None\n"
             "from clwl.cli import main; code = main(['explain', sys.argv[1], '--lake', sys.argv[2]])\n"
             "print('spark modules:', sorted(m for m in sys.modules if m.split('.')[0] == 'spark' and "
             "sys.modules[m] is not None)); sys.exit(code)")
    done = subprocess.run([sys.executable, "-c", probe, M4, str(root)], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr
    assert "Fate (gold.routing_replay)" in done.stdout
    assert done.stdout.rstrip().endswith("spark modules: []")


def test_a_message_nobody_traced_has_no_flow(lake, capsys):
    """The re-allocation day has no activity trace: the flow is one line, and --json's flow is empty."""
    code, out, _ = _clwl(capsys, "explain", M6, "--lake", str(lake[0]))
    assert code == 0
    flow = out[out.index("Flow"):]
    assert "not traced: no application's or channel agent's activity trace names this message id" in flow
    code, out, _ = _clwl(capsys, "explain", M6, "--lake", str(lake[0]), "--json")
    doc = json.loads(out)
    assert doc["flow"] == [] and doc["fate"]["timing_agrees"] is None
