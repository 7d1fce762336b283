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
                   qmgr_attrs: dict[str, str] | None = None,
                   receivers: list[tuple[str, str, int]] | None = None) -> str:
    """DISPLAY QMGR, CLUSQMGR(*) and QCLUSTER(*) of ``qmgr``'s view.

    remotes: remote queue manager -> extra CLUSQMGR attributes (CLWLWGHT, CLWLRANK, STATUS ...).
    queues: cluster queue -> hosting queue manager -> extra QCLUSTER attributes (DEFBIND, PUT, CLWLRANK ...).
    receivers: ``qmgr``'s own CLUSRCVRs as (channel, cluster, CLWLWGHT); default one, TO.<qmgr> in CL1 at 50.
    """
    qm = {"QMNAME": qmgr, "CLWLMRUC": "999999999", "CLWLUSEQ": "LOCAL", "DEFCLXQ": "SCTQ",
          "QMID": f"{qmgr}_2024-01-01_00.00.00", **(qmgr_attrs or {})}
    clusqmgrs = [_record("AMQ8441I: Display Cluster Queue Manager details.", {
        "CLUSQMGR": qmgr, "CHANNEL": channel, "CLUSTER": cluster, "CLWLPRTY": "0", "CLWLRANK": "0",
        "CLWLWGHT": str(weight), "DEFTYPE": "CLUSRCVR", "NETPRTY": "0", "QMID": f"{qmgr}_2024-01-01_00.00.00",
        "QMTYPE": "NORMAL", "STATUS": "RUNNING", "SUSPEND": "NO", "XMITQ": " "})
        for channel, cluster, weight in (receivers or [(f"TO.{qmgr}", "CL1", 50)])]
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


def copy_run(config, root: Path):
    """A writable copy of a published run (its PipelineConfig's lake and landing) under ``root``, for a test that
    changes what a session fixture built (tests/conftest.py ``reallocation_lake``). source_file is relative to the
    landing root, so the copy's files are the ones the run ingested; what-ifs other tests wrote are left out."""
    import shutil

    from spark.config import PipelineConfig

    shutil.copytree(config.landing, root / "landing", symlinks=True)
    shutil.copytree(config.lake, root / "lake", symlinks=True, ignore=shutil.ignore_patterns("whatif"))
    return PipelineConfig(lake=root / "lake", landing=root / "landing")


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


# -- a channel that fails between two status captures, and the channel agents' trace (issue 29 items 2, 3) ------
# The estate of tests/spark/test_timing_agreement.py (its docstring derives every outcome).
SCTQ = "SYSTEM.CLUSTER.TRANSMIT.QUEUE"


def _dump(hex_id: str, indent: str = "  ") -> list[str]:
    """amqsact's hex dump of a 24-byte id: 16 bytes a line, groups of two bytes, the characters beside."""
    raw = bytes.fromhex(hex_id)
    lines = []
    for off in range(0, len(raw), 16):
        part = raw[off:off + 16]
        groups = " ".join(part[i:i + 2].hex().upper() for i in range(0, len(part), 2))
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in part)
        lines.append(f"{indent}{off:08X}:  {groups:<39}  '{text:<16}'")
    return lines


def _operation(n: int, at: datetime, op: str, lines: list[str]) -> list[str]:
    micros = (at - datetime(1970, 1, 1, tzinfo=timezone.utc)) // timedelta(microseconds=1)
    return [f"MQI Operation: {n}", f"  Operation Id: {op}", "  ApplicationTid: 21",
            f"  OperationDate: '{at:%Y-%m-%d}'", f"  OperationTime: '{at:%H:%M:%S}'", *lines,
            "  Completion Code: MQCC_OK", "  Reason Code: 0", f"  High Res Time: {micros}"]


def agent_get(at: datetime, msg_id: str, remote_qmgr: str, remote_queue: str, n: int) -> list[str]:
    """A sending agent's MQGET of ``msg_id`` from the cluster transmission queue under syncpoint (Get Options
    8194 = MQGMO_SYNCPOINT | MQGMO_FAIL_IF_QUIESCING), its transmission header addressing remote_qmgr/queue."""
    own = ("AMQ " + remote_qmgr).ljust(16).encode().hex().upper() + f"{n:016X}"  # the transmission queue's MQMD
    return _operation(n, at, "MQXF_GET", [
        "  Hobj: 1", "  Get Options: 8194", "  Msg length: 548", f"  Object_name: '{SCTQ}'", f"  Resolved_Q_Name: '{SCTQ}'",
        "  Format_name: 'MQXMIT'", "  Msg_id:", *_dump(own), "  Transmit Header Msg_id:",
        *_dump(msg_id), f"  Transmit Header RemoteQName: '{remote_queue}'",
        f"  Transmit Header RemoteQMgr: '{remote_qmgr}'"])


