"""The messages, as the MQ tools print them: transmission queue browses (amqsbcg, dmpmqmsg: the message descriptors,
transmission headers and payloads of held messages) and queue accounting records (amqsmon). Printing only, as
``render``."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from datetime import datetime

from clwl.generate.estate import QMgr
from clwl.generate.render import mq_date, mq_time

# --------------------------------------------------------------------------------------------------
# transmission queue browses


def put_date_time(t: datetime) -> tuple[str, str]:
    return t.strftime("%Y%m%d"), t.strftime("%H%M%S") + f"{t.microsecond // 10000:02d}"


def padded_json(head: str, length: int) -> bytes:
    """A JSON application message of ``length`` bytes: ``head`` opens its last string value, which dots pad
    (a head longer than that is cut)."""
    b = (head + "." * max(0, length - len(head) - 2) + '"}').encode()
    return b[:length] if len(b) > length else b


def payload(queue: str, app: str, length: int, msg_id: bytes, day: str, group_seq: int) -> bytes:
    n = int.from_bytes(msg_id[-4:], "big") & 0xFFFFFFF
    word = queue.split(".")[1].lower() if "." in queue else queue.lower()
    part = f',"part":{group_seq}' if group_seq else ""
    return padded_json(f'{{"type":"{word}","id":"{word[:1].upper()}-{day}-{n:07d}"{part},"source":"{app}","pad":"',
                       length)


def outer_md(m, app_user: str, app_name: str, appltype: int, token: bytes, sender: str, put_t: datetime) -> dict:
    pd, pt = put_date_time(put_t)
    grouped = bool(m.group_id and m.logical)
    flags = 8 | (16 if m.group_last else 0) if grouped else 0
    return dict(
        StrucId="MD  ", Version=2, Report=0, MsgType=8, Expiry=-1, Feedback=0, Encoding=546, CodedCharSetId=1208,
        Format="MQXMIT  ", Priority=0, Persistence=1 if m.persistent else 0, MsgId=m.msg_id,
        CorrelId=m.channel.ljust(24).encode()[:24], BackoutCount=0, ReplyToQ="", ReplyToQMgr=sender,
        UserIdentifier=app_user, AccountingToken=b"\0" * 32 if m.zero else token, ApplIdentityData="",
        PutApplType=appltype, PutApplName=app_name, PutDate=pd, PutTime=pt, ApplOriginData="",
        GroupId=m.group_id if grouped else b"\0" * 24,
        MsgSeqNumber=m.group_seq if grouped else 1, Offset=0, MsgFlags=flags, OriginalLength=-1,
    )


def xmit_data(m, app_user: str, app_name: str, appltype: int, token: bytes, sender: str, put_t: datetime,
              data: bytes) -> bytes:
    """MQXQH (with the original MQMD v1), an MQMDE for a managed group, then the application data."""
    pd, pt = put_date_time(put_t)
    grouped = bool(m.group_id and m.logical)
    md1 = (b"MD  " + struct.pack("<7i", 1, 0, 8, -1, 0, 546, 1208)
           + (b"MQHMDE  " if grouped else b"MQSTR   ") + struct.pack("<2i", 0, 1 if m.persistent else 0)
           + m.msg_id + b"\0" * 24 + struct.pack("<i", 0) + b" " * 48 + sender.ljust(48).encode()
           + app_user.ljust(12).encode()[:12] + token + b" " * 32 + struct.pack("<i", appltype)
           + app_name.ljust(28).encode()[:28] + pd.encode() + pt.encode() + b"    ")
    assert len(md1) == 324
    rqm = m.target or m.dest
    xqh = b"XQH " + struct.pack("<i", 1) + m.queue.ljust(48).encode() + rqm.ljust(48).encode() + md1
    mde = b""
    if grouped:
        mde = (b"MDE " + struct.pack("<4i", 2, 72, 546, 1208) + b"MQSTR   " + struct.pack("<i", 0) + m.group_id
               + struct.pack("<4i", m.group_seq, 0, 8 | (16 if m.group_last else 0), -1))
    return xqh + mde + data


MBCSMAX = 6


def render_amqsbcg(queue: str, msgs: list[tuple[dict, bytes]]) -> str:
    """Output of amqsbcg (MQ 9.4 sample) browsing ``queue``, as ``samples/`` reproduces it."""
    w = ["\nAMQSBCG0 - starts here\n", "**********************\n ", f"\n MQOPEN - '{queue}'", "\n "]
    page_first = True
    lines_printed = 0
    for j, (md, data) in enumerate(msgs, 1):
        if page_first:
            lines_printed, page_first = 29, False
        else:
            w.append("\n ")
            lines_printed = 22
        w.append("\n ")
        w.append(f"\n MQGET of message number {j}, CompCode:0 Reason:0")
        w.append(print_md(md))
        w.append("\n ")
        w.append("\n****   Message      ****\n ")
        w.append(f"\n length - {len(data)} of {len(data)} bytes\n ")
        pad = " " * ((MBCSMAX - 1) * 2)
        for ch in range(0, len(data), 16):
            chunk = data[ch:ch + 16]
            hexpart = "".join((" " if n % 2 == 0 else "") + f"{b:02X}" for n, b in enumerate(chunk))
            for n in range(len(chunk), 16):
                hexpart += (" " if n % 2 == 0 else "") + "  "
            text = "".join(chr(b) if 0x20 <= b < 0x7F else "." for b in chunk).ljust(16)
            w.append(f"\n{ch:08X}: {hexpart}{pad} '{text}'")
            lines_printed += 1
            if lines_printed >= 60:
                lines_printed = 0
                w.append("\n ")
    if not page_first:
        w.append("\n ")
    w.append("\n \n \n No more messages ")
    if msgs:
        lens = [len(d) for _, d in msgs]
        w.append(f"\n\n****   Summary      ****\n {len(msgs)} messages browsed.\n Smallest message {min(lens)} "
                 f"bytes.\n Largest message {max(lens)} bytes.\n Average message {sum(lens) // len(lens)} bytes.\n")
    w.append("\n MQCLOSE")
    w.append("\n MQDISC")
    w.append("\n")
    return "".join(w)


def print_md(md: dict) -> str:
    def s(v, n):
        return (v if isinstance(v, str) else v.decode()).ljust(n)[:n]

    return "".join([
        "\n****Message descriptor****\n",
        f"\n  StrucId  : '{md['StrucId']}'", f"  Version : {md['Version']}",
        f"\n  Report   : {md['Report']}", f"  MsgType : {md['MsgType']}",
        f"\n  Expiry   : {md['Expiry']}", f"  Feedback : {md['Feedback']}",
        f"\n  Encoding : {md['Encoding']}", f"  CodedCharSetId : {md['CodedCharSetId']}",
        f"\n  Format : '{s(md['Format'], 8)}'",
        f"\n  Priority : {md['Priority']}", f"  Persistence : {md['Persistence']}",
        f"\n  MsgId : X'{md['MsgId'].hex().upper()}'",
        f"\n  CorrelId : X'{md['CorrelId'].hex().upper()}'",
        f"\n  BackoutCount : {md['BackoutCount']}",
        f"\n  ReplyToQ       : '{s(md['ReplyToQ'], 48)}'",
        f"\n  ReplyToQMgr    : '{s(md['ReplyToQMgr'], 48)}'",
        "\n  ** Identity Context",
        f"\n  UserIdentifier : '{s(md['UserIdentifier'], 12)}'",
        f"\n  AccountingToken : \n   X'{md['AccountingToken'].hex().upper()}'",
        f"\n  ApplIdentityData : '{s(md['ApplIdentityData'], 32)}'",
        "\n  ** Origin Context",
        f"\n  PutApplType    : '{md['PutApplType']}'",
        f"\n  PutApplName    : '{s(md['PutApplName'], 28)}'",
        f"\n  PutDate  : '{md['PutDate']}'", f"    PutTime  : '{md['PutTime']}'",
        f"\n  ApplOriginData : '{s(md['ApplOriginData'], 4)}'\n",
        f"\n  GroupId : X'{md['GroupId'].hex().upper()}'",
        f"\n  MsgSeqNumber   : '{md['MsgSeqNumber']}'",
        f"\n  Offset         : '{md['Offset']}'",
        f"\n  MsgFlags       : '{md['MsgFlags']}'",
        f"\n  OriginalLength : '{md['OriginalLength']}'",
    ])


DMP_CODES = [("VER", "Version"), ("RPT", "Report"), ("MST", "MsgType"), ("EXP", "Expiry"), ("FDB", "Feedback"),
             ("ENC", "Encoding"), ("CCS", "CodedCharSetId"), ("FMT", "Format"), ("PRI", "Priority"),
             ("PER", "Persistence"), ("MSI", "MsgId"), ("COI", "CorrelId"), ("BOC", "BackoutCount"),
             ("RTQ", "ReplyToQ"), ("RTM", "ReplyToQMgr"), ("USR", "UserIdentifier"), ("ACC", "AccountingToken"),
             ("AIX", "ApplIdentityData"), ("PAT", "PutApplType"), ("PAN", "PutApplName"), ("PTD", "PutDate"),
             ("PTT", "PutTime"), ("AOX", "ApplOriginData"), ("GRP", "GroupId"), ("MSQ", "MsgSeqNumber"),
             ("OFF", "Offset"), ("MSF", "MsgFlags"), ("ORL", "OriginalLength")]


def render_dmpmqmsg(qm: str, queue: str, at: datetime, msgs: list[tuple[dict, bytes]]) -> str:
    out = [f"* Dumper Version:9.4.2.0 Created:{at.strftime('%a %b %d %H:%M:%S %Y')}",
           f"* Qmgr  = {qm}", f"* Queue = {queue}", ""]
    for md, data in msgs:
        out.append("N")
        for code, f in DMP_CODES:
            v = md[f]
            if isinstance(v, bytes):
                v = v.hex().upper()
            v = str(v).rstrip()
            out.append(f"A {code} {v}" if v else f"A {code}")
        for i in range(0, len(data), 32):
            out.append("X " + data[i:i + 32].hex().upper())
        out.append("")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------------------
# amqsmon


class Named(str):
    """An integer field amqsmon prints by its constant's name (QueueType: Local), without quotes."""


