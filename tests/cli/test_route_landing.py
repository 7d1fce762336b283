"""`clwl route` on a landing folder (docs/cli-contract.md, "Landing folders"; layout: docs/landing.md).

tests/fixtures/cli/landing, hand-made, cluster CL1, the sender QM1 (CLWLUSEQ LOCAL, hosting no instance):

    2026-11-20/QM1/config_140000.mqsc   APP.ORDERS on QM2 and QM3; TO.QM3 CLWLRANK(1), TO.QM2 CLWLRANK(0)
    2026-11-21/QM1/config_060000.mqsc   APP.ORDERS on QM2 and QM3, both PUT(ENABLED); every CLWLRANK 0,
                                        every CLWLWGHT 50, every CLUSQMGR STATUS(RUNNING)
    2026-11-21/QM1/config_120000.mqsc   the same, but APP.ORDERS on QM3 is PUT(DISABLED), and APP.PAY (new)
                                        on QM2 and QM3
    2026-11-21/QM1/chstatus_060000.mqsc TO.QM2 RUNNING, TO.QM3 RUNNING
    2026-11-21/QM1/chstatus_090000.mqsc TO.QM2 RETRYING, TO.QM3 RUNNING
    2026-11-21/QM1/config_0700.mqsc     misnamed (HHMM): never read; read, it would disable APP.ORDERS on QM2
    2026-11-21/QM1/puts.csv, accounting.amqsmon, xmitq_100000.dmpmqmsg, QM1.2026-11-21.amqsact: no captures
    2026-11-21/QM2/config_060000.mqsc   QM2's view without DISPLAY QCLUSTER: a clustered QLOCAL APP.ORDERS

Expected routes, from docs/algorithm.md ("The steps", profile default):
- default (the latest): config 12:00 + chstatus 09:00. APP.ORDERS: step 1 drops QM3 (PUT(DISABLED)), QM2
  alone remains: every message to QM2, decided_by "1" (reading 8). APP.PAY: both enabled; step 6 keeps the
  INACTIVE/RUNNING tier, TO.QM2 is RETRYING in the 09:00 channel status (it overrides CLUSQMGR's RUNNING), so
  QM3, decided_by "6".
- --at 07:00: config 06:00 + chstatus 06:00. Both instances enabled and RUNNING, equal rank, priority and weight:
  step 12. DestSeqFactor grows by 1000/50 = 20 per choice. msg1: 0/0, tie -> name order: QM2 (20, DSN 1);
  msg2: QM3 0 < 20 -> QM3 (20, DSN 2); msg3: 20 = 20, DSN 1 < 2 -> QM2; msg4: QM3. So QM2, QM3, QM2, QM3.
  (Had config_0700.mqsc been read as 07:00, QM2 would be PUT(DISABLED) and every message would go to QM3.)
- --at 10:00: config 06:00 + chstatus 09:00: TO.QM2 RETRYING, step 6 keeps QM3: every message QM3, "6".
- --at 05:00: nothing on 2026-11-21 at or before 05:00, so 2026-11-20's config 14:00 (no channel status): step
  4a keeps the highest channel CLWLRANK, TO.QM3 (1): every message QM3, decided_by "4a".
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from clwl.cli import main
from clwl.engine.view import parse_capture_moment, read_captures, select_landing_captures

LANDING = Path(__file__).resolve().parents[1] / "fixtures" / "cli" / "landing"
DAY = LANDING / "2026-11-21"
QM1 = DAY / "QM1"


def route(capsys, *args: str) -> tuple[int, list[dict], list[str]]:
    code = main(["route", *args, "--json"])
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines()], err.splitlines()


def used_line(err: list[str]) -> str:
    lines = [x for x in err if x.startswith("clwl route: captures used")]
    assert len(lines) == 1, err
    return lines[0]


def test_latest_captures_by_default_and_non_captures_ignored(capsys):
    code, rows, err = route(capsys, "--mqsc", str(QM1), "--queue", "APP.ORDERS", "--count", "4")
    assert code == 0
    assert [(r["qmgr"], r["decided_by"]) for r in rows] == [("QM2", "1")] * 4
    used = used_line(err)
    assert "(the latest)" in used
    # chstatus 09:00 before config 12:00: oldest first, so that the later capture of an object wins.
    assert used.endswith(f"{QM1 / 'chstatus_090000.mqsc'}, {QM1 / 'config_120000.mqsc'}")
    for ignored in ("accounting.amqsmon", "puts.csv", "xmitq_100000", ".amqsact", "config_060000"):
        assert ignored not in used


def test_the_chosen_channel_status_counts(capsys):
    code, rows, _ = route(capsys, "--mqsc", str(QM1), "--queue", "APP.PAY", "--count", "2")
    assert code == 0 and [(r["qmgr"], r["decided_by"]) for r in rows] == [("QM3", "6")] * 2


def test_at_0700_takes_the_0600_captures(capsys):
    code, rows, err = route(capsys, "--mqsc", str(QM1), "--queue", "APP.ORDERS", "--count", "4", "--at", "07:00")
    assert code == 0
    assert [r["qmgr"] for r in rows] == ["QM2", "QM3", "QM2", "QM3"]
    assert {r["decided_by"] for r in rows} == {"12"}
    used = used_line(err)
    assert "at or before 2026-11-21 07:00:00 UTC" in used
    assert used.endswith(f"{QM1 / 'chstatus_060000.mqsc'}, {QM1 / 'config_060000.mqsc'}")
    assert any("config_0700.mqsc" in x and "not HHMMSS" in x and "file not used" in x for x in err)


def test_at_1000_pairs_the_0600_config_with_the_0900_status(capsys):
    code, rows, err = route(capsys, "--mqsc", str(QM1), "--queue", "APP.ORDERS", "--count", "3",
                            "--at", "2026-11-21T10:00:00Z")
    assert code == 0 and [(r["qmgr"], r["decided_by"]) for r in rows] == [("QM3", "6")] * 3
    assert used_line(err).endswith(f"{QM1 / 'config_060000.mqsc'}, {QM1 / 'chstatus_090000.mqsc'}")


def test_before_the_first_capture_of_the_day_an_earlier_date_is_used(capsys):
    code, rows, err = route(capsys, "--mqsc", str(QM1), "--queue", "APP.ORDERS", "--count", "2", "--at", "05:00")
    assert code == 0 and [(r["qmgr"], r["decided_by"]) for r in rows] == [("QM3", "4a")] * 2
    used = used_line(err)
    assert str(LANDING / "2026-11-20" / "QM1" / "config_140000.mqsc") in used
    assert "no channel status capture" in used


def test_readable_output_is_unchanged_and_stdout_has_no_file_line(capsys):
    code = main(["route", "--mqsc", str(QM1), "--queue", "APP.ORDERS", "--at", "07:00"])
    out, err = capsys.readouterr()
    assert code == 0 and out.startswith("Routing 1 message(s) to APP.ORDERS from QM1")
    assert "captures used" not in out and "config_060000.mqsc" in err


def test_date_folder_gives_one_line_of_guidance_exit_2():
    p = subprocess.run([sys.executable, "-m", "clwl.cli", "route", "--mqsc", str(DAY), "--queue", "APP.ORDERS"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and p.stdout == ""
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1
    assert str(DAY) in lines[0] and "date folder" in lines[0] and "QM1, QM2" in lines[0]
    assert f"--mqsc {DAY / 'QM1'}" in lines[0] and "--local-qmgr" in lines[0]


def test_whole_landing_folder_gives_guidance_exit_2(capsys):
    code, rows, err = route(capsys, "--mqsc", str(LANDING), "--queue", "APP.ORDERS")
    assert code == 2 and rows == [] and len(err) == 1
    assert "one folder per run date (2026-11-20, 2026-11-21)" in err[0]


def test_local_qmgr_chooses_the_folder_of_a_date_folder(capsys):
    """QM2's clustered QLOCAL APP.ORDERS is its local instance (no QCLUSTER needed for it); CLWLUSEQ LOCAL,
    one candidate left after step 1: local, decided_by "1"."""
    code, rows, err = route(capsys, "--mqsc", str(DAY), "--local-qmgr", "QM2", "--queue", "APP.ORDERS")
    assert code == 0 and (rows[0]["qmgr"], rows[0]["path"]) == ("QM2", "local")
    assert str(DAY / "QM2" / "config_060000.mqsc") in used_line(err)
    code, _, err = route(capsys, "--mqsc", str(DAY), "--local-qmgr", "QM9", "--queue", "APP.ORDERS")
    assert code == 2 and "holds no folder QM9" in err[0]


def test_2085_without_qcluster_output_names_the_command(capsys):
    code, rows, _ = route(capsys, "--mqsc", str(DAY / "QM2"), "--queue", "APP.PAY", "--count", "2")
    assert code == 3
    assert [(r["error"], r["reason"]) for r in rows] == [("MQRC_UNKNOWN_OBJECT_NAME", 2085)] * 2
    assert all("captures hold no DISPLAY QCLUSTER output" in r["detail"]
               and "DISPLAY QCLUSTER(*) ALL on QM2" in r["detail"] for r in rows)
    code = main(["route", "--mqsc", str(DAY / "QM2"), "--queue", "APP.PAY"])
    out = capsys.readouterr().out
    assert code == 3 and out.count("DISPLAY QCLUSTER(*) ALL") == 1


def test_2085_with_qcluster_output_says_nothing_of_it(capsys):
    """At 10:00 QM1's config (06:00) holds DISPLAY QCLUSTER output, which has no APP.PAY yet."""
    code, rows, _ = route(capsys, "--mqsc", str(QM1), "--queue", "APP.PAY", "--at", "10:00")
    assert code == 3 and rows[0]["reason"] == 2085 and "QCLUSTER" not in rows[0]["detail"]