def agent_put(at: datetime, msg_id: str, queue: str, n: int) -> list[str]:
    """A receiving agent's MQPUT1 of ``msg_id`` to ``queue`` under syncpoint (Put Options 10242)."""
    return _operation(n, at, "MQXF_PUT1", [
        f"  Object_name: '{queue}'", "  Put Options: 10242", "  Msg length: 100", f"  Resolved_Q_Name: '{queue}'",
        "  Format_name: 'MQSTR'", "  Persistence: 1", "  Msg_id:", *_dump(msg_id)])


def app_get(at: datetime, msg_id: str, queue: str, n: int) -> list[str]:
    """An application's MQGET of ``msg_id`` from ``queue`` (Get Options 8196: MQGMO_NO_SYNCPOINT | ...)."""
    return _operation(n, at, "MQXF_GET", [
        "  Hobj: 2", "  Get Options: 8196", "  Msg length: 100", f"  Object_name: '{queue}'", f"  Resolved_Q_Name: '{queue}'",
        "  Format_name: 'MQSTR'", "  Msg_id:", *_dump(msg_id)])


def commit(at: datetime, n: int) -> list[str]:
    return _operation(n, at, "MQXF_CMIT", [])


def trace_message(qmgr: str, connection: int, seq: int, operations: list[list[str]], *, channel: str | None = None,
                  channel_type: str | None = None, application: str = "amqrmppa") -> str:
    """One amqsact trace message (MEDIUM, Trace Detail Level 2) of a connection: a channel agent's (API
    Environment MQXE_MCA, its channel named) or an application's (MQXE_OTHER)."""
    correl = ("AMQC" + qmgr).ljust(16).encode().hex().upper() + f"{connection:016X}"
    first = operations[0][3].split("'")[1] + " " + operations[0][4].split("'")[1]
    head = ["MonitoringType: MQI Activity Trace", "Correl_id:", *_dump(correl, ""), f"QueueManager: '{qmgr}'",
            f"Host Name: 'host-{qmgr.lower()}'", f"IntervalStartDate: '{first[:10]}'",
            f"IntervalStartTime: '{first[11:]}'", "CommandLevel: 930", f"SeqNumber: {seq}",
            f"ApplicationName: '{application}'", "ApplicationPid: 3101", "UserId: 'mqm'",
            f"API Environment: {'MQXE_MCA' if channel else 'MQXE_OTHER'}", "Trace Detail Level: 2",
            "Platform: MQPL_UNIX"]
    if channel:
        head += [f"Channel Name: '{channel}'", "ConnName: 'peer(1414)'", f"Channel Type: {channel_type}"]
    body = [line for op in operations for line in op]
    return "\n".join(head + body + ["=" * 77, "", ""])


TIMING_DAY = DAY


def _at(hh: int, mm: int, ss: int = 0) -> datetime:
    return datetime(2026, 11, 20, hh, mm, ss, tzinfo=timezone.utc)