def render_amqsmon(records: list[list[tuple[int, str, object]]], monitoring_type: str = "QueueAccounting") -> str:
    out = []
    for rec in records:
        out.append(f"MonitoringType: {monitoring_type}")
        for indent, k, v in rec:
            pad = " " * indent
            if isinstance(v, list):
                out.append(f"{pad}{k}: [{', '.join(str(x) for x in v)}]")
            elif isinstance(v, bytes):
                out.append(f"{pad}{k}: x'{v.hex()}'")
            elif isinstance(v, Named):
                out.append(f"{pad}{k}: {v}")
            elif isinstance(v, str):
                out.append(f"{pad}{k}: '{v}'")
            else:
                out.append(f"{pad}{k}: {v}")
        out.append("")
    return "\n".join(out) + "\n"


@dataclass(frozen=True)
class AccountingConnection:
    """The connection a QueueAccounting record is of: its queue manager, connection id, and the application
    (name, process id, thread id, user). The same for every record of the connection."""

    qm: QMgr
    connection_id: bytes
    appl_name: str
    pid: int
    tid: int
    user: str


def accounting_head(conn: AccountingConnection, start: datetime, end: datetime, seq: int,
                    objects: int) -> list[tuple[int, str, object]]:
    """The fields of a QueueAccounting record before its QueueAccounting groups (``queue_group``)."""
    qm = conn.qm
    return [
        (0, "QueueManager", qm.name), (0, "IntervalStartDate", mq_date(start)),
        (0, "IntervalStartTime", mq_time(start)), (0, "IntervalEndDate", mq_date(end)),
        (0, "IntervalEndTime", mq_time(end)), (0, "CommandLevel", qm.cmdlevel),
        (0, "ConnectionId", conn.connection_id), (0, "SeqNumber", seq), (0, "ApplicationName", conn.appl_name),
        (0, "ApplicationPid", conn.pid), (0, "ApplicationTid", conn.tid), (0, "UserId", conn.user),
        (0, "ObjectCount", objects),
    ]


