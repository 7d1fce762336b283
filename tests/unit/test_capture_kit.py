"""The capture kit (capture/, issue 17 item 8) writes what the ingest reads.

capture/unix/clwl-capture.sh and capture/rest/clwl-capture-rest.sh are run for real, with a PATH whose runmqsc,
amqsmon, amqsact, dmpmqmsg, amqsbcg and curl are stub scripts written here. The stubs answer with text in MQ's
own shapes, taken from the bundled samples (samples/landing) and the parser fixtures (tests/fixtures); runmqsc's
stub answers only the DISPLAY commands it has a canned answer for (anything else ends it with exit status 20, as
a real failure would), so the commands the kit sends are checked too. Every file the kit writes must land at
<landing>/<YYYY-MM-DD>/<QM>/<name> with a name clwl.landing.discovery.classify_name gives the right reader, parse
with zero problems through the clwl parsers, and be ingested (spark.ingest.parse_tasks.parse_landing_file, the
ingest's per-file step, no Spark session needed) with nothing quarantined.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from clwl.engine.view import parse_capture_file
from clwl.landing.discovery import classify_name, discover_landing
from clwl.parse.activity_trace import parse_activity_trace_file
from clwl.parse.amqsmon import parse_amqsmon_file
from clwl.parse.xmitq import parse_xmitq_file
from spark.ingest.parse_tasks import covered_kinds, parse_landing_file

ROOT = Path(__file__).resolve().parents[2]
KIT = ROOT / "capture"
UNIX_SCRIPT = KIT / "unix" / "clwl-capture.sh"
REST_SCRIPT = KIT / "rest" / "clwl-capture-rest.sh"
SAMPLE_QM1 = ROOT / "samples" / "landing" / "2026-11-20" / "QM1"
SAMPLE_QM2 = ROOT / "samples" / "landing" / "2026-11-20" / "QM2"
SAMPLE_DMPMQMSG = ROOT / "samples" / "landing" / "2026-11-20" / "QM5" / "xmitq_153000.dmpmqmsg"
FIX = ROOT / "tests" / "fixtures"

QM = "QM1"
TRACE_QUEUE = "SYSTEM.ADMIN.TRACE.ACTIVITY.QUEUE"
XMITQ_LIST_COMMAND = "DISPLAY QLOCAL(*) WHERE(USAGE EQ XMITQ) CLCHNAME"
# The answer of a queue manager with two cluster transmission queues of its own (DEFCLXQ(CHANNEL) and a
# CLCHNAME queue) besides SYSTEM.CLUSTER.TRANSMIT.QUEUE, and one ordinary transmission queue the kit must leave
# alone. runmqsc's layout: the AMQ8409I header, attributes two to a line.
XMITQ_LIST_ANSWER = """\
AMQ8409I: Display Queue details.
   QUEUE(SYSTEM.CLUSTER.TRANSMIT.QUEUE)    TYPE(QLOCAL)
   CLCHNAME( )                             USAGE(XMITQ)
AMQ8409I: Display Queue details.
   QUEUE(SYSTEM.CLUSTER.TRANSMIT.TO.QM3)   TYPE(QLOCAL)
   CLCHNAME( )                             USAGE(XMITQ)
AMQ8409I: Display Queue details.
   QUEUE(CLUS.XMITQ.QM)                    TYPE(QLOCAL)
   CLCHNAME(TO.QM*)                        USAGE(XMITQ)
AMQ8409I: Display Queue details.
   QUEUE(QM9.XMITQ)                        TYPE(QLOCAL)
   CLCHNAME( )                             USAGE(XMITQ)
