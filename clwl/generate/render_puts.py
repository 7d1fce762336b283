"""The put records, as written: puts.csv (with or without the optional application column) and the application
activity trace of the puts as IBM's sample amqsact prints it (``-v``; docs/activity-trace.md), or as amqsevt JSON.
Printing only, as ``render``: the simulation decides what is put where."""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TextIO

from clwl.generate.estate import QMgr
from clwl.generate.render import mq_date
from clwl.generate.render_messages import put_date_time
from clwl.generate.trace_json import trace_object

# --------------------------------------------------------------------------------------------------
# put records

PUTS_CSV_COLUMNS = ("put_time", "sending_qmgr", "queue", "target_qmgr", "bind", "open_handle", "group_id",
                    "logical_order", "from_cluster_channel", "pcf", "length", "persistent", "accounting_token",
                    "msg_id", "observed_qmgr", "observed_channel", "observed_xmitq")
PUTS_CSV_HEADER = ",".join(PUTS_CSV_COLUMNS) + "\n"


def render_puts_csv(rows: list[list[str]]) -> str:
    """puts.csv: the header, then one line a row. No field holds a comma, quote or line break (names, hex,
    numbers, true/false), so nothing is quoted: the same bytes as a csv writer's."""
    return PUTS_CSV_HEADER + "".join(",".join(r) + "\n" for r in rows)


#: puts.csv with the optional application column (clwl.parse.put_record.PUT_COLUMNS), last.
PUTS_CSV_APPLICATION_HEADER = PUTS_CSV_HEADER[:-1] + ",application\n"
_HANDLE_AT = PUTS_CSV_COLUMNS.index("open_handle")


class ApplicationColumnWriter:
    """A puts.csv written with the optional ``application`` column: what the simulation writes (the header, then
    whole rows), each row given the application its open handle names (``application:pid:handle``), so that
    an estate has put files with the column and without it. Closing is the wrapped file's owner's."""

    def __init__(self, out: TextIO):
        self.out = out
        self.names: dict[str, str] = {}  # open handle -> application

    def write(self, text: str) -> None:
        if text == PUTS_CSV_HEADER:
            self.out.write(PUTS_CSV_APPLICATION_HEADER)
            return
        names = self.names
        rows = []
        for line in text.splitlines():  # whole rows; no field holds a line break
            handle = line.split(",", _HANDLE_AT + 1)[_HANDLE_AT]
            name = names.get(handle)
            if name is None:
                name = names[handle] = handle.split(":", 1)[0]
            rows.append(f"{line},{name}\n")
        self.out.write("".join(rows))


# --------------------------------------------------------------------------------------------------
# application activity trace, as IBM's sample amqsact prints it (-v): docs/activity-trace.md

TRACE_SEPARATOR = "=" * 77
MQXF = {"MQCONNX": "MQXF_CONNX", "MQOPEN": "MQXF_OPEN", "MQPUT": "MQXF_PUT", "MQCLOSE": "MQXF_CLOSE",
        "MQDISC": "MQXF_DISC"}
APPL_TYPES = {6: "MQAT_UNIX", 28: "MQAT_JAVA"}
# MQOO_OUTPUT | MQOO_FAIL_IF_QUIESCING, and the bind (cmqc.h); MQPMO_NO_SYNCPOINT | NEW_MSG_ID | FAIL_IF_QUIESCING
OPEN_OPTIONS = {"notfixed": 0x10 | 0x2000 | 0x8000, "open": 0x10 | 0x2000 | 0x4000,
                "group": 0x10 | 0x2000 | 0x400000}
PUT_OPTIONS = 0x4 | 0x40 | 0x2000
MQPMO_LOGICAL_ORDER = 0x8000
MQMF_MSG_IN_GROUP = 0x08
MQMF_LAST_MSG_IN_GROUP = 0x10


class Const(str):
    """A field amqsact prints by its constant's name or as a number: no quotes (MQCC_OK, MQOT_Q)."""