def timing_landing(root, arrivals: bool = True):
    """QM1 puts Q1 (hosted on QM2 only) and Q2 (on QM3 only). Status captures on QM1 at 06:00 (both channels
    RUNNING), 07:00 (both RETRYING) and 08:00 (TO.QM2 RUNNING, TO.QM3 RETRYING); in truth TO.QM2 failed at 06:30
    and ran again at 08:00, TO.QM3 failed at 06:45 and ran again at 08:40, after the last capture. The channel
    agents' trace (amqsact -c, a window per channel) has TO.QM2's agent get M1 at 06:10:01 and M2, M3, M4 at
    08:00:03-04, TO.QM3's agent get M6 at 08:40:02; QM2's receiving agent put M1 to Q1 at 06:10:02, and the
    application ORDERS got it at 06:11:00. M5 and M7 are not traced (outside the windows).

    ``arrivals`` False: QM2's receiving agent's put is left out (the sending side traced alone)."""
    remotes = {"QM2": {}, "QM3": {}}
    queues = {"Q1": {"QM2": {}}, "Q2": {"QM3": {}}}
    puts = [put_row(_at(6, 10), "QM1", "Q1", msg(1)), put_row(_at(6, 40), "QM1", "Q1", msg(2)),
            put_row(_at(6, 50), "QM1", "Q1", msg(3)), put_row(_at(7, 10), "QM1", "Q1", msg(4)),
            put_row(_at(7, 30), "QM1", "Q1", msg(5)), put_row(_at(7, 40), "QM1", "Q2", msg(6)),
            put_row(_at(8, 30), "QM1", "Q1", msg(7))]
    sender = "".join([
        trace_message("QM1", 0x5301, 0, [agent_get(_at(6, 10, 1), msg(1), "QM2", "Q1", 1), commit(_at(6, 10, 1), 2)],
                      channel="TO.QM2", channel_type="MQCHT_CLUSSDR"),
        trace_message("QM1", 0x5301, 1, [agent_get(_at(8, 0, 3), msg(2), "QM2", "Q1", 3),
                                         agent_get(_at(8, 0, 3), msg(3), "QM2", "Q1", 4),
                                         agent_get(_at(8, 0, 4), msg(4), "QM2", "Q1", 5), commit(_at(8, 0, 4), 6)],
                      channel="TO.QM2", channel_type="MQCHT_CLUSSDR"),
        trace_message("QM1", 0x5302, 0, [agent_get(_at(8, 40, 2), msg(6), "QM3", "Q2", 1), commit(_at(8, 40, 2), 2)],
                      channel="TO.QM3", channel_type="MQCHT_CLUSSDR"),
    ])
    receiver = "".join([
        trace_message("QM2", 0x7701, 0, [agent_put(_at(6, 10, 2), msg(1), "Q1", 1), commit(_at(6, 10, 2), 2)],
                      channel="TO.QM2", channel_type="MQCHT_CLUSRCVR") if arrivals else "",
        trace_message("QM2", 0x7702, 0, [app_get(_at(6, 11), msg(1), "Q1", 1)], application="ORDERS"),
    ])
    write_day(root, DAY, "QM1", {
        "config_060000.mqsc": config_capture("QM1", remotes, queues),
        "chstatus_060000.mqsc": chstatus_capture("QM1", {"TO.QM2": "RUNNING", "TO.QM3": "RUNNING"}),
        "chstatus_070000.mqsc": chstatus_capture("QM1", {"TO.QM2": "RETRYING", "TO.QM3": "RETRYING"}),
        "chstatus_080000.mqsc": chstatus_capture("QM1", {"TO.QM2": "RUNNING", "TO.QM3": "RETRYING"}),
        "puts.csv": "\n".join([PUTS_HEADER, *puts]) + "\n",
        "QM1.mca.amqsact": sender,
    })
    write_day(root, DAY, "QM2", {
        "config_060000.mqsc": config_capture("QM2", {"QM1": {}, "QM3": {}}, {"Q1": {"QM2": {}}, "Q2": {"QM3": {}}}),
        "QM2.mca.amqsact": receiver,
    })
    return root


# -- a queue-sharing group with intra-group queuing (issue 38) -------------------------------------------------
# The estate of tests/spark/test_igq_day.py (its docstring derives every outcome).
QSG_XMITQ = "SYSTEM.QSG.TRANSMIT.QUEUE"


def _zos_block(qmgr: str, kind: str, attrs: dict[str, str]) -> list[str]:
    """One CSQM201I ``DISPLAY <kind> DETAILS`` answer, an attribute a line, as CSQUTIL prints it."""
    return ([f"CSQM201I  +{qmgr} CSQMDRTC  DISPLAY {kind} DETAILS"] + [f"{k}({v})" for k, v in attrs.items()]
            + [f"END {kind} DETAILS"])


