"""Small estates written by hand, in runmqsc's printed shape, for the behaviours the samples never show.

Every capture is what `runmqsc` prints for the DISPLAY commands (banner, echoed command, AMQnnnnI records, two
KEY(value) columns, closing lines), reduced to the attributes the replay reads. One cluster CL1; the sending
queue manager's view holds its own CLUSRCVR and one auto-defined CLUSSDR per remote queue manager.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path


def _record(msg: str, attrs: dict[str, str]) -> str:
    items = [f"{k}({v})" for k, v in attrs.items()]
    lines = [msg]
    for i in range(0, len(items), 2):
        pair = items[i:i + 2]
        lines.append("   " + (pair[0].ljust(40) + (pair[1] if len(pair) > 1 else "")).rstrip())
    return "\n".join(lines)


def _runmqsc(qmgr: str, commands: list[tuple[str, list[str]]]) -> str:
    out = ["5724-H72 (C) Copyright IBM Corp. 1994, 2025.", f"Starting MQSC for queue manager {qmgr}.", "", ""]
    for n, (command, records) in enumerate(commands, 1):
        out.append(f"{n:>6} : {command}")
        out.extend(records)
    out += [f"{len(commands)} MQSC commands read.", "No commands have a syntax error.",
            "All valid MQSC commands were processed.", ""]
    return "\n".join(out)


def config_capture(qmgr: str, remotes: dict[str, dict[str, str]], queues: dict[str, dict[str, dict[str, str]]],
                   qmgr_attrs: dict[str, str] | None = None) -> str:
    """DISPLAY QMGR, CLUSQMGR(*) and QCLUSTER(*) of ``qmgr``'s view.

    remotes: remote queue manager -> extra CLUSQMGR attributes (CLWLWGHT, CLWLRANK, STATUS ...).
    queues: cluster queue -> hosting queue manager -> extra QCLUSTER attributes (DEFBIND, PUT, CLWLRANK ...).
    """
    qm = {"QMNAME": qmgr, "CLWLMRUC": "999999999", "CLWLUSEQ": "LOCAL", "DEFCLXQ": "SCTQ",
          "QMID": f"{qmgr}_2024-01-01_00.00.00", **(qmgr_attrs or {})}
    clusqmgrs = [_record("AMQ8441I: Display Cluster Queue Manager details.", {
        "CLUSQMGR": qmgr, "CHANNEL": f"TO.{qmgr}", "CLUSTER": "CL1", "CLWLPRTY": "0", "CLWLRANK": "0",
        "CLWLWGHT": "50", "DEFTYPE": "CLUSRCVR", "NETPRTY": "0", "QMID": f"{qmgr}_2024-01-01_00.00.00",
        "QMTYPE": "NORMAL", "STATUS": "RUNNING", "SUSPEND": "NO", "XMITQ": " "})]
    for name, extra in sorted(remotes.items()):
        clusqmgrs.append(_record("AMQ8441I: Display Cluster Queue Manager details.", {
            "CLUSQMGR": name, "CHANNEL": f"TO.{name}", "CLUSTER": "CL1", "CLWLPRTY": "0", "CLWLRANK": "0",
            "CLWLWGHT": "50", "DEFTYPE": "CLUSSDRA", "NETPRTY": "0", "QMID": f"{name}_2024-01-01_00.00.00",
            "QMTYPE": "NORMAL", "STATUS": "RUNNING", "SUSPEND": "NO",
            "XMITQ": "SYSTEM.CLUSTER.TRANSMIT.QUEUE", **extra}))
    qclusters = []
    for queue, hosts in sorted(queues.items()):
        for host, extra in sorted(hosts.items()):
            qclusters.append(_record("AMQ8409I: Display Queue details.", {
                "QUEUE": queue, "TYPE": "QCLUSTER", "CLUSQMGR": host, "CLUSQT": "QLOCAL", "CLUSTER": "CL1",
                "CLWLPRTY": "0", "CLWLRANK": "0", "DEFBIND": "NOTFIXED", "PUT": "ENABLED",
                "QMID": f"{host}_2024-01-01_00.00.00", **extra}))
    return _runmqsc(qmgr, [
        ("DISPLAY QMGR ALL", [_record("AMQ8408I: Display Queue Manager details.", qm)]),
        ("DISPLAY CLUSQMGR(*) ALL", clusqmgrs),
        ("DISPLAY QCLUSTER(*) ALL", qclusters),
    ])


def chstatus_capture(qmgr: str, states: dict[str, str]) -> str:
    """DISPLAY CHSTATUS(*) ALL: one CLUSSDR record per channel given (an inactive channel has none)."""
    records = [_record("AMQ8417I: Display Channel Status details.", {
        "CHANNEL": channel, "CHLTYPE": "CLUSSDR", "CONNAME": f"{channel.lower()}.example.com(1414)",
        "CURRENT": "", "STATUS": state, "SUBSTATE": " ", "XMITQ": "SYSTEM.CLUSTER.TRANSMIT.QUEUE"})
        .replace("CURRENT()", "CURRENT") for channel, state in sorted(states.items())]
    return _runmqsc(qmgr, [("DISPLAY CHSTATUS(*) ALL", records)])


PUTS_HEADER = ("put_time,sending_qmgr,queue,target_qmgr,bind,open_handle,group_id,logical_order,"
               "from_cluster_channel,pcf,length,persistent,accounting_token,msg_id,observed_qmgr,observed_channel,"
               "observed_xmitq")
ZERO_TOKEN = "0" * 64
TOKEN = "04" + "31" * 15 + "0" * 32


def put_row(t: datetime, sender: str, queue: str, msg_id: str, bind: str = "notfixed", handle: str = "app:1:1",
            target: str = "", length: int = 100) -> str:
    """One put record in the documented CSV schema (AccountingToken all zeros for what cannot be
    re-allocated: bind on open, a named target queue manager)."""
    token = ZERO_TOKEN if bind == "open" or target else TOKEN
    return (f"{t.strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3]}Z,{sender},{queue},{target},{bind},{handle},,false,false,"
            f"false,{length},true,{token},{msg_id},,,")


def write_day(landing: Path, day: str, qmgr: str, files: dict[str, str]) -> Path:
    folder = landing / day / qmgr
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


# The re-allocation day of tests/spark/test_reallocation_day.py (its docstring derives every outcome).
DAY = "2026-11-20"
T0 = datetime(2026, 11, 20, 6, 0, tzinfo=timezone.utc)


def msg(n: int) -> str:
    return f"414D5120514D31202020202020202020{n:016X}"


def reallocation_landing(root, resent: bool = False):
    """``resent``: also a late file puts_resent.csv that repeats M2 and M5 (a re-sent export): both copies are
    held out of silver (quarantined, naming both files), and the day routes each message once."""
    remotes = {"QM2": {}, "QM3": {}}
    queues = {"Q1": {"QM2": {}, "QM3": {}}}
    puts = [put_row(T0 + timedelta(minutes=1), "QM1", "Q1", msg(1)),
            put_row(T0 + timedelta(minutes=2), "QM1", "Q1", msg(2)),
            put_row(T0 + timedelta(minutes=3), "QM1", "Q1", msg(3), bind="open", handle="app:1:9"),
            put_row(T0 + timedelta(minutes=4), "QM1", "Q1", msg(4)),
            put_row(T0 + timedelta(minutes=5), "QM1", "Q1", msg(5), target="QM3"),
            put_row(T0 + timedelta(minutes=90), "QM1", "Q1", msg(6))]
    write_day(root, DAY, "QM1", {
        "config_060000.mqsc": config_capture("QM1", remotes, queues),
        "chstatus_060000.mqsc": chstatus_capture("QM1", {"TO.QM2": "RETRYING", "TO.QM3": "RETRYING"}),
        "chstatus_070000.mqsc": chstatus_capture("QM1", {"TO.QM2": "RUNNING", "TO.QM3": "RETRYING"}),
        "puts.csv": "\n".join([PUTS_HEADER, *puts]) + "\n",
        **({"puts_resent.csv": "\n".join([PUTS_HEADER, puts[1], puts[4]]) + "\n"} if resent else {}),
    })
    return root