_PRINTABLE = bytes(b if 0x20 <= b < 0x7F else 0x2E for b in range(256))  # anything else prints as '.'


def hex_dump(data: bytes, indent: str = "") -> list[str]:
    """amqsact's dump of a byte string: offset, 16 bytes a line in groups of two, the printable column."""
    return [f"{indent}{at:08X}:  {data[at:at + 16].hex(' ', -2).upper():<39}  "
            f"'{data[at:at + 16].translate(_PRINTABLE).decode('ascii'):<16}'" for at in range(0, len(data), 16)]


def trace_fields(fields: Iterable[tuple[str, object]], indent: str) -> list[str]:
    """``Label: value`` lines: str quoted with its trailing blanks cut, int and Const bare, bytes as a dump."""
    out = []
    for label, v in fields:
        if isinstance(v, bytes):
            out.append(f"{indent}{label}:")
            out += hex_dump(v, indent)
        elif isinstance(v, Const) or not isinstance(v, str):
            out.append(f"{indent}{label}: {v}")
        else:
            out.append(f"{indent}{label}: '{v.rstrip()}'")
    return out


@dataclass(frozen=True)
class TracedConnection:
    """Whose trace messages a header names: the queue manager, the connection's correlator, the application (its
    name, MQAT type, process id and user) and the trace level; a channel agent also its channel (name, ConnName,
    type). The same for every trace message of the connection."""

    qm: QMgr
    correl_id: bytes
    appl: str
    appltype: str
    pid: int
    user: str
    level: int
    caller: str = "MQXACT_EXTERNAL"
    environment: str = "MQXE_OTHER"
    channel: tuple[str, str, str] | None = None


def trace_header_fields(conn: TracedConnection, start: datetime, end: datetime, seq: int) -> list[tuple[str, object]]:
    """The header of one trace message of ``conn`` (a local bindings application, or a channel agent) over
    [start, end], its SeqNumber ``seq``."""
    qm = conn.qm
    fields = [
        ("Correl_id", conn.correl_id), ("QueueManager", qm.name), ("Host Name", qm.host),
        ("IntervalStartDate", mq_date(start)), ("IntervalStartTime", start.strftime("%H:%M:%S")),
        ("IntervalEndDate", mq_date(end)), ("IntervalEndTime", end.strftime("%H:%M:%S")),
        ("CommandLevel", qm.cmdlevel), ("SeqNumber", seq), ("ApplicationName", conn.appl),
        ("Application Type", Const(conn.appltype)), ("ApplicationPid", conn.pid),
        ("UserId", conn.user), ("API Caller Type", Const(conn.caller)), ("API Environment", Const(conn.environment)),
        ("Application Function", ""), ("Appl Function Type", Const("MQFUN_TYPE_UNKNOWN")),
        ("Trace Detail Level", conn.level), ("Trace Data Length", 0), ("Pointer size", 8),
        ("Platform", Const("MQPL_UNIX")),
    ]
    if conn.channel is not None:
        channel = conn.channel
        fields += [("Channel Name", channel[0]), ("ConnName", channel[1]), ("Channel Type", Const(channel[2]))]
    return fields


def trace_message_text(header: list[tuple[str, object]], operations: list[list[tuple[str, object]]]) -> str:
    """One trace message as ``amqsact -v`` prints it."""
    lines = ["MonitoringType: MQI Activity Trace"] + trace_fields(header, "")
    for n, fields in enumerate(operations):
        lines += trace_operation(n, fields)
    lines += [TRACE_SEPARATOR, ""]
    return "\n".join(lines) + "\n"


def trace_operation(n: int, fields: Iterable[tuple[str, object]]) -> list[str]:
    return [f"MQI Operation: {n}"] + trace_fields(fields, "  ")


def _call(op: str, tid: int, t: datetime) -> list[tuple[str, object]]:
    iso = t.isoformat()  # one call for both (the generator prints millions)
    return [("Operation Id", Const(MQXF[op])), ("ApplicationTid", tid), ("OperationDate", iso[:10]),
            ("OperationTime", iso[11:19])]


