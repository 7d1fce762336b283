"""`clwl lint` on the command line (docs/lint.md): its two inputs, its output shapes and its exit codes.

Hand-made captures (tests/handmade.py config_capture, cluster CL1), written into tmp_path:

    QM1  CLWLUSEQ(ANY); sees APP.IN on QM2 and QM3, QM3's instance PUT(DISABLED)
                                                    -> put-disabled-instance, on QM3 (the host), seen by QM1
    QM2  CLWLUSEQ(LOCAL); hosts APP.IN (QCLUSTER on QM2, QM3; queue CLWLUSEQ by MQ's default QMGR)
                                                    -> local-instance-wins, on QM2, seen by QM2
    QUIET  CLWLUSEQ(ANY), APP.IN on QM2 and QM3, both enabled and NOTFIXED       -> nothing

The rules themselves are tests/unit/test_lint.py's; here: what reaches the terminal and the exit code.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clwl.analyses.lint import RULE_NAMES
from clwl.cli import main
from tests.handmade import chstatus_capture, config_capture

KEYS = ["rule", "qmgr", "object", "detail", "remedy", "severity", "seen_by"]


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    return folder


def qm1(folder: Path, disabled: bool = True) -> Path:
    put = {"PUT": "DISABLED"} if disabled else {}
    return write(folder, "config.mqsc", config_capture("QM1", {"QM2": {}, "QM3": {}},
                                                       {"APP.IN": {"QM2": {}, "QM3": put}}, {"CLWLUSEQ": "ANY"}))


def qm2(folder: Path) -> Path:
    return write(folder, "config.mqsc", config_capture("QM2", {"QM3": {}}, {"APP.IN": {"QM2": {}, "QM3": {}}},
                                                       {"CLWLUSEQ": "LOCAL"}))


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["lint", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_is_exactly_the_issue_s_shape_and_findings_exit_0(capsys, tmp_path):
    code, out, _ = run(capsys, "--mqsc", str(qm1(tmp_path / "QM1")), "--mqsc", str(qm2(tmp_path / "QM2")), "--json")
    assert code == 0
    doc = json.loads(out)
    assert list(doc) == ["findings"]
    assert all(list(f) == KEYS and all(isinstance(f[k], str) and f[k] for k in KEYS[:-1]) for f in doc["findings"])
    # Once per object, on the queue manager it belongs to, with who sees it; captures alone: no day's messages,
    # so the default CLWLUSEQ(LOCAL) stays a warning.
    assert [(f["rule"], f["qmgr"], f["object"], f["severity"], f["seen_by"]) for f in doc["findings"]] == [
        ("local-instance-wins", "QM2", "APP.IN", "warning", ["QM2"]),
        ("put-disabled-instance", "QM3", "APP.IN", "warning", ["QM1"])]
    assert all(f["rule"] in RULE_NAMES for f in doc["findings"])


def test_no_findings_exit_0_too(capsys, tmp_path):
    quiet = qm1(tmp_path / "QUIET", disabled=False)
    code, out, _ = run(capsys, "--mqsc", str(quiet), "--json")
    assert (code, json.loads(out)) == (0, {"findings": []})
    code, out, _ = run(capsys, "--mqsc", str(quiet))
    assert code == 0 and out.startswith("No findings (linted: QM1)")


def test_readable_output_groups_by_queue_manager(capsys, tmp_path):
    code, out, _ = run(capsys, "--mqsc", str(qm1(tmp_path / "QM1")), "--mqsc", str(qm2(tmp_path / "QM2")))
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "2 finding(s) on 2 queue manager(s) (linted: QM1, QM2)"
    assert lines.index("QM2") < lines.index("QM3")
    assert any(line.split() == ["put-disabled-instance", "APP.IN"] for line in lines)
    assert "remedy: ALTER QLOCAL(APP.IN) PUT(ENABLED) on QM3" in out
    assert lines[-1] == "By rule: local-instance-wins 1, put-disabled-instance 1"


def test_a_landing_date_folder_and_at(capsys, tmp_path):
    """landing/2026-11-20/QM1: config 06:00 with every instance enabled, config 12:00 with QM3's disabled;
    landing/2026-11-20/QM2 as above. The date folder stands for both queue managers; --at 07:00 reads QM1's
    06:00 capture, so QM1 has no finding then."""
    day = tmp_path / "landing" / "2026-11-20"
    qm1(day / "QM1", disabled=False).joinpath("config.mqsc").rename(day / "QM1" / "config_060000.mqsc")
    write(day / "QM1", "config_120000.mqsc", config_capture("QM1", {"QM2": {}, "QM3": {}},
                                                             {"APP.IN": {"QM2": {}, "QM3": {"PUT": "DISABLED"}}},
                                                             {"CLWLUSEQ": "ANY"}))
    write(day / "QM1", "chstatus_060000.mqsc", chstatus_capture("QM1", {"TO.QM2": "RUNNING"}))
    qm2(day / "QM2").joinpath("config.mqsc").rename(day / "QM2" / "config_060000.mqsc")
    code, out, err = run(capsys, "--mqsc", str(day), "--json")
    assert code == 0 and "captures used (the latest)" in err
    assert {(f["rule"], f["qmgr"]) for f in json.loads(out)["findings"]} == {
        ("put-disabled-instance", "QM3"), ("local-instance-wins", "QM2")}
    code, out, _ = run(capsys, "--mqsc", str(day / "QM1"), "--at", "07:00", "--json")
    assert (code, json.loads(out)) == (0, {"findings": []})


@pytest.mark.parametrize("args, says", [
    ((), "give --mqsc PATH (captures) or --lake LAKE --date YYYY-MM-DD"),
    (("--mqsc", "{tmp}/QM1", "--lake", "{tmp}"), "not both"),
    (("--mqsc", "{tmp}/QM1", "--date", "2026-11-20"), "not both"),
    (("--lake", "{tmp}"), "--lake needs --date"),
    (("--at", "07:00", "--date", "2026-11-20"), "--at chooses among the captures of --mqsc"),
    (("--mqsc", "{tmp}/missing"), "missing: no such file or folder"),
    (("--mqsc", "{tmp}/empty"), "empty: folder holds no files"),
    (("--mqsc", "{tmp}/notes"), "not runmqsc output"),
    (("--lake", "{tmp}/nolake", "--date", "2026-11-20"), "no lake at"),
    (("--lake", "{tmp}", "--date", "2026-11-20"), "no silver.config_history table"),
    (("--mqsc", "{tmp}/QM1", "--at", "07:00"), "--at 07:00 chooses among the captures of a landing queue manager"),
])
def test_unusable_input_is_one_line_and_exit_2(capsys, tmp_path, args, says):
    qm1(tmp_path / "QM1")
    (tmp_path / "empty").mkdir()
    write(tmp_path / "notes", "readme.txt", "not a capture\n")
    code, out, err = run(capsys, *(a.format(tmp=tmp_path) for a in args))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("clwl lint: ") and says in err, err


SAMPLES_DAY = Path(__file__).resolve().parents[2] / "samples" / "landing" / "2026-11-20"


@pytest.mark.spark
@pytest.mark.slow
def test_the_landing_and_the_lake_give_the_same_findings(capsys, samples_lake):
    """The samples' 2026-11-20 (samples/README.md), linted from the lake and from the landing date folder: the
    same findings, JSON for JSON (issue 39 item 10: 12 against 8 before).

    QM3's config_140000.mqsc is not runmqsc output. The ingest rejects it, so the lake's QM3 stays at its 06:00
    configuration; the landing lint reads QM3's 06:00 capture too (it used to leave QM3 out). Both say so on
    stderr. What the captures show, and so the findings (docs/lint.md):

    - APP.AUDIT lives on QM3 alone, as FR1, FR2, QM1 and QM3 see it: single-instance, once, on QM3;
    - QM4's instance of APP.ORDERS is PUT(DISABLED) from 17:55 (QM4's and QM1's 18:00 captures show it):
      put-disabled-instance, once, on QM4, seen by QM1 and QM4;
    - QM2 hosts APP.BILLING and APP.ORDERS, QM3 the same (and APP.AUDIT, its only host: nothing), QM4 APP.BILLING
      (its APP.ORDERS is disabled, step 1 removes it first), each with MQ's defaults CLWLUSEQ(QMGR) on the queue
      and LOCAL on the queue manager, and each queue has other hosts: local-instance-wins. The day's put records
      are QM1's and QM5's only: nothing is put on QM2, QM3 or QM4, so all five are notices.
    """
    code, lake_out, lake_err = run(capsys, "--lake", str(samples_lake.lake), "--date", "2026-11-20", "--json")
    assert code == 0
    code, landing_out, landing_err = run(capsys, "--mqsc", str(SAMPLES_DAY), "--json")
    assert code == 0
    assert json.loads(lake_out) == json.loads(landing_out)
    assert [(f["rule"], f["qmgr"], f["object"], f["severity"], f["seen_by"])
            for f in json.loads(lake_out)["findings"]] == [
        ("local-instance-wins", "QM2", "APP.BILLING", "notice", ["QM2"]),
        ("local-instance-wins", "QM2", "APP.ORDERS", "notice", ["QM2"]),
        ("local-instance-wins", "QM3", "APP.BILLING", "notice", ["QM3"]),
        ("local-instance-wins", "QM3", "APP.ORDERS", "notice", ["QM3"]),
        ("single-instance", "QM3", "APP.AUDIT", "warning", ["FR1", "FR2", "QM1", "QM3"]),
        ("local-instance-wins", "QM4", "APP.BILLING", "notice", ["QM4"]),
        ("put-disabled-instance", "QM4", "APP.ORDERS", "warning", ["QM1", "QM4"]),
    ]
    assert ("QM3: 2026-11-20/QM3/config_140000.mqsc was rejected by the ingest (not runmqsc output" in lake_err
            and "its config capture of 2026-11-20 06:00:00 UTC is used instead" in lake_err)
    assert (f"{SAMPLES_DAY / 'QM3' / 'config_140000.mqsc'}: not runmqsc output" in landing_err
            and "the config capture before it is used instead (config_060000.mqsc)" in landing_err)
    code, out, err = run(capsys, "--lake", str(samples_lake.lake), "--date", "2026-11-18")
    assert code == 2 and "no captures of 2026-11-18 in the lake" in err
