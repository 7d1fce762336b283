"""`clwl route` end to end, as docs/cli-contract.md specifies it (keys, exit codes, readings).

The captures are tests/fixtures/cli/QM1 (runmqsc output as QM1 prints it):
- APP.ORDERS: instances on QM2 (CLUSRCVR CLWLWGHT 80, RUNNING) and QM3 (CLWLWGHT 20, INACTIVE).
- APP.PAY: instances on QM2 and QM4; TO.QM4's CLUSQMGR record says RUNNING but its CHSTATUS says RETRYING.
- APP.HOLD: one instance, on QM4, PUT(DISABLED).
- XMITQ.TO.QM3: a transmission queue with CLCHNAME(TO.QM3); TO.QM3 is inactive and still reports SCTQ.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from clwl.cli import main

CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "cli" / "QM1"
SCTQ = "SYSTEM.CLUSTER.TRANSMIT.QUEUE"


def run(capsys, *args: str) -> tuple[int, list[dict], str]:
    code = main(["route", "--mqsc", str(CAPTURES), *args, "--json"])
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines()], err


def test_weighted_round_robin_follows_1000_over_clwlwght(capsys):
    """Step 12 adds 1000/CLWLWGHT to the chosen channel's DestSeqFactor (contract: exactly, not rounded):
    TO.QM2 (CLWLWGHT 80) += 12.5, TO.QM3 (CLWLWGHT 20) += 50. Both start at 0.

    msg1: DSF 0/0, DSN 0/0 -> tie -> queue manager name: QM2 (DSF 12.5, DSN 1)
    msg2: QM3 has 0 < 12.5 -> QM3 (DSF 50, DSN 2)
    msg3-5: QM2 12.5, 25, 37.5 < 50 -> QM2 three times (DSF 50, DSN 5)
    msg6: 50 = 50, DSN QM3 2 < QM2 5 -> QM3 (DSF 100, DSN 6)
    msg7-10: QM2 50, 62.5, 75, 87.5 < 100 -> QM2 four times."""
    code, rows, _ = run(capsys, "--queue", "APP.ORDERS", "--count", "10")
    assert code == 0
    assert [r["qmgr"] for r in rows] == ["QM2", "QM3", "QM2", "QM2", "QM2", "QM3", "QM2", "QM2", "QM2", "QM2"]
    assert [r["n"] for r in rows] == list(range(1, 11))
    first = rows[0]
    assert {"n", "queue", "qmgr", "channel", "xmitq", "path", "decided_by"} <= set(first)
    assert first["queue"] == "APP.ORDERS" and first["channel"] == "TO.QM2" and first["path"] == "cluster"
    assert first["decided_by"] == "12" and "trace" not in first


def test_running_channel_keeps_its_current_xmitq(capsys):
    """003: a channel queries its transmission queue when it starts; TO.QM3 is INACTIVE and reports
    XMITQ(SYSTEM.CLUSTER.TRANSMIT.QUEUE), so although XMITQ.TO.QM3 has CLCHNAME(TO.QM3) the message is put
    to SCTQ until the channel next starts."""
    code, rows, _ = run(capsys, "--queue", "APP.ORDERS", "--count", "2")
    assert code == 0 and rows[1]["channel"] == "TO.QM3" and rows[1]["xmitq"] == SCTQ


def test_chstatus_overrides_clusqmgr_status(capsys):
    """Contract: a channel's state is its CHSTATUS record if there is one. TO.QM4 is RETRYING there, so with
    two candidates step 6 keeps only the INACTIVE/RUNNING tier (TO.QM2): decided_by 6, every message."""
    code, rows, _ = run(capsys, "--queue", "APP.PAY", "--count", "3")
    assert code == 0
    assert [(r["qmgr"], r["decided_by"]) for r in rows] == [("QM2", "6")] * 3


def test_clusqmgr_status_used_without_chstatus(capsys):
    """Without the CHSTATUS capture TO.QM4's state is its CLUSQMGR STATUS(RUNNING): both stay in tier 1,
    and step 12 alternates (both CLWLWGHT... QM2 80 -> +12.5, QM4 50 -> +20): QM2, QM4, QM2."""
    code = main(["route", "--mqsc", str(CAPTURES / "config.mqsc"), "--queue", "APP.PAY", "--count", "3", "--json"])
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert code == 0 and [r["qmgr"] for r in rows] == ["QM2", "QM4", "QM2"]


def test_explain_trace_shape_and_decision(capsys):
    code, rows, _ = run(capsys, "--queue", "APP.PAY", "--explain")
    assert code == 0
    trace = rows[0]["trace"]
    assert all(set(t) >= {"step", "rule", "eliminated", "remaining"} for t in trace)
    deciding = [t for t in trace if t["step"] == rows[0]["decided_by"]][-1]
    assert deciding["eliminated"] == ["QM4/TO.QM4"] and deciding["remaining"] == ["QM2/TO.QM2"]
    ids = [t["step"] for t in trace if t["step"] not in ("start", "note")]
    assert ids == ["1", "1", "1", "4a", "4b", "5", "6"]  # the document's order, stopping at the decision


def test_unknown_queue_exits_3_with_2085(capsys):
    code, rows, _ = run(capsys, "--queue", "NO.SUCH.QUEUE", "--count", "2")
    assert code == 3
    assert [(r["n"], r["error"], r["reason"]) for r in rows] == [(1, "MQRC_UNKNOWN_OBJECT_NAME", 2085),
                                                                 (2, "MQRC_UNKNOWN_OBJECT_NAME", 2085)]


def test_put_disabled_only_instance_exits_3_with_2268(capsys):
    code, rows, _ = run(capsys, "--queue", "APP.HOLD")
    assert code == 3 and rows[0]["error"] == "MQRC_CLUSTER_PUT_INHIBITED" and rows[0]["reason"] == 2268


def test_bind_open_chooses_once(capsys):
    """--bind open: the algorithm runs once, at MQOPEN; all messages follow, none is re-allocatable
    (002: bind-on-open messages carry an all-zero AccountingToken)."""
    code, rows, _ = run(capsys, "--queue", "APP.ORDERS", "--count", "4", "--bind", "open")
    assert code == 0
    assert {r["qmgr"] for r in rows} == {"QM2"}
    assert all(r["reallocatable"] is False and r["not_reallocatable_reason"] == "bind-on-open" for r in rows)


def test_bind_group_chooses_per_group(capsys):
    """--bind group --group-size 2: group 1 -> QM2 (tie on name; DSF 12.5), group 2 -> QM3 (DSF 0 < 12.5),
    group 3 -> QM2 (12.5 < 50)."""
    code, rows, _ = run(capsys, "--queue", "APP.ORDERS", "--count", "6", "--bind", "group", "--group-size", "2")
    assert code == 0
    assert [r["qmgr"] for r in rows] == ["QM2", "QM2", "QM3", "QM3", "QM2", "QM2"]
    assert all(r["not_reallocatable_reason"] == "bind-on-group" for r in rows)


def test_named_target_qmgr(capsys):
    """Reading 6: with --qmgr the candidates are the channels to that queue manager; the single channel
    TO.QM3 remains after step 2. A named target queue manager is never re-allocated (002)."""
    code, rows, _ = run(capsys, "--queue", "ANY.QUEUE", "--qmgr", "QM3")
    assert code == 0
    r = rows[0]
    assert (r["qmgr"], r["channel"], r["decided_by"], r["reallocatable"]) == ("QM3", "TO.QM3", "2", False)


def test_files_and_folder_read_alike(capsys):
    a = run(capsys, "--queue", "APP.ORDERS", "--count", "5")[1]
    code = main(["route", "--mqsc", str(CAPTURES / "config.mqsc"), "--mqsc", str(CAPTURES / "chstatus.mqsc"),
                 "--queue", "APP.ORDERS", "--count", "5", "--json"])
    b = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert code == 0 and a == b


def test_local_qmgr_must_match_the_view(capsys):
    """--local-qmgr overrides the banner. Named QM2, the captures' own CLUSRCVR (QM1) is just another
    queue manager and QM2's channel record now describes the local queue manager: APP.ORDERS on QM2 is
    the local instance, and QM2's CLWLUSEQ defaults to the DISPLAY QMGR value LOCAL... which only counts
    for QM1's QMGR record, so CLWLUSEQ falls back to the default LOCAL: the local instance is chosen at 3."""
    code, rows, _ = run(capsys, "--queue", "APP.ORDERS", "--local-qmgr", "QM2")
    assert code == 0 and rows[0]["qmgr"] == "QM2" and rows[0]["path"] == "local" and rows[0]["decided_by"] == "3"
    assert rows[0]["channel"] is None and rows[0]["xmitq"] is None