"""
CLUSTER_XMITQS = ["SYSTEM.CLUSTER.TRANSMIT.QUEUE", "SYSTEM.CLUSTER.TRANSMIT.TO.QM3", "CLUS.XMITQ.QM"]
CONFIG_KINDS = ["CLUSQMGR", "NAMELIST", "QALIAS", "QCLUSTER", "QLOCAL", "QMGR", "QREMOTE"]

_ECHO = re.compile(r"^\s*\d+ : (.*)$")
_CLOSING = re.compile(r"^(\d+|One) MQSC commands? read\.")


def runmqsc_answers(path: Path) -> dict[str, str]:
    """The answer runmqsc printed to each command of a capture: the lines between its echo and the next echo
    or the closing lines."""
    answers: dict[str, str] = {}
    command = None
    lines: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        m = _ECHO.match(line)
        if m or _CLOSING.match(line):
            if command is not None:
                answers[command] = "\n".join(lines)
            command, lines = (m.group(1).strip() if m else None), []
        elif command is not None:
            lines.append(line)
    return answers


def depth_answer(depth: int) -> str:
    return ("AMQ8409I: Display Queue details.\n"
            f"   QUEUE({TRACE_QUEUE})\n"
            f"   TYPE(QLOCAL)                            CURDEPTH({depth})")


# ----------------------------------------------------------------------------------------------------------
# Stubs: small Python scripts run by the kit through PATH. Each appends its argv (and stdin) to calls.jsonl.

_STUB_HEAD = f"""#!{sys.executable}
import json, os, sys
STUB = os.environ["CLWL_STUB_DIR"]
def record(extra=None):
    with open(os.path.join(STUB, "calls.jsonl"), "a") as fh:
        fh.write(json.dumps({{"tool": os.path.basename(sys.argv[0]), "argv": sys.argv[1:], **(extra or {{}})}}) + "\\n")
def fixture(name):
    with open(os.path.join(STUB, name), encoding="utf-8") as fh:
        return fh.read()
def option(flag):
    args = sys.argv[1:]
    return args[args.index(flag) + 1] if flag in args else None
"""

STUBS = {
    # runmqsc QMGR < commands: banner, then each command echoed as runmqsc echoes it and its canned answer.
    "runmqsc": """
text = sys.stdin.read()
record({"stdin": text})
qm = sys.argv[-1]
answers = json.loads(fixture("runmqsc.json"))
out = ["5724-H72 (C) Copyright IBM Corp. 1994, 2025.", f"Starting MQSC for queue manager {qm}.", "", ""]
commands = [l.strip() for l in text.splitlines() if l.strip() and not l.startswith("*")]
for n, command in enumerate(commands, 1):
    if command not in answers:
        print(f"stub runmqsc: no canned answer for {command!r}", file=sys.stderr)
        sys.exit(20)
    out.append(f"{n:6d} : {command}")
    out.append(answers[command])
out.append("One MQSC command read." if len(commands) == 1 else f"{len(commands)} MQSC commands read.")
out += ["No commands have a syntax error.", "All valid MQSC commands were processed."]
print("\\n".join(out))
""",
    # amqsmon -m QMGR -t accounting|statistics: the records of that queue manager (the fixture's queue manager
    # name is replaced by the one asked for); nothing at all when the stub's queue is "empty".
    "amqsmon": """
record()
kind = option("-t")
if "-a" in sys.argv or kind not in ("accounting", "statistics"):
    sys.exit(1)
if not os.path.exists(os.path.join(STUB, "empty.amqsmon")):
    text = fixture(kind + ".amqsmon")
    for old in ("QM1", "QM3"):
        text = text.replace(f"QueueManager: '{old}'", f"QueueManager: '{option('-m')}'")
    sys.stdout.write(text)
""",
    "amqsact": """
record()
if "-v" not in sys.argv:
    sys.exit(1)
sys.stdout.write(fixture("trace.amqsact"))
""",
    # dmpmqmsg -m QMGR -i QUEUE -f FILE: the fixture dump, headed by the queue asked for. -I (destructive) fails.
    "dmpmqmsg": """
record()
queue = option("-i")
if queue is None or "-I" in sys.argv:
    sys.exit(1)
lines = fixture("xmitq.dmpmqmsg").splitlines(True)
text = "".join(f"* Queue = {queue}\\n" if l.startswith("* Queue") else
               f"* Qmgr  = {option('-m')}\\n" if l.startswith("* Qmgr") else l for l in lines)
with open(option("-f"), "w", encoding="utf-8") as fh:
    fh.write(text)
""",
    "amqsbcg": """
record()
queue, qm = sys.argv[1], sys.argv[2]
lines = fixture("xmitq.amqsbcg").splitlines(True)
sys.stdout.write("".join(f" MQOPEN - '{queue}'\\n" if l.startswith(" MQOPEN - ") else l for l in lines))
""",
    # curl ... --data BODY -o FILE -w '%{http_code}' URL: the canned runCommandJSON answer for the qualifier.
    "curl": """