@pytest.mark.parametrize("args, reason", [
    (["--at", "04:00"], "no configuration capture"),  # QM2 has no earlier date
    (["--at", "2026-11-22T07:00"], "not on this folder's run date 2026-11-21"),
])
def test_unusable_at_exits_2(capsys, args, reason):
    code, rows, err = route(capsys, "--mqsc", str(DAY / "QM2"), "--queue", "APP.ORDERS", *args)
    assert code == 2 and rows == [] and len(err) == 1 and reason in err[0]


def test_at_needs_a_landing_folder(capsys):
    plain = Path(__file__).resolve().parents[1] / "fixtures" / "cli" / "QM1"
    code, _, err = route(capsys, "--mqsc", str(plain), "--queue", "APP.ORDERS", "--at", "07:00")
    assert code == 2 and len(err) == 1 and "landing queue manager folder" in err[0]


def test_plain_folder_is_read_as_before(capsys):
    """Not in landing layout (no date folder above, no config_/chstatus_ names): every file is read, and no
    line about the files used."""
    plain = Path(__file__).resolve().parents[1] / "fixtures" / "cli" / "QM1"
    caps = read_captures([plain])
    assert caps.landing == [] and [Path(f).name for f in caps.files] == ["chstatus.mqsc", "config.mqsc"]
    code, _, err = route(capsys, "--mqsc", str(plain), "--queue", "APP.ORDERS")
    assert code == 0 and err == []