def statistics_record(qm: QMgr, start: datetime, end: datetime,
                      queues: list[tuple[str, int, int]]) -> list[tuple[int, str, object]]:
    """A QueueStatistics record of one interval: a group per queue with its QMinDepth and QMaxDepth (the only
    counters printed; amqsmon prints a field the message does not carry not at all)."""
    rec: list[tuple[int, str, object]] = [
        (0, "QueueManager", qm.name), (0, "IntervalStartDate", mq_date(start)),
        (0, "IntervalStartTime", mq_time(start)), (0, "IntervalEndDate", mq_date(end)),
        (0, "IntervalEndTime", mq_time(end)), (0, "CommandLevel", qm.cmdlevel), (0, "ObjectCount", len(queues))]
    for gi, (queue, lo, hi) in enumerate(queues):
        rec += [(0, "QueueStatistics", gi), (2, "QueueName", queue), (2, "QueueType", Named("Local")),
                (2, "QueueDefinitionType", Named("Predefined")), (2, "QMinDepth", lo), (2, "QMaxDepth", hi)]
    return rec


def queue_group(gi: int, queue: str, created: datetime, first_open: bool, opened: datetime,
                c: list[int]) -> list[tuple[int, str, object]]:
    """One QueueAccounting group; c = [n np, n p, bytes np, bytes p, min np, max np, min p, max p]."""
    return [(0, "QueueAccounting", gi)] + [(2, k, v) for k, v in [
        ("QueueName", queue), ("CreateDate", mq_date(created)), ("CreateTime", mq_time(created)),
        ("QueueType", Named("Local")), ("QueueDefinitionType", Named("Predefined")),
        ("OpenCount", 1 if first_open else 0), ("OpenDate", mq_date(opened)), ("OpenTime", mq_time(opened)),
        ("PutCount", [c[0], c[1]]), ("PutFailCount", 0), ("Put1Count", [0, 0]),
        ("Put1FailCount", 0), ("PutBytes", [c[2], c[3]]),
        ("PutMinBytes", [c[4], c[6]]), ("PutMaxBytes", [c[5], c[7]]),
        ("GeneratedMsgCount", 0), ("GetCount", [0, 0]), ("GetFailCount", 0), ("GetBytes", [0, 0]),
        ("GetMinBytes", [0, 0]), ("GetMaxBytes", [0, 0]), ("BrowseCount", [0, 0]),
        ("BrowseFailCount", 0), ("BrowseBytes", [0, 0]), ("BrowseMinBytes", [0, 0]),
        ("BrowseMaxBytes", [0, 0]), ("TimeOnQMin", [0, 0]), ("TimeOnQAvg", [0, 0]),
        ("TimeOnQMax", [0, 0]), ("CbCount", 0), ("CbFailCount", 0)]]