def test_readable_table(capsys):
    code = main(["route", "--mqsc", str(CAPTURES), "--queue", "APP.ORDERS", "--count", "3"])
    out = capsys.readouterr().out
    assert code == 0
    assert "decided_by" in out and "TO.QM2" in out and "Distribution" in out


@pytest.mark.parametrize("make_input, reason", [
    (lambda d: d / "missing.mqsc", "no such file"),
    (lambda d: (d / "notes.txt").write_text("just some notes\nnothing else\n") and d / "notes.txt",
     "runmqsc"),
])
def test_unreadable_input_exits_2_naming_the_file(tmp_path, make_input, reason):
    path = make_input(tmp_path)
    p = subprocess.run([sys.executable, "-m", "clwl.cli", "route", "--mqsc", str(path), "--queue", "Q"],
                       capture_output=True, text=True)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and reason in lines[0].lower()
    assert p.stdout == ""


def test_unknown_profile_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as e:
        main(["route", "--mqsc", str(CAPTURES), "--queue", "Q", "--algorithm", "v99"])
    assert e.value.code == 2


def _estate(tmp_path: Path, states: dict[str, str], qmgr_attrs: dict[str, str] | None = None) -> Path:
    """QM1's view: APP.ORDERS on QM2 and QM3, with the channel states given (a hand-made capture)."""
    from tests.handmade import chstatus_capture, config_capture

    folder = tmp_path / "QM1"
    folder.mkdir()
    (folder / "config.mqsc").write_text(config_capture("QM1", {"QM2": {}, "QM3": {}},
                                                       {"APP.ORDERS": {"QM2": {}, "QM3": {}}}, qmgr_attrs))
    (folder / "chstatus.mqsc").write_text(chstatus_capture("QM1", states))
    return folder