body = json.loads(option("--data"))
record({"body": body})
answers = json.loads(fixture("rest.json"))
with open(option("-o"), "w", encoding="utf-8") as fh:
    json.dump(answers[body["qualifier"]], fh)
sys.stdout.write("200")
""",
}


@pytest.fixture
def kit(tmp_path: Path):
    """Stubs on PATH, the landing folder and the log; ``run(script, sub, qm)`` runs the kit."""
    stub = tmp_path / "stub"
    stub.mkdir()
    for name, body in STUBS.items():
        p = stub / name
        p.write_text(_STUB_HEAD + body, encoding="utf-8")
        p.chmod(0o755)
    answers = runmqsc_answers(SAMPLE_QM1 / "config_060000.mqsc")
    answers.update(runmqsc_answers(SAMPLE_QM1 / "chstatus_120000.mqsc"))
    namelist = runmqsc_answers(FIX / "mqsc" / "not_found_messages.txt")["DISPLAY NAMELIST(CLUSTERS.NL) ALL"]
    answers["DISPLAY NAMELIST(*) ALL"] = namelist
    answers[XMITQ_LIST_COMMAND] = XMITQ_LIST_ANSWER
    answers[f"DISPLAY QLOCAL({TRACE_QUEUE}) CURDEPTH"] = depth_answer(3)
    (stub / "runmqsc.json").write_text(json.dumps(answers), encoding="utf-8")
    (stub / "accounting.amqsmon").write_text((SAMPLE_QM1 / "accounting.amqsmon").read_text(), encoding="utf-8")
    # statistics_qm3.txt ends with a record damaged on purpose (ObjectCount 3, two groups): left out here.
    statistics = (FIX / "amqsmon" / "statistics_qm3.txt").read_text(encoding="utf-8")
    statistics = statistics[:statistics.rindex("MonitoringType: QueueStatistics")]
    (stub / "statistics.amqsmon").write_text(statistics, encoding="utf-8")
    (stub / "trace.amqsact").write_text((FIX / "amqsact_trace" / "notfixed_medium.amqsact").read_text(),
                                        encoding="utf-8")
    # The sample browse (QM5's), not tests/fixtures/xmitq/dmpmqmsg_sctq.txt, which holds damaged messages on purpose.
    (stub / "xmitq.dmpmqmsg").write_text(SAMPLE_DMPMQMSG.read_text(), encoding="utf-8")
    (stub / "xmitq.amqsbcg").write_text((SAMPLE_QM1 / "xmitq_153000.amqsbcg").read_text(), encoding="utf-8")
    envelopes = json.loads((SAMPLE_QM2 / "config_060000.json").read_text(encoding="utf-8"))
    rest = dict(zip(["qmgr", "clusqmgr", "qcluster", "qlocal", "qalias", "qremote"], envelopes))
    rest["namelist"] = json.loads((FIX / "rest" / "qcluster_not_found.json").read_text(encoding="utf-8"))
    rest["chstatus"] = next(e for e in json.loads((FIX / "rest" / "estate_qm1_array.json").read_text(encoding="utf-8"))
                            if any("substate" in r.get("parameters", {}) for r in e["commandResponse"]))
    (stub / "rest.json").write_text(json.dumps(rest), encoding="utf-8")
    landing = tmp_path / "landing"
    log = tmp_path / "capture.log"
    env = {"PATH": f"{stub}:/usr/bin:/bin", "HOME": str(tmp_path), "TMPDIR": str(tmp_path),
           "CLWL_LANDING": str(landing), "CLWL_CAPTURE_LOG": str(log), "CLWL_STUB_DIR": str(stub),
           "CLWL_MQWEB_URL": "https://mqweb.example.com:9443", "CLWL_NETRC": str(tmp_path / "netrc")}

    class Kit:
        def __init__(self):
            self.stub, self.landing, self.log, self.env = stub, landing, log, env

        def run(self, script: Path, sub: str, qm: str = QM, **extra: str) -> subprocess.CompletedProcess:
            return subprocess.run(["sh", str(script), sub, qm], env={**env, **extra}, capture_output=True,
                                  text=True, timeout=60)

        def calls(self, tool: str | None = None) -> list[dict]:
            p = stub / "calls.jsonl"
            rows = [json.loads(line) for line in p.read_text().splitlines()] if p.exists() else []
            return [r for r in rows if tool is None or r["tool"] == tool]

        def files(self) -> list[Path]:
            return sorted(p for p in landing.rglob("*") if p.is_file()) if landing.exists() else []

    return Kit()


def _written(kit, script: Path, sub: str, qm: str = QM, **extra: str) -> tuple[list[Path], datetime, datetime]:
    """Run one subcommand; the files it added, and the UTC window it ran in (whole seconds)."""
    before = set(kit.files())
    start = datetime.now(timezone.utc).replace(microsecond=0)
    done = kit.run(script, sub, qm, **extra)
    end = datetime.now(timezone.utc)
    assert done.returncode == 0, (done.stdout, done.stderr, kit.log.read_text() if kit.log.exists() else "")
    return sorted(set(kit.files()) - before), start, end


def _check_place(kit, path: Path, qm: str, start: datetime, end: datetime) -> tuple:
    """<landing>/<date>/<QM>/<name>, classified by the ingest's own name rules; the capture time in the name
    is the UTC time of the run."""
    rel = path.relative_to(kit.landing).parts
    assert len(rel) == 3 and rel[1] == qm, rel
    run_date = rel[0]
    parser, ctype, ctime, reject = classify_name(rel[2], run_date)
    assert reject is None, reject
    if ctime is not None:
        assert start <= ctime <= end, (ctime, start, end)
    return run_date, parser, ctype


def _ingests_cleanly(kit, path: Path) -> dict:
    """The ingest's discovery and per-file parse: read, nothing quarantined, not rejected."""
    run_date = path.relative_to(kit.landing).parts[0]
    _, files, notes = discover_landing(kit.landing, [run_date])
    assert notes == []
    spec = next(f for f in files if Path(f.path) == path.resolve())
    assert spec.reject is None
    summary, _ = parse_landing_file(spec, "capture-kit-test")
    assert summary["status"] == "ingested", summary
    assert summary["records_quarantined"] == 0 and summary["records_accepted"] > 0, summary
    return summary