_OK = [("Completion Code", Const("MQCC_OK")), ("Reason Code", 0)]


@dataclass(frozen=True)
class TracedCall:
    """Who makes an MQI call, when and on what: the application's thread, the call's time (its high
    resolution time in microseconds too), the queue, where MQ resolved it (the destination queue manager, None
    when not yet resolved, and its transmission queue) and the sending queue manager the application is
    connected to. What the MQOPEN and MQPUT renderers share."""

    tid: int
    t: datetime
    high_res: int
    queue: str
    dest: str | None
    xmitq: str | None
    sender: str


def _resolved(call: TracedCall) -> list[tuple[str, object]]:
    """Resolved names at MEDIUM: the local fields only for another queue manager (the transmission queue)."""
    if call.dest is None:
        return []
    out: list[tuple[str, object]] = [("Resolved_Q_Name", call.queue), ("Resolved_Q_mgr", call.dest)]
    if call.dest != call.sender and call.xmitq:
        out += [("Resolved_local_Q_name", call.xmitq), ("Resolved_local_Q_mgr", call.sender)]
    return out


def trace_connx(tid: int, t: datetime) -> list[tuple[str, object]]:
    return _call("MQCONNX", tid, t) + _OK + [("Connect Options", 0)]


def trace_open(call: TracedCall, target: str, hobj: int, options: int) -> list[tuple[str, object]]:
    """``call.dest``: the queue manager the handle is bound to (bind on open), else None (resolved per put);
    ``target``: the queue manager the application named."""
    return (_call("MQOPEN", call.tid, call.t) + [("Object_type", Const("MQOT_Q")), ("Object_name", call.queue),
                                                 ("Object_Q_mgr_name", target), ("Hobj", hobj)] + _OK
            + [("Open_options", options), ("Known_dest_count", 0), ("Unknown_dest_count", 0),
               ("Invalid_dest_count", 0), ("High Res Time", call.high_res)]
            + _resolved(call)
            + [("Resolved_type", Const("MQOT_Q")), ("QMgr Operation Duration", 120)])


def trace_close(tid: int, t: datetime, hobj: int) -> list[tuple[str, object]]:
    return _call("MQCLOSE", tid, t) + [("Hobj", hobj)] + _OK + [("Close Options", 0)]


def trace_disc(tid: int, t: datetime) -> list[tuple[str, object]]:
    return _call("MQDISC", tid, t) + _OK


def mqmd_v2(*, persistent: bool, msg_id: bytes, reply_qmgr: str, user: str, token: bytes, appltype: int,
            appl: str, put_t: datetime, group_id: bytes, group_seq: int, msg_flags: int) -> bytes:
    """An MQMD version 2 (364 bytes, little-endian) as the put left it."""
    pd, pt = put_date_time(put_t)
    md = (b"MD  " + struct.pack("<7i", 2, 0, 8, -1, 0, 546, 1208) + b"MQSTR   "
          + struct.pack("<2i", 0, 1 if persistent else 0) + msg_id + b"\0" * 24 + struct.pack("<i", 0)
          + b" " * 48 + reply_qmgr.ljust(48).encode() + user.ljust(12).encode()[:12] + token + b" " * 32
          + struct.pack("<i", appltype) + appl.ljust(28).encode()[:28] + pd.encode() + pt.encode() + b"    "
          + group_id + struct.pack("<4i", group_seq, 0, msg_flags, -1))
    assert len(md) == 364
    return md


def mqpmo_v1(options: int, known: int, unknown: int, resolved_q: str, resolved_qmgr: str) -> bytes:
    """An MQPMO version 1 (128 bytes) after the put: ResolvedQName and ResolvedQMgrName are output fields."""
    return (b"PMO " + struct.pack("<7i", 1, options, -1, 0, known, unknown, 0) + resolved_q.ljust(48).encode()
            + resolved_qmgr.ljust(48).encode())


