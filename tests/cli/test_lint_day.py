"""`clwl lint` on one landing day (issue 39 item 10): a finding once per object, never "local instance wins" on a
queue's only host, MQ's defaults weighed by the day's messages, and a broken latest capture replaced by the one
before it (what an ingest of the landing folder leaves in force), said on stderr.

The hand-made landing day 2026-11-20 (tests/handmade.py ``config_capture``, one cluster CL1; every queue
manager's DISPLAY QCLUSTER shows the same instances; DEFBIND as given, else the builder's NOTFIXED):

    APP.IN    hosted by QM2 and QM3, both advertising DEFBIND(OPEN)
    APP.IDLE  hosted by QM2 and QM3, both advertising DEFBIND(OPEN); nobody puts on it
    APP.AUDIT hosted by QM3 alone, DEFBIND(NOTFIXED)

    FR1  a full repository, CLWLUSEQ(ANY), hosts nothing
    QM1  CLWLUSEQ(ANY), hosts nothing; puts.csv: 3 messages on APP.IN, 2 bound on open (bind open), 1 not fixed
    QM2  CLWLUSEQ(LOCAL) (the builder's, MQ's default), no DISPLAY QLOCAL (queue CLWLUSEQ(QMGR), MQ's default);
         puts.csv: 2 messages on APP.IN, not fixed
    QM3  as QM2, no put file; config_060000.mqsc as above, config_120000.mqsc is not runmqsc output

What MQ does, and so what the lint says (docs/lint.md; docs/algorithm.md step 3, "Binding and re-allocation"):

- QM3's 12:00 capture cannot be read. An ingest rejects it and QM3's configuration stays that of 06:00; the
  lint takes the 06:00 capture too, and says so on stderr. (Skipping QM3 would lose its findings below.)
- single-instance: APP.AUDIT lives on QM3 alone. One finding, on QM3, seen by the four observers FR1, QM1, QM2,
  QM3 (not four findings, one per observer).
- local-instance-wins: QM2 and QM3 host APP.IN and APP.IDLE with MQ's defaults (queue QMGR, queue manager LOCAL),
  and each queue has another host: step 3 keeps the messages put on the host there. QM2's applications put 2
  messages on APP.IN that day: a warning. Nobody put on APP.IDLE, nor on APP.IN on QM3: notices. QM3 is
  APP.AUDIT's only host: step 3 keeps nothing from anyone, no finding.
- bind-on-open-default: on every observer MQOO_BIND_AS_Q_DEF takes the DEFBIND the instances advertise (no
  local alias or DISPLAY QLOCAL captured), OPEN for APP.IN and APP.IDLE. One finding per queue, on its hosts
  "QM2, QM3", seen by all four. APP.IN: 5 messages put on it (QM1 3, QM2 2), 2 bound on open: a warning.
  APP.IDLE: no message: a notice.

So 7 findings, sorted by the queue manager they belong to ("QM2" < "QM2, QM3" < "QM3"), then rule, then object:

    QM2        local-instance-wins   APP.IDLE   notice
    QM2        local-instance-wins   APP.IN     warning  (2 messages)
    QM2, QM3   bind-on-open-default  APP.IDLE   notice
    QM2, QM3   bind-on-open-default  APP.IN     warning  (2 of 5 bound on open)
    QM3        local-instance-wins   APP.IDLE   notice
    QM3        local-instance-wins   APP.IN     notice
    QM3        single-instance       APP.AUDIT  warning  (seen by FR1, QM1, QM2, QM3)

With the captures alone (no landing date, so no put records), the same 7 findings are all warnings: without the
day's messages a default cannot be judged harmless.
"""

from __future__ import annotations

import json
import shutil
from datetime import timedelta
from pathlib import Path

from clwl.cli import main
from tests.handmade import DAY, PUTS_HEADER, T0, chstatus_capture, config_capture, put_row, write_day

QUEUES = {"APP.IN": {"QM2": {"DEFBIND": "OPEN"}, "QM3": {"DEFBIND": "OPEN"}},
          "APP.IDLE": {"QM2": {"DEFBIND": "OPEN"}, "QM3": {"DEFBIND": "OPEN"}},
          "APP.AUDIT": {"QM3": {}}}
EXPECTED = [
    ("local-instance-wins", "QM2", "APP.IDLE", "notice", ["QM2"]),
    ("local-instance-wins", "QM2", "APP.IN", "warning", ["QM2"]),
    ("bind-on-open-default", "QM2, QM3", "APP.IDLE", "notice", ["FR1", "QM1", "QM2", "QM3"]),
    ("bind-on-open-default", "QM2, QM3", "APP.IN", "warning", ["FR1", "QM1", "QM2", "QM3"]),
    ("local-instance-wins", "QM3", "APP.IDLE", "notice", ["QM3"]),
    ("local-instance-wins", "QM3", "APP.IN", "notice", ["QM3"]),
    ("single-instance", "QM3", "APP.AUDIT", "warning", ["FR1", "QM1", "QM2", "QM3"]),
]


def msg(qmgr: str, n: int) -> str:
    return ("AMQ " + qmgr).ljust(16).encode().hex().upper() + f"{n:016X}"