# ----------------------------------------------------------------------------------------------------------


def test_config_capture_lands_and_covers_every_kind(kit):
    new, start, end = _written(kit, UNIX_SCRIPT, "config")
    assert len(new) == 1
    run_date, parser, ctype = _check_place(kit, new[0], QM, start, end)
    assert (parser, ctype) == ("capture", "config")
    assert re.fullmatch(r"config_\d{6}\.mqsc", new[0].name)
    cap = parse_capture_file(new[0])
    assert cap.problems == [] and cap.fmt == "mqsc" and cap.banner_qmgr == QM
    # The sample's 23 records (1 QMGR, 3 CLUSQMGR ... as in samples/landing) plus the one namelist.
    assert sorted({r.kind for r in cap.records}) == CONFIG_KINDS
    # runmqsc echoed every DISPLAY (no -e): the capture lists each kind in full, so the history can tell that an
    # object missing from a later capture is gone.
    text = new[0].read_text(encoding="utf-8")
    assert covered_kinds(text, "config", []) == CONFIG_KINDS
    summary = _ingests_cleanly(kit, new[0])
    assert summary["format"] == "mqsc" and summary["records_accepted"] == len(cap.records)
    stdin = kit.calls("runmqsc")[0]["stdin"]
    assert "DISPLAY QCLUSTER(*) ALL" in stdin and kit.calls("runmqsc")[0]["argv"] == [QM]
    assert f"runmqsc {QM} < config.mqsc" in kit.log.read_text()


def test_chstatus_capture(kit):
    new, start, end = _written(kit, UNIX_SCRIPT, "chstatus")
    assert len(new) == 1
    _, parser, ctype = _check_place(kit, new[0], QM, start, end)
    assert (parser, ctype) == ("capture", "chstatus")
    cap = parse_capture_file(new[0])
    assert cap.problems == [] and cap.records and {r.kind for r in cap.records} == {"CHSTATUS"}
    assert covered_kinds(new[0].read_text(encoding="utf-8"), "chstatus", []) == ["CHSTATUS"]
    _ingests_cleanly(kit, new[0])