def zos_config_capture(qmgr: str, qsg: str, igq: bool, remotes: list[str], queues: dict[str, list[str]],
                       local_queues: list[str] = (), group: list[str] | None = None,
                       cfstruct: dict[str, str] | None = None, qsg_xmitq_maxmsgl: int | None = None,
                       structure: str = "APPL1") -> str:
    """CSQUTIL COMMAND SYSPRINT of ``qmgr`` (z/OS): DISPLAY QMGR (QSGNAME, IGQ), CLUSQMGR(*) (its CLUSRCVR and
    one CLUSSDRA per remote), QCLUSTER(*) (queue -> hosts), QLOCAL(*) (``local_queues`` in CL1, and the shared
    SYSTEM.QSG.TRANSMIT.QUEUE in ``structure`` when ``qsg_xmitq_maxmsgl`` is given), DISPLAY GROUP when ``group``
    lists the members, DISPLAY CFSTRUCT(*) when ``cfstruct`` gives the structure's attributes."""
    out = ["CSQU000I CSQUTIL IBM MQ for z/OS V9.3.0", f"CSQU121I Connected to queue manager {qmgr}",
           "DISPLAY QMGR ALL", "CSQN205I   COUNT=       2, RETURN=00000000, REASON=00000000",
           f"CSQM409I  +{qmgr} QMNAME({qmgr})", f"QSGNAME({qsg})", f"IGQ({'ENABLED' if igq else 'DISABLED'})",
           "CLWLUSEQ(LOCAL)", "CLWLMRUC(999999999)", "DEFCLXQ(SCTQ)", f"QMID({qmgr}.C0FFEE)",
           f"CSQ9022I  +{qmgr} CSQMDRTS ' DISPLAY QMGR' NORMAL COMPLETION", "DISPLAY CLUSQMGR(*) ALL"]
    for name in [qmgr, *sorted(remotes)]:
        out += _zos_block(qmgr, "CLUSQMGR", {
            "CLUSQMGR": name, "CLUSTER": "CL1", "CHANNEL": f"TO.{name}",
            "DEFTYPE": "CLUSRCVR" if name == qmgr else "CLUSSDRA", "QMID": f"{name}.C0FFEE", "STATUS": "RUNNING",
            "SUSPEND": "NO", "CLWLPRTY": "0", "CLWLRANK": "0", "CLWLWGHT": "50", "NETPRTY": "0",
            "XMITQ": " " if name == qmgr else "SYSTEM.CLUSTER.TRANSMIT.QUEUE"})
    out += [f"CSQ9022I  +{qmgr} CSQMDRTC ' DISPLAY CLUSQMGR' NORMAL COMPLETION", "DISPLAY QCLUSTER(*) ALL"]
    for queue, hosts in sorted(queues.items()):
        for host in sorted(hosts):
            out += _zos_block(qmgr, "QCLUSTER", {
                "QUEUE": queue, "TYPE": "QCLUSTER", "CLUSTER": "CL1", "CLUSQMGR": host, "CLUSQT": "QLOCAL",
                "QMID": f"{host}.C0FFEE", "DEFBIND": "NOTFIXED", "PUT": "ENABLED", "CLWLPRTY": "0", "CLWLRANK": "0"})
    out += [f"CSQ9022I  +{qmgr} CSQMDRTC ' DISPLAY QCLUSTER' NORMAL COMPLETION", "DISPLAY QLOCAL(*) ALL"]
    for queue in sorted(local_queues):
        out += _zos_block(qmgr, "QUEUE", {"QUEUE": queue, "TYPE": "QLOCAL", "QSGDISP": "QMGR", "CLUSTER": "CL1",
                                          "USAGE": "NORMAL", "CLWLUSEQ": "QMGR", "PUT": "ENABLED",
                                          "DEFBIND": "NOTFIXED"})
    if qsg_xmitq_maxmsgl is not None:
        out += _zos_block(qmgr, "QUEUE", {"QUEUE": QSG_XMITQ, "TYPE": "QLOCAL", "QSGDISP": "SHARED",
                                          "CFSTRUCT": structure, "USAGE": "XMITQ",
                                          "MAXMSGL": str(qsg_xmitq_maxmsgl)})
    out.append(f"CSQ9022I  +{qmgr} CSQMDRTC ' DISPLAY QLOCAL' NORMAL COMPLETION")
    if group is not None:
        out += ["DISPLAY GROUP", f"CSQ5100I +{qmgr} CSQ5DQSG DISPLAY GROUP report follows ...",
                f"CSQ5102I +{qmgr} CSQ5DQSG Queue managers in group {qsg}", "-" * 66,
                "Name Num Prefix   Status    Ver DB2  Connection", "---- --- -------- --------- --- ---- ----------"]
        out += [f"{m:<4} {n:>3} +{m:<7} ACTIVE    930 DB2A ACTIVE" for n, m in enumerate(group, 1)]
        out += ["-" * 66, "End of queue managers report",
                f"CSQ9022I +{qmgr} CSQ5DQSG ' DISPLAY GROUP' NORMAL COMPLETION"]
    if cfstruct is not None:
        out += ["DISPLAY CFSTRUCT(*) ALL", *_zos_block(qmgr, "CFSTRUCT", {"CFSTRUCT": structure, **cfstruct}),
                f"CSQ9022I  +{qmgr} CSQMDRTC ' DISPLAY CFSTRUCT' NORMAL COMPLETION"]
    out += ["CSQU148I CSQUTIL Utility completed, return code=0", ""]
    return "\n".join(out)


