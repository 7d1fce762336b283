"""`clwl route --bind asqdef`: MQOO_BIND_AS_Q_DEF, the DEFBIND of the definition the queue name resolves through.

Hand-made estate (tests/handmade.py config_capture), the sender QM1 (CLWLUSEQ ANY, hosting nothing), cluster
CL1, channels TO.QM2 and TO.QM3 RUNNING with CLWLWGHT 50:

    APP.OPEN   on QM2 and QM3, both advertising DEFBIND(OPEN)
    APP.GRP    on QM2 and QM3, both advertising DEFBIND(GROUP)
    ALIAS.NF   a local QALIAS on QM1, DEFBIND(NOTFIXED), TARGET(APP.OPEN)

Expected (docs/algorithm.md: DEFBIND's default is OPEN, an alias's DEFBIND wins over its base queue's; step 12:
equal DestSeqFactors, ties by DestSeqNumber then queue manager name, each choice adds 1000/50 = 20):
- APP.OPEN, 4 messages: bound on open, the first choice (QM2, by name) for all four, not re-allocatable.
- ALIAS.NF, 4 messages: NOTFIXED through the alias, step 12 per message: QM2, QM3, QM2, QM3, re-allocatable.
- APP.GRP, 4 messages in groups of 2 (logical order): QM2, QM2, QM3, QM3, the groups bound (bind-on-group).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clwl.cli import main
from tests.handmade import _record, _runmqsc, config_capture


@pytest.fixture
def qm1(tmp_path: Path) -> Path:
    folder = tmp_path / "QM1"
    folder.mkdir()
    both = lambda extra: {"QM2": dict(extra), "QM3": dict(extra)}  # noqa: E731
    (folder / "config.mqsc").write_text(config_capture(
        "QM1", {"QM2": {}, "QM3": {}}, {"APP.OPEN": both({"DEFBIND": "OPEN"}), "APP.GRP": both({"DEFBIND": "GROUP"})},
        {"CLWLUSEQ": "ANY"}), encoding="utf-8")
    alias = _record("AMQ8409I: Display Queue details.", {"QUEUE": "ALIAS.NF", "TYPE": "QALIAS",
                                                         "TARGET": "APP.OPEN", "DEFBIND": "NOTFIXED"})
    (folder / "aliases.mqsc").write_text(_runmqsc("QM1", [("DISPLAY QALIAS(*) ALL", [alias])]), encoding="utf-8")
    return folder


def route_json(capsys, folder: Path, *args: str) -> list[dict]:
    code = main(["route", "--mqsc", str(folder), "--json", "--bind", "asqdef", *args])
    out = capsys.readouterr().out
    assert code == 0, out
    return [json.loads(line) for line in out.splitlines()]


def test_a_cluster_queue_with_defbind_open_binds_on_open(capsys, qm1):
    rows = route_json(capsys, qm1, "--queue", "APP.OPEN", "--count", "4")
    assert [r["qmgr"] for r in rows] == ["QM2"] * 4
    assert {(r["bind"], r["reallocatable"], r["not_reallocatable_reason"]) for r in rows} == \
        {("open", False, "bind-on-open")}
    assert [r["bound"] for r in rows] == [False, True, True, True]


def test_an_alias_s_defbind_wins_over_its_target_s(capsys, qm1):
    rows = route_json(capsys, qm1, "--queue", "ALIAS.NF", "--count", "4", "--explain")
    assert [r["qmgr"] for r in rows] == ["QM2", "QM3", "QM2", "QM3"]
    assert {(r["bind"], r["reallocatable"]) for r in rows} == {("notfixed", True)}
    assert all("QALIAS(ALIAS.NF) on QM1" in r["bind_source"] for r in rows)
    assert all(r["decided_by"] == "12" for r in rows)


def test_defbind_group_binds_each_group(capsys, qm1):
    rows = route_json(capsys, qm1, "--queue", "APP.GRP", "--count", "4", "--group-size", "2")
    assert [r["qmgr"] for r in rows] == ["QM2", "QM2", "QM3", "QM3"]
    assert {(r["bind"], r["not_reallocatable_reason"]) for r in rows} == {("group", "bind-on-group")}


def test_explain_says_which_definition_decided(capsys, qm1):
    assert main(["route", "--mqsc", str(qm1), "--queue", "APP.OPEN", "--bind", "asqdef", "--explain"]) == 0
    out = capsys.readouterr().out
    assert "bind asqdef: open)" in out
    assert ("bind  MQOO_BIND_AS_Q_DEF -> open: DEFBIND(OPEN) advertised by the instances of APP.OPEN on QM2, QM3"
            in out)
    assert main(["route", "--mqsc", str(qm1), "--queue", "ALIAS.NF", "--bind", "asqdef"]) == 0
    out = capsys.readouterr().out
    assert "bind asqdef: notfixed)" in out and "MQOO_BIND_AS_Q_DEF ->" not in out  # the why with --explain only


def test_the_other_binds_keep_their_output(capsys, qm1):
    """Without asqdef, no "bind" key is added to the contract's JSON lines."""
    assert main(["route", "--mqsc", str(qm1), "--queue", "APP.OPEN", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert "bind" not in row and row["reallocatable"] is True