@pytest.mark.parametrize("text, expect", [
    ("07:00", ("07:00:00", None)),
    ("7:05:09", ("07:05:09", None)),
    ("120000", ("12:00:00", None)),
    ("2026-11-21T08:30", ("08:30:00", "2026-11-21")),
    ("2026-11-21T00:30:00+01:00", ("23:30:00", "2026-11-20")),  # converted to UTC: the day before
])
def test_capture_moment_forms(text, expect):
    m = parse_capture_moment(text)
    assert (m.time.isoformat(), m.day.isoformat() if m.day else None) == expect


@pytest.mark.parametrize("text", ["24:00", "07:60", "2026-11-21", "0700", "noon", "2026-11-21T25:00"])
def test_capture_moment_rejects(text):
    with pytest.raises(ValueError):
        parse_capture_moment(text)


def test_captures_of_the_same_time_are_all_read_in_name_order(tmp_path):
    """docs/landing.md: captures with the same time are taken in file name order."""
    qm = tmp_path / "2026-11-21" / "QM1"
    qm.mkdir(parents=True)
    for name in ("config_120000.txt", "config_120000.mqsc", "config_060000.mqsc", "chstatus_130000.mqsc"):
        (qm / name).write_text("x\n")
    choice = select_landing_captures(qm, parse_capture_moment("12:30"))
    assert [c.path.name for c in choice.captures] == ["config_120000.mqsc", "config_120000.txt"]


def test_at_includes_a_capture_taken_at_that_very_time():
    """"At or before": --at 06:00 takes the 06:00 captures; a second earlier, only 2026-11-20's."""
    at_six = select_landing_captures(QM1, parse_capture_moment("06:00"))
    assert [c.path.name for c in at_six.captures] == ["chstatus_060000.mqsc", "config_060000.mqsc"]
    before = select_landing_captures(QM1, parse_capture_moment("05:59:59"))
    assert [(c.day.isoformat(), c.path.name) for c in before.captures] == [("2026-11-20", "config_140000.mqsc")]