def observed_put_row(t: datetime, sender: str, queue: str, msg_id: str, length: int, qmgr: str,
                     xmitq: str = "", target: str = "") -> str:
    """A put record whose last columns say where MQ put the message (observed_qmgr, observed_channel,
    observed_xmitq): the cluster channel TO.<qmgr> for a cluster-path message, none for IGQ and the local queue."""
    row = put_row(t, sender, queue, msg_id, target=target, length=length)
    channel = f"TO.{qmgr}" if xmitq and xmitq != QSG_XMITQ else ""
    return row[:-3] + f",{qmgr},{channel},{xmitq}"


IGQ_DAY = "2026-11-20"
SCTQ_NAME = "SYSTEM.CLUSTER.TRANSMIT.QUEUE"
MB = 1024 * 1024


def _t(hh: int, mm: int) -> datetime:
    return datetime(2026, 11, 20, hh, mm, tzinfo=timezone.utc)


#: (sender, message id, put time, queue, target, length) -> (qmgr, path, xmitq) MQ takes: the derivation is in
#: tests/spark/test_igq_day.py's docstring.
IGQ_MESSAGES = [
    ("MQ1A", "A01", _t(6, 1), "APP.Q", "", 100, "MQ3A", "igq"),
    ("MQ1A", "A02", _t(6, 2), "APP.Q", "", 100, "MQ4B", "cluster"),
    ("MQ1A", "A03", _t(6, 3), "APP.Q", "", 100, "QMD", "cluster"),
    ("MQ1A", "A04", _t(6, 4), "APP.Q", "", 64_084, "MQ3A", "igq"),
    ("MQ1A", "A05", _t(6, 5), "APP.Q", "", 100, "MQ4B", "cluster"),
    ("MQ1A", "A06", _t(6, 6), "APP.Q", "", MB, "QMD", "cluster"),
    ("MQ1A", "A07", _t(6, 7), "APP.Q", "", 64_085, "MQ3A", "cluster"),
    ("MQ1A", "A08", _t(6, 8), "APP.Q", "", 100, "MQ4B", "cluster"),
    ("MQ1A", "A09", _t(6, 9), "APP.Q", "", 100, "QMD", "cluster"),
    ("MQ1A", "A10", _t(6, 10), "APP.Q", "MQ3A", 500, "MQ3A", "igq"),
    ("MQ1A", "A11", _t(6, 11), "APP.L", "", 100, "MQ1A", "local"),
    ("MQ2A", "B01", _t(6, 1), "APP.Q", "", 100, "MQ3A", "cluster"),
    ("MQ2A", "B02", _t(6, 2), "APP.Q", "", 100, "MQ4B", "cluster"),
    ("MQ2A", "B03", _t(6, 3), "APP.Q", "", 100, "QMD", "cluster"),
    ("MQ2A", "B04", _t(12, 1), "APP.Q", "", 100, "MQ3A", "igq"),
    ("MQ2A", "B05", _t(12, 2), "APP.Q", "", 100, "MQ4B", "cluster"),
    ("MQ2A", "B06", _t(12, 3), "APP.Q", "", 100, "QMD", "cluster"),
    ("MQ2A", "B07", _t(12, 4), "APP.Q", "", 70_000, "MQ3A", "cluster"),
    ("MQ4B", "C01", _t(6, 1), "APP.B", "", MB, "MQ5B", "igq"),
    ("MQ4B", "C02", _t(6, 2), "APP.B", "", 100 * MB, "MQ5B", "cluster"),
    ("QMD", "D01", _t(6, 1), "APP.Q", "MQ3A", 100, "MQ3A", "cluster"),
]