def test_accounting_and_statistics(kit):
    new, start, end = _written(kit, UNIX_SCRIPT, "accounting")
    names = sorted(p.name for p in new)
    assert [re.sub(r"\d{6}", "HHMMSS", n) for n in names] == ["accounting_HHMMSS.amqsmon",
                                                              "statistics_HHMMSS.amqsmon"]
    for path in new:
        _, parser, _ = _check_place(kit, path, QM, start, end)
        assert parser == "amqsmon"
        records, problems, _skipped = parse_amqsmon_file(path)
        assert problems == [] and records and {r.qmgr for r in records} == {QM}
        _ingests_cleanly(kit, path)
    # queue accounting and queue statistics records (and channel statistics, which carry no monitoring_type)
    types = {getattr(r, "monitoring_type", "ChannelStatistics") for p in new for r in parse_amqsmon_file(p)[0]}
    assert {"QueueAccounting", "QueueStatistics"} <= types
    # Queue records are wanted: never amqsmon -a (MQI records only); destructive unless asked to browse.
    for call in kit.calls("amqsmon"):
        assert "-a" not in call["argv"] and "-b" not in call["argv"] and call["argv"][:2] == ["-m", QM]
    assert f"amqsmon -m {QM} -t statistics" in kit.log.read_text()


def test_accounting_with_an_empty_queue_writes_nothing(kit):
    (kit.stub / "empty.amqsmon").write_text("")
    new, _, _ = _written(kit, UNIX_SCRIPT, "accounting")
    assert new == []  # an amqsmon file without a record would be rejected by the ingest
    assert "no accounting records on the queue" in kit.log.read_text()


def test_activity_trace(kit):
    new, start, end = _written(kit, UNIX_SCRIPT, "trace")
    assert len(new) == 1
    run_date, parser, _ = _check_place(kit, new[0], QM, start, end)
    assert parser == "activity_trace"
    # QMGR.YYYY-MM-DD.HHMMSS.amqsact: name order is time order within the day's folder.
    m = re.fullmatch(rf"{QM}\.(\d{{4}}-\d\d-\d\d)\.(\d{{6}})\.amqsact", new[0].name)
    assert m and m.group(1) == run_date
    stamp = datetime.strptime(m.group(1) + m.group(2), "%Y-%m-%d%H%M%S").replace(tzinfo=timezone.utc)
    assert start <= stamp <= end
    result = parse_activity_trace_file(new[0])
    assert result.problems == [] and result.puts
    summary = _ingests_cleanly(kit, new[0])
    assert summary["format"] == "amqsact"
    (call,) = kit.calls("amqsact")
    argv = call["argv"]
    # verbose (the summary form gives no put events), bounded by the depth runmqsc reported (3).
    assert "-v" in argv and argv[argv.index("-d") + 1] == "3" and argv[argv.index("-m") + 1] == QM
    assert argv[argv.index("-q") + 1] == TRACE_QUEUE and "-b" not in argv


def test_activity_trace_with_an_empty_queue_does_not_run_amqsact(kit):
    answers = json.loads((kit.stub / "runmqsc.json").read_text())
    answers[f"DISPLAY QLOCAL({TRACE_QUEUE}) CURDEPTH"] = depth_answer(0)
    (kit.stub / "runmqsc.json").write_text(json.dumps(answers))
    new, _, _ = _written(kit, UNIX_SCRIPT, "trace")
    assert new == [] and kit.calls("amqsact") == []


@pytest.mark.parametrize("tool", ["dmpmqmsg", "amqsbcg"])
def test_xmitq_browse_of_every_cluster_transmission_queue(kit, tool):
    new, start, end = _written(kit, UNIX_SCRIPT, "xmitq", CLWL_XMITQ_TOOL=tool)
    assert len(new) == 1 and re.fullmatch(rf"xmitq_\d{{6}}\.{tool}", new[0].name)
    _, parser, ctype = _check_place(kit, new[0], QM, start, end)
    assert (parser, ctype) == ("xmitq", "xmitq")
    calls = kit.calls(tool)
    if tool == "dmpmqmsg":
        # -i browses; -I would take the messages off the queue.
        assert [c["argv"][c["argv"].index("-i") + 1] for c in calls] == CLUSTER_XMITQS
        assert all("-I" not in c["argv"] for c in calls)
        one = parse_xmitq_file(SAMPLE_DMPMQMSG)
    else:
        assert [c["argv"] for c in calls] == [[q, QM] for q in CLUSTER_XMITQS]
        one = parse_xmitq_file(SAMPLE_QM1 / "xmitq_153000.amqsbcg")
    messages, problems = parse_xmitq_file(new[0])
    assert problems == [] and one[1] == []
    # One dump per cluster transmission queue, in one file: each message keeps the queue it was browsed on.
    assert len(messages) == len(CLUSTER_XMITQS) * len(one[0])
    assert sorted({m.queue for m in messages}) == sorted(CLUSTER_XMITQS)
    summary = _ingests_cleanly(kit, new[0])
    assert summary["format"] == tool and summary["records_accepted"] == len(messages)


