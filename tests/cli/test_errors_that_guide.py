"""Errors that guide (issue 39 item 11): each refusal names the command that refused, and says what to type
instead, from what the input holds.

The hand-made landing day 2026-11-20 (tests/handmade.py ``config_capture``, cluster CL1; every queue manager's
DISPLAY QCLUSTER shows the same instances):

    APP.IN    hosted by QM2 and QM3
    APP.OTHER hosted by QM3 alone; nobody puts on it
    FR1  a full repository: hosts nothing, puts nothing (the first folder by name)
    QM1  puts.csv: 2 messages on APP.IN

What each command says, and why (expected lines below):

- ``route`` and ``advise`` read one queue manager's captures, the sending one's. Given the date folder, they
  refuse in their own name, and suggest the queue manager to give: the one whose applications put the most
  messages on --queue that day (QM1 for APP.IN: "QM1's applications put 2 message(s) on APP.IN that day"), else
  one hosting it (QM3 for APP.OTHER: "QM3 hosts APP.OTHER"); never FR1 merely for coming first. Given the whole
  landing folder, the same, in the latest date folder.
- ``lint`` reads a whole date: given the landing folder, it names the date folder (tests/cli/test_lint_day.py).
- ``route --queue NOPE`` on QM1's folder: 2085, and the names QM1's captures know: "the cluster queues QM1
  knows: APP.IN, APP.OTHER"; ``advise --queue NOPE`` says the same.
- ``explain`` with an id that is not 48 hex digits says so before any lake is read.
- ``query`` (on the session's re-allocation lake, whose one run date is 2026-11-20) with a WHERE on 2026-11-19
  finds 0 rows, and says on stderr that 2026-11-19 is not a run date of the lake, naming 2026-11-20; a query
  on 2026-11-20 that finds nothing says nothing more (the date is held).
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from clwl.cli import main
from tests.handmade import DAY, PUTS_HEADER, T0, chstatus_capture, config_capture, put_row, write_day

QUEUES = {"APP.IN": {"QM2": {}, "QM3": {}}, "APP.OTHER": {"QM3": {}}}


def landing(root: Path) -> Path:
    """The landing folder of the docstring."""
    everyone = ["FR1", "QM1", "QM2", "QM3"]
    for qm in everyone:
        remotes = {r: {} for r in everyone if r != qm}
        write_day(root, DAY, qm, {"config_060000.mqsc": config_capture(qm, remotes, QUEUES, {"CLWLUSEQ": "ANY"}),
                                  "chstatus_060000.mqsc": chstatus_capture(qm, {f"TO.{r}": "RUNNING" for r in remotes})})
    ids = ["414D5120514D31202020202020202020" + f"{n:016X}" for n in (1, 2)]
    write_day(root, DAY, "QM1", {"puts.csv": "\n".join(
        [PUTS_HEADER] + [put_row(T0 + timedelta(minutes=n), "QM1", "APP.IN", m) for n, m in enumerate(ids)]) + "\n"})
    return root


def clwl(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


ADVISE = ("--target", "QM2=50,QM3=50")


@pytest.mark.parametrize("command, queue, suggested", [
    ("route", "APP.IN", "QM1 (QM1's applications put 2 message(s) on APP.IN that day)"),
    ("advise", "APP.IN", "QM1 (QM1's applications put 2 message(s) on APP.IN that day)"),
    ("route", "APP.OTHER", "QM3 (QM3 hosts APP.OTHER)"),
    ("advise", "APP.OTHER", "QM3 (QM3 hosts APP.OTHER)"),
])
def test_a_date_folder_is_refused_in_the_command_s_name_with_a_queue_manager_that_sends_or_hosts(
        capsys, tmp_path, command, queue, suggested):
    day = landing(tmp_path / "landing") / DAY
    extra = ADVISE if command == "advise" else ()
    code, out, err = clwl(capsys, command, "--mqsc", str(day), "--queue", queue, *extra)
    assert code == 2 and out == "" and len(err.splitlines()) == 1, err
    assert err.startswith(f"clwl {command}: {day}: a landing date folder, one folder per queue manager "
                          f"(FR1, QM1, QM2, QM3): {command} reads one queue manager's captures")
    other = {"route": "advise", "advise": "route"}[command]
    assert f"{other} reads" not in err
    assert f"give its folder, e.g. --mqsc {day / suggested}" in err and "or name it with --local-qmgr" in err


def test_the_whole_landing_folder_names_the_latest_date_s_sender(capsys, tmp_path):
    root = landing(tmp_path / "landing")
    code, _, err = clwl(capsys, "advise", "--mqsc", str(root), "--queue", "APP.IN", *ADVISE)
    assert code == 2 and err.startswith(f"clwl advise: {root}: a landing folder, one folder per run date ({DAY})")
    assert f"e.g. --mqsc {root / DAY / 'QM1'} (QM1's applications put 2 message(s) on APP.IN that day)" in err


def test_a_missing_local_qmgr_folder_is_named(capsys, tmp_path):
    day = landing(tmp_path / "landing") / DAY
    code, _, err = clwl(capsys, "advise", "--mqsc", str(day), "--local-qmgr", "QM9", "--queue", "APP.IN", *ADVISE)
    assert code == 2 and "it holds no folder QM9" in err and err.startswith("clwl advise: ")
    code, out, _ = clwl(capsys, "route", "--mqsc", str(day), "--local-qmgr", "QM1", "--queue", "APP.IN")
    assert code == 0 and out.startswith("Routing 1 message(s) to APP.IN from QM1")


def test_an_unknown_queue_lists_the_cluster_queues_known(capsys, tmp_path):
    qm1 = landing(tmp_path / "landing") / DAY / "QM1"
    code, out, _ = clwl(capsys, "route", "--mqsc", str(qm1), "--queue", "NOPE")
    assert code == 3
    assert out.splitlines()[-1] == ("MQRC_UNKNOWN_OBJECT_NAME (2085): NOPE is not a queue, alias or cluster queue "
                                    "known to QM1; the cluster queues QM1 knows: APP.IN, APP.OTHER")
    code, out, err = clwl(capsys, "advise", "--mqsc", str(qm1), "--queue", "NOPE", *ADVISE)
    assert code == 2 and out == ""
    assert err.splitlines()[-1] == ("clwl advise: --queue: NOPE is not a cluster queue known to QM1 (no instance in "
                                    "its DISPLAY QCLUSTER output); the cluster queues QM1 knows: APP.IN, APP.OTHER")


@pytest.mark.parametrize("given, says", [
    ("414D5120514D3120", "and 16 digits"),
    ("414D5120514D31202020202020202020000000000000001G", "'G' is not hex"),
    ("AMQ.QM1.1", "'.', 'M', 'Q' are not hex"),
])
def test_a_malformed_message_id_says_an_id_has_48_hex_digits(capsys, tmp_path, given, says):
    code, out, err = clwl(capsys, "explain", given, "--lake", str(tmp_path / "no-lake-needed"))
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert err.startswith(f"clwl explain: {given!r} is not a message id: an id has 48 hex digits") and says in err


@pytest.mark.spark
@pytest.mark.slow
def test_a_query_on_a_date_the_lake_does_not_hold_names_the_dates_it_does(capsys, reallocation_lake):
    lake = str(reallocation_lake.lake)
    code, out, err = clwl(capsys, "query", "SELECT msg_id FROM routing_replay WHERE run_date = '2026-11-19'",
                          "--lake", lake, "--format", "csv")
    assert code == 0 and out.strip() == "msg_id"
    assert err.strip() == (f"clwl query: 0 rows; 2026-11-19 is not a run date of {lake} (run dates it holds: "
                           f"{DAY})")
    code, out, err = clwl(capsys, "query", f"SELECT msg_id FROM routing_replay WHERE run_date = '{DAY}' AND "
                                           "queue = 'NOPE'", "--lake", lake, "--format", "csv")
    assert code == 0 and out.strip() == "msg_id" and err == ""
    code, out, err = clwl(capsys, "query", "SELECT count(*) AS n FROM routing_replay WHERE put_time < "
                                           "'2026-11-19 12:00'", "--lake", lake, "--format", "csv")
    assert code == 0 and out.splitlines()[1] == "0" and err == ""  # one row (a count of 0): rows were found