def trace_put(call: TracedCall, hobj: int, options: int, length: int, persistent: bool, msg_id: bytes,
              high: dict | None = None) -> list[tuple[str, object]]:
    """An MQPUT at MEDIUM; ``high`` (the ``mqmd_v2`` arguments but those given here) adds HIGH's dumps."""
    t, queue, dest, sender = call.t, call.queue, call.dest, call.sender
    remote = dest != sender
    pd, pt = put_date_time(t)
    f = (_call("MQPUT", call.tid, t) + [("Hobj", hobj), ("Put Options", options)] + _OK
         + [("Msg length", length), ("Known_dest_count", 0 if remote else 1), ("Unknown_dest_count", 1 if remote else 0),
            ("Invalid_dest_count", 0), ("High Res Time", call.high_res), ("Object_name", queue)]
         + _resolved(call)
         + [("Report Options", 0), ("Msg_type", Const("MQMT_DATAGRAM")), ("Expiry", -1), ("Format_name", "MQSTR"),
            ("Priority", 0), ("Persistence", 1 if persistent else 0), ("Msg_id", msg_id), ("Correl_id", b"\0" * 24),
            ("Reply_to_Q ", ""), ("Reply_to_Q_Mgr", sender), ("Coded_char_set_id", 1208), ("Encoding", 546),
            ("Put_date", pd), ("Put_time", pt), ("Resolved_type", Const("MQOT_Q")), ("QMgr Operation Duration", 41)])
    if high is not None:
        f.append(("MQMD Structure", mqmd_v2(persistent=persistent, msg_id=msg_id, reply_qmgr=sender, put_t=t, **high)))
        f.append(("MQPMO Structure", mqpmo_v1(options, 0 if remote else 1, 1 if remote else 0, queue, dest)))
    return f


@dataclass(frozen=True)
class TraceApp:
    """An application as its trace shows it; level: its mqat.ini TRACE= (2 MEDIUM, 3 HIGH)."""

    name: str
    user: str
    appltype: int
    token: bytes
    level: int


class _TraceConnection:
    __slots__ = ("app", "pid", "correl_id", "seq", "ops", "first_us", "handles", "puts")

    def __init__(self, app: TraceApp, pid: int, correl_id: bytes):
        self.app, self.pid, self.correl_id = app, pid, correl_id
        self.seq = 0
        self.ops: list[tuple[int, list[tuple[str, object]]]] = []  # (microseconds, fields) not yet printed
        self.first_us = 0
        self.handles: dict[tuple[str, str, str, str], int] = {}  # (handle, queue, target, bind) -> Hobj
        self.puts = 0


_EPOCH_DAY = datetime(1970, 1, 1)