def igq_msg_id(sender: str, label: str) -> str:
    """A 48-hex-digit MQ message id: 'AMQ ' and the sender's name (padded), then the label as a number."""
    name = f"AMQ {sender}".ljust(16).encode("ascii").hex().upper()
    return name + f"{int(label[1:]) + 256 * (ord(label[0]) - 64):016X}"


def igq_expected_xmitq(path: str) -> str:
    return {"igq": QSG_XMITQ, "cluster": SCTQ_NAME, "local": ""}[path]


def igq_landing(root: Path) -> Path:
    """Six queue managers in cluster CL1: MQ1A, MQ2A, MQ3A in queue-sharing group QSG1 (structure APPL1 at
    CFLEVEL(3), the shared transmission queue's MAXMSGL 64,512), MQ4B and MQ5B in QSG2 (APPL2 at CFLEVEL(5)
    OFFLOAD(SMDS), MAXMSGL 100 MB), QMD distributed. MQ1A has IGQ(ENABLED) and captures DISPLAY GROUP and
    CFSTRUCT; MQ2A has IGQ(DISABLED) at 06:00 and IGQ(ENABLED) from its 12:00 capture, no DISPLAY GROUP or
    CFSTRUCT; MQ3A (IGQ(DISABLED): a receiver's setting does not matter) hosts APP.Q and APP.L; MQ4B
    (IGQ(ENABLED)) hosts APP.Q; MQ5B hosts APP.B; QMD hosts APP.Q. Every put record carries where MQ put the
    message (IGQ_MESSAGES)."""
    everyone = ["MQ1A", "MQ2A", "MQ3A", "MQ4B", "MQ5B", "QMD"]
    queues = {"APP.Q": ["MQ3A", "MQ4B", "QMD"], "APP.L": ["MQ1A", "MQ3A"], "APP.B": ["MQ5B"]}

    def others(qm: str) -> list[str]:
        return [q for q in everyone if q != qm]

    def zos(qm, qsg, igq, **kw):
        locals_ = [q for q, hosts in queues.items() if qm in hosts]
        return zos_config_capture(qm, qsg, igq, others(qm), queues, locals_, **kw)

    qsg1 = {"qsg_xmitq_maxmsgl": 64_512, "structure": "APPL1"}
    qsg2 = {"qsg_xmitq_maxmsgl": 100 * MB, "structure": "APPL2"}
    captures = {
        "MQ1A": {"config_060000.txt": zos("MQ1A", "QSG1", True, group=["MQ1A", "MQ2A", "MQ3A"],
                                          cfstruct={"CFLEVEL": "3", "RECOVER": "YES"}, **qsg1)},
        "MQ2A": {"config_060000.txt": zos("MQ2A", "QSG1", False, **qsg1),
                 "config_120000.txt": zos("MQ2A", "QSG1", True, **qsg1)},
        "MQ3A": {"config_060000.txt": zos("MQ3A", "QSG1", False, **qsg1)},
        "MQ4B": {"config_060000.txt": zos("MQ4B", "QSG2", True, cfstruct={"CFLEVEL": "5", "OFFLOAD": "SMDS"},
                                          **qsg2)},
        "MQ5B": {"config_060000.txt": zos("MQ5B", "QSG2", False, **qsg2)},
        "QMD": {"config_060000.mqsc": config_capture("QMD", {q: {} for q in others("QMD")},
                                                     {q: {h: {} for h in hosts} for q, hosts in queues.items()})},
    }
    puts: dict[str, list[str]] = {}
    for sender, label, t, queue, target, length, qmgr, path in IGQ_MESSAGES:
        puts.setdefault(sender, []).append(observed_put_row(t, sender, queue, igq_msg_id(sender, label), length,
                                                            qmgr, igq_expected_xmitq(path), target))
    for qm, files in captures.items():
        if qm in puts:
            files["puts.csv"] = "\n".join([PUTS_HEADER, *puts[qm]]) + "\n"
        write_day(root, IGQ_DAY, qm, files)
    return root