def test_the_table_shows_the_chosen_channel_state_and_who_waits(capsys, tmp_path):
    """docs/algorithm.md, steps 6-9: a channel in RETRYING is chosen when no better tier is left. With the target
    queue manager named (ObjectQMgrName QM3, reading 6: only the channels to QM3 are candidates), both messages go
    to TO.QM3 though it is RETRYING, and wait on SYSTEM.CLUSTER.TRANSMIT.QUEUE until it runs: the table says so.
    A message to the queue alone goes to QM2 (step 6 keeps the RUNNING channel), which waits for nothing."""
    folder = _estate(tmp_path, {"TO.QM2": "RUNNING", "TO.QM3": "RETRYING"})
    assert main(["route", "--mqsc", str(folder), "--queue", "APP.ORDERS", "--qmgr", "QM3", "--count", "2"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[2].split() == ["n", "qmgr", "channel", "state", "xmitq", "path", "decided_by",
                                           "reallocatable"]
    assert out.splitlines()[3].split()[:5] == ["1", "QM3", "TO.QM3", "RETRYING", "SYSTEM.CLUSTER.TRANSMIT.QUEUE"]
    assert "2 message(s) wait on SYSTEM.CLUSTER.TRANSMIT.QUEUE until TO.QM3 runs again (it is RETRYING" in out
    assert main(["route", "--mqsc", str(folder), "--queue", "APP.ORDERS"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[3].split()[:4] == ["1", "QM2", "TO.QM2", "RUNNING"] and "wait on" not in out


@pytest.mark.parametrize("attrs, missing", [({}, "QSGNAME and IGQ(ENABLED)"), ({"QSGNAME": "QSG1"}, "IGQ(ENABLED)"),
                                            ({"QSGNAME": "QSG1", "IGQ": "ENABLED"}, None)])
def test_qsg_member_without_a_queue_sharing_group_says_it_does_nothing(capsys, tmp_path, attrs, missing):
    """docs/algorithm.md (004): the intra-group queuing path needs the sending queue manager's QSGNAME and
    IGQ(ENABLED); --qsg-member alone changes nothing, and the command says so instead of staying silent."""
    folder = _estate(tmp_path, {"TO.QM2": "RUNNING", "TO.QM3": "RUNNING"}, attrs)
    assert main(["route", "--mqsc", str(folder), "--queue", "APP.ORDERS", "--qsg-member", "QM2"]) == 0
    err = capsys.readouterr().err
    if missing:
        assert f"--qsg-member does nothing: QM1's DISPLAY QMGR has no {missing}" in err
    else:
        assert "--qsg-member" not in err