class AmqsactPutsWriter:
    """One sending queue manager's puts of one day printed as ``amqsact -v`` output.

    ``write`` takes the puts.csv text the simulation writes (its header, then whole rows in put order), so
    both formats print the same rows. Per application connection (application name and process id of the
    row's open_handle): an MQCONNX, an MQOPEN before the first put of each handle (open options from the
    bind, the named queue manager), the MQPUTs with the destination the simulation chose as Resolved_Q_mgr
    and its transmission queue as Resolved_local_Q_name, at the end of the day an MQCLOSE per handle and
    the MQDISC. Calls alternate between two threads. A connection's calls are split into trace messages
    (SeqNumber 0, 1, ...) every :attr:`ACTIVITY_COUNT` calls or when its oldest unprinted call is
    :attr:`ACTIVITY_INTERVAL` seconds old, as mqat.ini ActivityCount / ActivityInterval do; messages of
    different connections interleave in the file. Times are UTC (High Res Time exact to the row's
    millisecond; every call a microsecond after the one before).

    ``inject``: indexes of data rows whose traced destination is ``wrong_destination(queue, dest)``
    (queue manager, transmission queue or None) instead of the simulation's; ``injected`` lists them.
    The simulation fills ``handle_ends`` (2 x row: handles closed before that row's put, 2 x row + 1:
    after it), so a bound handle is closed when the application is done with it, and ``group_last`` (rows
    that are the last message of their group: MQMF_LAST_MSG_IN_GROUP). A closed Hobj is reused, as MQ does.
    """

    #: mqat.ini's ActivityCount and ActivityInterval (seconds) as MQ ships them: no option of the generator sets
    #: other ones.
    ACTIVITY_COUNT, ACTIVITY_INTERVAL = 100, 60

    def __init__(self, out, qm: QMgr, day, apps: dict[str, TraceApp], *, inject: Iterable[int] = (),
                 wrong_destination=None, json_lines: bool = False):
        self.out, self.qm, self.day = out, qm, day
        self.json = json_lines  # amqsevt -o json_compact instead of amqsact -v
        self.apps = apps
        self.inject = set(inject)
        self.wrong_destination = wrong_destination
        self.activity_count = self.ACTIVITY_COUNT
        self.activity_interval_us = self.ACTIVITY_INTERVAL * 1_000_000
        self.day_us = (datetime(day.year, day.month, day.day) - _EPOCH_DAY) // timedelta(microseconds=1)
        self.day_prefix = day.isoformat()
        self.conns: dict[tuple[str, int], _TraceConnection] = {}
        self.group_seq: dict[str, int] = {}
        self.last_us = 0
        self.rows = 0
        self.records = 0
        self.injected: list[dict] = []
        self.header_seen = False
        self.handle_ends: dict[int, list[str]] = {}
        self.group_last: set[int] = set()
        # msg_id -> (queue manager, transmission queue) MQ chose at the put, for a message the simulation
        # re-allocated later: the puts.csv row shows where it arrived, the traced MQPUT where it was sent.
        self.at_put: dict[str, tuple[str, str | None]] = {}
        # --trace-gets (clwl.generate.consumers.DepthLedger.app_put): told each put as traced
        self.on_put = None

    def write(self, text: str) -> None:
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        for line in lines:
            if not self.header_seen:
                self.header_seen = True
                if line + "\n" == PUTS_CSV_HEADER:
                    continue
            self.put(line.split(","))

    def _clock(self, us: int) -> tuple[int, datetime]:
        us = max(us, self.last_us + 1)
        self.last_us = us
        return us, _EPOCH_DAY + timedelta(microseconds=us)

    def _op(self, conn: _TraceConnection, us: int, fields: list[tuple[str, object]]) -> None:
        if not conn.ops:
            conn.first_us = us
        conn.ops.append((us, fields))
        if len(conn.ops) >= self.activity_count:
            self._flush(conn)

    def put(self, f: list[str]) -> None:
        (put_time, sender, queue, target, bind, handle, group_id, logical, _chl, _pcf, length, persistent, token,
         msg_id, dest, _channel, xmitq) = f
        row = self.rows
        self.rows += 1
        if self.handle_ends:
            self._close_handles(self.handle_ends.pop(2 * row, ()))
        ms = (int(put_time[11:13]) * 3600 + int(put_time[14:16]) * 60 + int(put_time[17:19])) * 1000 \
            + int(put_time[20:23])
        us, t = self._clock(self.day_us + ms * 1000)
        for c in self.conns.values():  # ActivityInterval: a connection's calls wait no longer than this
            if c.ops and us - c.first_us >= self.activity_interval_us:
                self._flush(c)
        name, pid, _ = handle.rsplit(":", 2)
        key = (name, int(pid))
        conn = self.conns.get(key)
        if conn is None:
            h = hashlib.sha256(f"{sender}/{self.day_prefix}/{name}/{pid}".encode()).digest()[:8]
            conn = self.conns[key] = _TraceConnection(self.apps[name], int(pid),
                                                      b"AMQC" + sender.ljust(12).encode()[:12] + h)
            self._op(conn, us, trace_connx(1, t))
            us, t = self._clock(us)
        tid = 1 + conn.puts % 2  # two threads of the application share its handles
        conn.puts += 1
        xq = xmitq or None
        if msg_id in self.at_put:  # re-allocated after the put: the trace records the put-time choice
            dest, xq = self.at_put.pop(msg_id)
        hkey = (handle, queue, target, bind)
        hobj = conn.handles.get(hkey)
        if hobj is None:
            used = set(conn.handles.values())
            hobj = next(h for h in range(1, len(used) + 2) if h not in used)  # the lowest free, as MQ reuses them
            conn.handles[hkey] = hobj
            bound = bind == "open"
            opened = TracedCall(tid, t, us, queue, dest if bound else None, xq if bound else None, sender)
            self._op(conn, us, trace_open(opened, target, hobj, OPEN_OPTIONS[bind]))
            us, t = self._clock(us)
        traced, traced_xq = dest, xq
        if row in self.inject and self.wrong_destination is not None:
            traced, traced_xq = self.wrong_destination(queue, dest)
            self.injected.append({"msg_id": msg_id, "queue": queue, "put_time": put_time,
                                  "simulated_qmgr": dest, "simulated_xmitq": xq,
                                  "traced_qmgr": traced, "traced_xmitq": traced_xq})
        options = PUT_OPTIONS | (MQPMO_LOGICAL_ORDER if logical == "true" else 0)
        high = None
        if conn.app.level >= 3:
            gid = bytes.fromhex(group_id) if group_id else b"\0" * 24
            seq = 1
            if group_id:
                seq = self.group_seq[group_id] = self.group_seq.get(group_id, 0) + 1
            high = dict(user=conn.app.user, token=bytes.fromhex(token), appltype=conn.app.appltype,
                        appl=conn.app.name, group_id=gid, group_seq=seq,
                        msg_flags=(MQMF_MSG_IN_GROUP | (MQMF_LAST_MSG_IN_GROUP if row in self.group_last else 0)
                                   if group_id else 0))
        self.group_last.discard(row)
        self._op(conn, us, trace_put(TracedCall(tid, t, us, queue, traced, traced_xq, sender), hobj, options,
                                     int(length), persistent == "true", bytes.fromhex(msg_id), high))
        if self.on_put is not None:
            self.on_put(sender, queue, traced, traced_xq, us, msg_id, int(length), 1 if persistent == "true" else 0)
        if self.handle_ends:
            self._close_handles(self.handle_ends.pop(2 * row + 1, ()))

    def _close_handles(self, handles: Iterable[str]) -> None:
        for handle in handles:
            name, pid, _ = handle.rsplit(":", 2)
            conn = self.conns.get((name, int(pid)))
            if conn is None:
                continue
            for hkey in [k for k in conn.handles if k[0] == handle]:
                us, t = self._clock(self.last_us)
                self._op(conn, us, trace_close(1 + conn.puts % 2, t, conn.handles.pop(hkey)))

    def _flush(self, conn: _TraceConnection) -> None:
        if not conn.ops:
            return
        start = _EPOCH_DAY + timedelta(microseconds=conn.ops[0][0])
        end = _EPOCH_DAY + timedelta(microseconds=conn.ops[-1][0])
        app = conn.app
        header = trace_header_fields(TracedConnection(self.qm, conn.correl_id, app.name,
                                                      APPL_TYPES.get(app.appltype, str(app.appltype)), conn.pid,
                                                      app.user, app.level), start, end, conn.seq)
        operations = [fields for _, fields in conn.ops]
        if self.json:
            self.out.write(trace_object(header, operations, end))
        else:
            self.out.write(trace_message_text(header, operations))
        self.records += 1
        conn.seq += 1
        conn.ops = []

    def close(self) -> None:
        """The end of the day: every handle closed, every connection ended, the rest printed."""
        for conn in self.conns.values():
            for hobj in sorted(conn.handles.values()):
                us, t = self._clock(self.last_us)
                self._op(conn, us, trace_close(1, t, hobj))
            us, t = self._clock(self.last_us)
            self._op(conn, us, trace_disc(1, t))
            self._flush(conn)
        if not self.json:  # amqsact's last line; amqsevt prints none
            self.out.write(f"{self.records} Records Processed.\n")