def test_rest_config_and_chstatus(kit):
    qm = "QM2"  # the sample's REST answers are QM2's
    for sub, kinds in (("config", None), ("chstatus", {"CHSTATUS"})):
        new, start, end = _written(kit, REST_SCRIPT, sub, qm)
        assert len(new) == 1 and re.fullmatch(rf"{sub}_\d{{6}}\.json", new[0].name)
        _, parser, ctype = _check_place(kit, new[0], qm, start, end)
        assert (parser, ctype) == ("capture", sub)
        cap = parse_capture_file(new[0])
        assert cap.problems == [] and cap.fmt == "rest" and cap.banner_qmgr == qm
        if kinds:
            assert {r.kind for r in cap.records} == kinds
        else:
            assert {"QMGR", "CLUSQMGR", "QCLUSTER", "QLOCAL"} <= {r.kind for r in cap.records}
        _ingests_cleanly(kit, new[0])
    calls = kit.calls("curl")
    assert [c["body"]["qualifier"] for c in calls] == ["qmgr", "clusqmgr", "qcluster", "qlocal", "qalias",
                                                       "qremote", "namelist", "chstatus"]
    for c in calls:
        argv = c["argv"]
        assert c["body"]["type"] == "runCommandJSON" and c["body"]["responseParameters"] == ["all"]
        assert argv[-1] == "https://mqweb.example.com:9443/ibmmq/rest/v2/admin/action/qmgr/QM2/mqsc"
        assert "ibm-mq-rest-csrf-token: clwl" in argv and argv[argv.index("--netrc-file") + 1].endswith("netrc")
        assert "-u" not in argv and "-k" not in argv and "--insecure" not in argv


def test_bad_usage_writes_nothing(kit):
    for args in (["nosuch", QM], ["config", "QM/1"], ["config", ""]):
        done = subprocess.run(["sh", str(UNIX_SCRIPT), *args], env=kit.env, capture_output=True, text=True)
        assert done.returncode == 2 and done.stderr
    done = subprocess.run(["sh", str(UNIX_SCRIPT), "config", QM], env={**kit.env, "CLWL_LANDING": ""},
                          capture_output=True, text=True)
    assert done.returncode == 2 and "CLWL_LANDING" in done.stderr
    assert kit.files() == []


def test_a_failed_runmqsc_leaves_no_file(kit):
    (kit.stub / "runmqsc.json").write_text("{}")  # every command unknown: the stub ends with 20
    done = kit.run(UNIX_SCRIPT, "config")
    assert done.returncode == 1 and kit.files() == []
    assert "FAILED: runmqsc QM1 ended with exit status 20" in kit.log.read_text()
    assert not [p for p in kit.landing.rglob(".*")]  # no partial file left behind either


# ----------------------------------------------------------------------------------------------------------
# The other platforms' shapes


def test_windows_and_zos_shapes_ingest_cleanly(tmp_path):
    """What capture/windows/README.md and capture/zos/README.md tell the administrator to land: runmqsc output
    with Windows line ends (and a UTF-16 file, as PowerShell 5's redirection writes), and CSQUTIL COMMAND
    SYSPRINT saved as config_HHMMSS.txt."""
    day = tmp_path / "2026-11-20"
    (day / "QM1").mkdir(parents=True)
    (day / "MQ1A").mkdir()
    text = (SAMPLE_QM1 / "config_060000.mqsc").read_text(encoding="utf-8")
    (day / "QM1" / "config_060000.mqsc").write_bytes(text.replace("\n", "\r\n").encode("utf-8"))
    (day / "QM1" / "config_070000.txt").write_bytes(text.replace("\n", "\r\n").encode("utf-16"))
    (day / "MQ1A" / "config_060000.txt").write_bytes((FIX / "zos" / "csqutil_mq1a.txt").read_bytes())
    _, files, notes = discover_landing(tmp_path, ["2026-11-20"])
    assert notes == [] and len(files) == 3
    formats = {}
    for spec in files:
        summary, _ = parse_landing_file(spec, "capture-kit-test")
        assert summary["status"] == "ingested" and summary["records_quarantined"] == 0, summary
        formats[spec.source_file] = (summary["format"], summary["records_accepted"])
    assert formats["2026-11-20/MQ1A/config_060000.txt"] == ("zos", 7)  # the fixture's 7 records
    assert formats["2026-11-20/QM1/config_060000.mqsc"] == formats["2026-11-20/QM1/config_070000.txt"]


