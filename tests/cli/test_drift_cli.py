"""`clwl drift` on the command line (issue 28): its refusals (exit 2, one line, no lake needed) and, on the
session's published samples (tests/conftest.py samples_lake; the story in samples/README.md, "The story, with
times"), the samples' real configuration changes and what they did to the shares.

What the samples' captures show (samples/README.md):
- 2026-11-19 11:55 QM2's CLWLWGHT 50 -> 80 (ALTER CHANNEL(TO.QM2) ... CLWLWGHT(80)), first captured at 12:00 by QM1,
  QM2 and QM5 (FR1 and FR2 capture once a day, at 06:00: they show it on 2026-11-20 at 06:00).
- QM4 suspended 2026-11-19 05:30 to 20:30: SUSPEND(YES) in every 2026-11-19 capture, NO from 2026-11-20 06:00, with
  CLUSTIME 20.30.0x, the cluster update that brought the resume.
- 2026-11-20 17:55 QM4's APP.ORDERS PUT(DISABLED): the 18:00 captures of QM4 (QCLUSTER and QLOCAL) and QM1
  (QCLUSTER), ALTDATE/ALTTIME 2026-11-20 17.55.00.

The configured shares of APP.ORDERS on QM1 (docs/algorithm.md): four put-enabled instances, QM1's own (CLWLUSEQ(ANY),
competing with its CLUSRCVR's CLWLWGHT 50, reading 2), QM2 (80), QM3 and QM4 (50 each). Step 12 gives each w / W:
W = 230, QM2 80/230 = 34.8 %, the others 50/230 = 21.7 %. QM4 put-disabled: step 1 drops it, W = 180, QM2
80/180 = 44.4 %, QM1 and QM3 50/180 = 27.8 %, QM4 0.
"""

from __future__ import annotations

import json

import pytest

from clwl.cli import main


def _clwl(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_refusals_are_one_line_and_exit_2(capsys, tmp_path):
    code, out, err = _clwl(capsys, "drift", "--lake", str(tmp_path / "none"), "--date", "2026-11-20")
    assert code == 2 and out == "" and err == f"clwl drift: no lake at {tmp_path / 'none'} (name it with --lake or " \
                                                "$CLWL_LAKE)\n"
    code, out, err = _clwl(capsys, "drift", "--lake", str(tmp_path), "--date", "2026-11-20")
    assert code == 2 and err == f"clwl drift: {tmp_path}: no silver.config_history (ingest the captures first: " \
                                "clwl ingest or clwl run)\n"
    code, out, err = _clwl(capsys, "drift", "--lake", str(tmp_path), "--date", "2026-11-20", "--since", "2026-11-21")
    assert code == 2 and err == "clwl drift: --since 2026-11-21 is not before --date 2026-11-20: name an earlier " \
                                "run date\n"
    with pytest.raises(SystemExit) as stop:
        main(["drift", "--lake", str(tmp_path), "--date", "2026-11-31"])
    assert stop.value.code == 2 and "'2026-11-31' is not a date YYYY-MM-DD" in capsys.readouterr().err


@pytest.mark.spark
@pytest.mark.slow
def test_the_samples_changes_and_their_effect(samples_lake, capsys):
    lake = str(samples_lake.lake)
    code, out, err = _clwl(capsys, "drift", "--lake", lake, "--date", "2026-11-20", "--json")
    assert code == 0, err
    d = json.loads(out)
    changes = {(c["at"][11:16], c["qmgr"], c["object"], c["attribute"], c["old"], c["new"], c["stamp"])
               for c in d["changes"]}
    assert {("18:00", qm, "QCLUSTER APP.ORDERS on QM4 (CL1)", "PUT", "ENABLED", "DISABLED",
             "altered 2026-11-20 17:55:00") for qm in ("QM1", "QM4")} <= changes
    assert ("18:00", "QM4", "QLOCAL APP.ORDERS", "PUT", "ENABLED", "DISABLED", "altered 2026-11-20 17:55:00") in changes
    resumed = {c[1] for c in changes if c[2] == "CLUSQMGR QM4 (TO.QM4, CL1)" and c[3:6] == ("SUSPEND", "YES", "NO")}
    assert resumed == {"FR1", "FR2", "QM1", "QM4", "QM5"}
    assert {c[1] for c in changes if c[3] == "CLWLWGHT"} == {"FR1", "FR2"}  # the others saw it the day before
    # Channel status and MQ's stamps are not configuration: no STATUS, ALTDATE, CLUSTIME, IPPROCS finding.
    assert not {c[3] for c in changes} & {"STATUS", "ALTDATE", "ALTTIME", "CLUSDATE", "CLUSTIME", "IPPROCS"}
    # QM1's 12:00 capture alone carries CLWLHINT(NONE) (samples/README.md D3, an attribute of no MQ level): marked
    # once as unknown, not two changes at 12:00 and 14:00 (issue 39 item 11).
    assert "CLWLHINT" not in {c[3] for c in changes}
    assert [(u["qmgr"], u["object"], u["attribute"], [v["value"] for v in u["values"]])
            for u in d["unknown_attributes"]] == [
        ("QM1", "CLUSQMGR QM2 (TO.QM2, CL1)", "CLWLHINT", ["(not shown)", "NONE", "(not shown)"])]
    [orders] = [e for e in d["share_effects"] if e["qmgr"] == "QM1" and e["queue"] == "APP.ORDERS"]
    assert orders["at"] == "2026-11-20T18:00:00+00:00"
    assert orders["before"] == {"QM1": 21.739, "QM2": 34.783, "QM3": 21.739, "QM4": 21.739}
    assert orders["after"] == {"QM1": 27.778, "QM2": 44.444, "QM3": 27.778}
    assert d["captures"]["QM4"] == 2 and d["first_captured"] == {}

    code, out, err = _clwl(capsys, "drift", "--lake", lake, "--date", "2026-11-19")
    assert code == 0, err
    weights = [line.split() for line in out.splitlines() if "CLWLWGHT" in line]
    assert [(w[1], w[2], w[-5], w[-4]) for w in weights] == [("12:00:00", qm, "50", "80") for qm in ("QM1", "QM2", "QM5")]
    assert "QM1: first captured 2026-11-19 06:00:00 UTC" in out

    code, out, err = _clwl(capsys, "drift", "--lake", lake, "--date", "2026-11-21")
    assert code == 2 and out == "" and err.startswith("clwl drift: no configuration capture of 2026-11-21")