def lint_day(root: Path) -> Path:
    """The landing folder of the docstring; its date folder is returned."""
    everyone = ["FR1", "QM1", "QM2", "QM3"]
    for qm, attrs in (("FR1", {"CLWLUSEQ": "ANY"}), ("QM1", {"CLWLUSEQ": "ANY"}), ("QM2", {}), ("QM3", {})):
        remotes = {r: {} for r in everyone if r != qm}
        write_day(root, DAY, qm, {
            "config_060000.mqsc": config_capture(qm, remotes, QUEUES, attrs),
            "chstatus_060000.mqsc": chstatus_capture(qm, {f"TO.{r}": "RUNNING" for r in remotes}),
        })
    t = T0 + timedelta(minutes=5)
    write_day(root, DAY, "QM1", {"puts.csv": "\n".join([
        PUTS_HEADER,
        put_row(t, "QM1", "APP.IN", msg("QM1", 1), bind="open", handle="app:1:1"),
        put_row(t + timedelta(seconds=1), "QM1", "APP.IN", msg("QM1", 2), bind="open", handle="app:1:1"),
        put_row(t + timedelta(seconds=2), "QM1", "APP.IN", msg("QM1", 3)),
    ]) + "\n"})
    write_day(root, DAY, "QM2", {"puts.csv": "\n".join([
        PUTS_HEADER,
        put_row(t, "QM2", "APP.IN", msg("QM2", 1)),
        put_row(t + timedelta(seconds=1), "QM2", "APP.IN", msg("QM2", 2)),
    ]) + "\n"})
    write_day(root, DAY, "QM3", {"config_120000.mqsc": "not a capture: the export was cut off\n"})
    return root / DAY


def lint(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["lint", *args])
    out, err = capsys.readouterr()
    return code, out, err


def as_rows(out: str) -> list[tuple]:
    return [(f["rule"], f["qmgr"], f["object"], f["severity"], f["seen_by"]) for f in json.loads(out)["findings"]]


def test_a_landing_day_once_per_object_weighed_by_its_messages(capsys, tmp_path):
    day = lint_day(tmp_path / "landing")
    code, out, err = lint(capsys, "--mqsc", str(day), "--json")
    assert code == 0, err
    assert as_rows(out) == EXPECTED
    found = {(f["rule"], f["qmgr"], f["object"]): f for f in json.loads(out)["findings"]}
    assert "on 2026-11-20 2 of the 5 messages FR1, QM1, QM2, QM3 put on APP.IN were bound on open" in \
        found["bind-on-open-default", "QM2, QM3", "APP.IN"]["detail"]
    assert "no message was put on APP.IDLE from FR1, QM1, QM2, QM3 on 2026-11-20" in \
        found["bind-on-open-default", "QM2, QM3", "APP.IDLE"]["detail"]
    assert "on 2026-11-20 2 messages were put on APP.IN by applications on QM2" in \
        found["local-instance-wins", "QM2", "APP.IN"]["detail"]
    assert "ALTER QLOCAL(APP.IN) DEFBIND(NOTFIXED) on QM2, QM3" in \
        found["bind-on-open-default", "QM2, QM3", "APP.IN"]["remedy"]
    # QM3's broken 12:00 capture: the 06:00 one is linted, and stderr says so.
    assert f"{day / 'QM3' / 'config_120000.mqsc'}: not runmqsc output" in err
    assert "the config capture before it is used instead (config_060000.mqsc), as an ingest of the landing folder " \
           "does" in err
    assert "queue manager not linted" not in err


def test_the_readable_output_names_severity_and_observers(capsys, tmp_path):
    day = lint_day(tmp_path / "landing")
    code, out, _ = lint(capsys, "--mqsc", str(day))
    lines = out.splitlines()
    assert code == 0
    assert lines[0] == (f"7 finding(s) on 3 queue manager(s) (linted: FR1, QM1, QM2, QM3); 4 of them notice(s): a "
                        f"default no message of the day went through (counted from the put files of {DAY} in "
                        f"{day.parent})")
    assert [line for line in lines if line and not line.startswith(" ")][1:4] == ["QM2", "QM2, QM3", "QM3"]
    assert any(line.split() == ["single-instance", "APP.AUDIT"] for line in lines)
    assert any(line.split() == ["local-instance-wins", "APP.IDLE", "(notice)"] for line in lines)
    assert sum("seen by: FR1, QM1, QM2, QM3" in line for line in lines) == 3
    assert lines[-1] == "By rule: local-instance-wins 4, bind-on-open-default 2, single-instance 1"


def test_captures_alone_keep_every_default_a_warning(capsys, tmp_path):
    """The same captures copied out of the landing layout: no date, no put records: every finding a warning.
    (QM3's broken capture is left behind: a plain folder's files are all read.)"""
    day = lint_day(tmp_path / "landing")
    plain = []
    for qm in ("FR1", "QM1", "QM2", "QM3"):
        shutil.copy(day / qm / "config_060000.mqsc", tmp_path / f"{qm}.mqsc")
        plain += ["--mqsc", str(tmp_path / f"{qm}.mqsc")]
    code, out, _ = lint(capsys, *plain, "--json")
    assert code == 0
    assert as_rows(out) == [(r, q, o, "warning", s) for r, q, o, _, s in EXPECTED]
    assert all("message" not in f["detail"].split(": ")[0] or "messages put on" in f["detail"]
               for f in json.loads(out)["findings"])


def test_a_landing_folder_is_refused_with_its_date_folder_named(capsys, tmp_path):
    """The whole landing folder (run date folders in it): lint names itself, and the date folder to give."""
    lint_day(tmp_path / "landing")
    code, out, err = lint(capsys, "--mqsc", str(tmp_path / "landing"))
    assert code == 2 and out == ""
    assert err.startswith("clwl lint: ") and len(err.splitlines()) == 1 and "route" not in err
    assert f"give its date folder (--mqsc {tmp_path / 'landing' / DAY})" in err