def _display_lines(text: str) -> list[str]:
    """The DISPLAY <kind>[(*)] ALL commands of a text, each once, in order."""
    return list(dict.fromkeys(re.findall(r"DISPLAY [A-Z]+(?:\(\*\))? ALL", text)))


def test_every_variant_asks_for_the_same_displays():
    unix = _display_lines(UNIX_SCRIPT.read_text())
    assert len(unix) == 8  # 7 configuration commands and DISPLAY CHSTATUS(*) ALL
    windows = (KIT / "windows" / "README.md").read_text()
    for command in unix:
        assert command in windows, command
    rest = REST_SCRIPT.read_text()
    for command in unix:
        qualifier = command.split()[1].split("(")[0].lower()
        assert re.search(rf"post \d+ {qualifier}\b", rest), qualifier
    zos = (KIT / "zos" / "README.md").read_text()
    assert "EXEC PGM=CSQUTIL" in zos and "COMMAND DDNAME(" in zos
    # DISPLAY GROUP and DISPLAY CFSTRUCT: the group's members and the structure's level, for intra-group queuing
    # (their answers are read by clwl.parse.zos: tests/unit/test_igq_evidence.py).
    for command in ("DISPLAY QMGR ALL", "DISPLAY CLUSQMGR(*) ALL", "DISPLAY QCLUSTER(*) ALL",
                    "DISPLAY CHSTATUS(*) ALL", "DISPLAY GROUP", "DISPLAY CFSTRUCT(*) ALL"):
        assert command in zos, command


# ----------------------------------------------------------------------------------------------------------
# Static checks of every kit file


def _kit_files() -> list[Path]:
    return sorted(p for p in KIT.rglob("*") if p.is_file())


def test_every_script_passes_sh_syntax_check():
    scripts = [p for p in _kit_files() if p.suffix == ".sh"]
    assert {UNIX_SCRIPT, REST_SCRIPT} <= set(scripts)
    for script in scripts:
        done = subprocess.run(["sh", "-n", str(script)], capture_output=True, text=True)
        assert done.returncode == 0, (script, done.stderr)
        assert script.read_text().startswith("#!/bin/sh\n"), script
        assert os.access(script, os.X_OK), script


_CREDENTIAL = re.compile(
    r"(?i)(?:pass(?:word|wd)?|pwd|secret|token)\s*[=:]\s*['\"]?[A-Za-z0-9!@#$%^&*._-]{4,}"  # pass=xyz, password: xyz
    r"|(?:^|\s)(?:-u|--user)\s+['\"]?[A-Za-z0-9_.@-]+:[^\s'\"]+"  # curl -u user:password
    r"|authorization:\s*basic\s+[A-Za-z0-9+/=]{8,}"  # a ready-made Basic header
    r"|BEGIN [A-Z ]*PRIVATE KEY")


def test_no_credentials_in_any_kit_file():
    for path in _kit_files():
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "ibm-mq-rest-csrf-token" in line.lower():
                continue  # mqweb's CSRF header: any value, not a secret
            assert not _CREDENTIAL.search(line), f"{path.relative_to(ROOT)}:{n}: {line.strip()}"


def test_the_credential_check_finds_what_it_looks_for():
    for bad in ("curl -u admin:passw0rd https://h", "MQ_PASSWORD=s3cret99", "password: hunter22",
                "-H 'Authorization: Basic YWRtaW46cGFzc3cwcmQ='"):
        assert _CREDENTIAL.search(bad), bad
    for fine in ("machine mqweb.example.com login clwlmon password ...", "--netrc-file \"$NETRC\"",
                 "date -u +%Y-%m-%dT%H:%M:%SZ"):
        assert not _CREDENTIAL.search(fine), fine
