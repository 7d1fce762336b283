"""The channel agents' activity trace of a synthetic estate (``clwl generate --channel-trace``; issue 29).

Every message the simulation routes over a cluster-sender channel leaves its transmission queue when the sending
queue manager's agent gets it (an MQGET that carries the transmission queue header, ``Transmit Header Msg_id``,
``RemoteQMgr``, ``RemoteQName``) and arrives when the receiving queue manager's cluster-receiver agent puts it to
the target queue (an MQPUT with the message's own MsgId). Both are traced as amqsact prints a channel agent at
MEDIUM (``mqat.ini`` ``ApplClass=MCA``; docs/activity-trace.md "Channel agents"), or as amqsevt prints the same
in JSON. One file per queue manager and day: ``<QM>.<date>.channels.amqsact`` or
``<QM>.<date>.channels.amqsevt.jsonl``, the queue manager's sending agents and receiving agents together. The
receiving side is traced only with ``ends`` "both" (the receiving agents' puts: the arrivals); "sending" (the
default) gives every departure, which is what the replay's timing is compared with, at half the volume.

When a message leaves (the simulation's times, in milliseconds of the day):

* over a running channel: ``DEPART_AFTER_MS`` after its put;
* held behind a RETRYING channel (an outage) or waiting behind a partition: when the simulation delivers it, one
  second before the capture that shows the channel running again (each message after the one before);
* put while its channel is in an injected stop (:class:`ChannelStop`): at the restart. The stop lies between two
  status captures of the sending queue manager, which both show the channel RUNNING: the routing, which the
  captures decide, is the simulation's as without the stop; only the departures are late.

An agent works in batches under syncpoint: its gets (puts) are committed by an MQCMIT after ``BATCH_SIZE``
messages or when the transmission queue is empty (the next message is more than ``BATCH_GAP_US`` away; the
sending agent's last get then fails with 2033). Calls of one agent are ``CALL_SPACING_US`` apart at least. A
receiving agent's put is ``TRANSIT_US`` after the get. Trace messages as mqat.ini ActivityCount=100 makes them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Callable

import clwl.generate.render_messages as RM
import clwl.generate.render_puts as RP
from clwl.generate.estate import Estate
from clwl.generate.trace_json import trace_object

TRACE_FORMATS = ("amqsact", "json")
TRACE_ENDS = ("sending", "both")  # the sending agents' gets only, or the receiving agents' puts too
DEPART_AFTER_MS = 2
TRANSIT_US = 3_000
CALL_SPACING_US = 200
BATCH_SIZE = 50
BATCH_GAP_US = 20_000
ACTIVITY_COUNT = 100
GET_OPTIONS = 0x2000 | 0x2  # MQGMO_FAIL_IF_QUIESCING | MQGMO_SYNCPOINT
AGENT_PUT_OPTIONS = 0x2000 | 0x800 | 0x2  # MQPMO_FAIL_IF_QUIESCING | MQPMO_NO_CONTEXT... as the fixtures: 10242
XMITQ_OPEN_OPTIONS = 8322  # MQOO_INPUT_EXCLUSIVE | MQOO_INQUIRE | MQOO_FAIL_IF_QUIESCING ... as the fixtures
TARGET_OPEN_OPTIONS = 10256
XMITQ_DESCRIPTOR_KIND = 0x43  # the id the queue manager gives the transmission queue message: another kind byte
_EPOCH = datetime(1970, 1, 1)


def file_name(qm: str, day: date, fmt: str) -> str:
    return f"{qm}.{day.isoformat()}.channels." + ("amqsevt.jsonl" if fmt == "json" else "amqsact")


@dataclass
class ChannelStop:
    """An injected stop of one cluster-sender channel between two status captures of its sending queue manager:
    messages put to it from ``stop_ms`` until ``restart_ms`` leave at ``restart_ms``."""

    day: date
    sender: str
    dest: str
    channel: str
    xmitq: str
    stop_ms: int
    restart_ms: int
    capture_before: int  # minutes of the day: the sending queue manager's captures around the stop
    capture_after: int
    waiting: list[str] = field(default_factory=list)  # msg ids put in the window, in put order

    def to_json(self, file: str) -> dict:
        base = datetime(self.day.year, self.day.month, self.day.day)

        def at(ms: int) -> str:
            return (base + timedelta(milliseconds=ms)).isoformat(timespec="milliseconds") + "Z"

        return {"day": self.day.isoformat(), "sender": self.sender, "dest": self.dest, "channel": self.channel,
                "xmitq": self.xmitq, "stopped_at": at(self.stop_ms), "restarted_at": at(self.restart_ms),
                "capture_before": at(self.capture_before * 60000), "capture_after": at(self.capture_after * 60000),
                "file": file, "delayed": len(self.waiting), "msg_ids": list(self.waiting)}


@dataclass(frozen=True)
class AgentMessage:
    """The message a channel agent moves, as both ends' trace show it: its MsgId, when it was put, by which
    sending queue manager, to which queue, its length and persistence (0 or 1)."""

    msg_id: bytes
    put_t: datetime
    sender: str
    queue: str
    length: int
    pers: int


class _Agent:
    """One channel agent's connection: its calls not yet printed, its clock and its open batch."""

    __slots__ = ("header", "ops", "seq", "last_us", "batch", "handles", "sending", "tid")

    def __init__(self, header: Callable[[int, datetime, datetime], list], sending: bool, tid: int):
        self.header = header
        self.ops: list[tuple[int, list]] = []
        self.seq = 0
        self.last_us = 0
        self.batch = 0
        self.handles: dict[str, int] = {}  # queue opened -> Hobj (a sending agent: its transmission queue)
        self.sending = sending
        self.tid = tid


def _call(op: str, tid: int, t: datetime) -> list[tuple[str, object]]:
    iso = t.isoformat()
    return [("Operation Id", RP.Const(op)), ("ApplicationTid", tid), ("OperationDate", iso[:10]),
            ("OperationTime", iso[11:19])]


_OK = [("Completion Code", RP.Const("MQCC_OK")), ("Reason Code", 0)]


class QueueManagerTrace:
    """One queue manager's channel-agent trace file of one day."""

    def __init__(self, out, qm, day: date, fmt: str):
        self.out, self.qm, self.day, self.json = out, qm, day, fmt == "json"
        self.agents: dict[tuple[str, str, str], _Agent] = {}
        self.records = 0
        self.pid = 3000 + int(hashlib.sha256(f"{qm.name}/{day}".encode()).hexdigest()[:4], 16) % 20000

    def agent(self, sending: bool, channel: str, peer) -> _Agent:
        key = ("sdr" if sending else "rcvr", channel, peer.name)
        a = self.agents.get(key)
        if a is None:
            h = hashlib.sha256(f"{self.qm.name}/{self.day}/{key}".encode()).digest()[:8]
            correl = b"AMQC" + self.qm.name.ljust(12).encode()[:12] + h
            kind = ("MQCHT_CLUSSDR", peer.conname) if sending else ("MQCHT_CLUSRCVR", peer.ip)
            qm = self.qm

            traced = RP.TracedConnection(qm, correl, "amqrmppa", "MQAT_QMGR", self.pid, "mqm", 2,
                                         caller="MQXACT_INTERNAL", environment="MQXE_MCA",
                                         channel=(channel, kind[1], kind[0]))

            def header(seq: int, start: datetime, end: datetime) -> list:
                return RP.trace_header_fields(traced, start, end, seq)
            a = self.agents[key] = _Agent(header, sending, 10 + len(self.agents))
        return a

    def clock(self, a: _Agent, us: int) -> tuple[int, datetime]:
        us = max(us, a.last_us + CALL_SPACING_US)
        a.last_us = us
        return us, _EPOCH + timedelta(microseconds=us)

    def op(self, a: _Agent, fields: list) -> None:
        a.ops.append((a.last_us, fields))
        if len(a.ops) >= ACTIVITY_COUNT:
            self.flush(a)

    def flush(self, a: _Agent) -> None:
        if not a.ops:
            return
        start = _EPOCH + timedelta(microseconds=a.ops[0][0])
        end = _EPOCH + timedelta(microseconds=a.ops[-1][0])
        header = a.header(a.seq, start, end)
        operations = [f for _, f in a.ops]
        self.out.write(trace_object(header, operations, end) if self.json
                       else RP.trace_message_text(header, operations))
        self.records += 1
        a.seq += 1
        a.ops = []

    def open(self, a: _Agent, queue: str, qmgr: str, options: int, us: int) -> int:
        """The agent's MQOPEN of a queue it has not opened yet, just before its call at ``us``; its Hobj."""
        hobj = a.handles.get(queue)
        if hobj is not None:
            return hobj
        hobj = a.handles[queue] = len(a.handles) + 1
        _, t = self.clock(a, us - CALL_SPACING_US)
        self.op(a, _call("MQXF_OPEN", a.tid, t) + [
            ("Object_type", RP.Const("MQOT_Q")), ("Object_name", queue), ("Object_Q_mgr_name", qmgr), ("Hobj", hobj)]
            + _OK + [("Open_options", options), ("Known_dest_count", 0), ("Unknown_dest_count", 0),
                     ("Invalid_dest_count", 0), ("High Res Time", a.last_us), ("Resolved_Q_Name", queue),
                     ("Resolved_Q_mgr", self.qm.name), ("Resolved_type", RP.Const("MQOT_Q")),
                     ("QMgr Operation Duration", 80)])
        return hobj

    def end_batch(self, a: _Agent, empty: bool) -> None:
        """The agent commits its batch; a sending agent that found its transmission queue empty first got 2033."""
        if not a.batch:
            return
        if empty and a.sending:
            _, t = self.clock(a, a.last_us)
            self.op(a, _call("MQXF_GET", a.tid, t) + [
                ("Hobj", 1), ("Get Options", GET_OPTIONS), ("Completion Code", RP.Const("MQCC_FAILED")),
                ("Reason Code", 2033), ("Msg length", 0), ("High Res Time", a.last_us), ("Buffer Length", 4194304),
                ("QMgr Operation Duration", 12)])
        _, t = self.clock(a, a.last_us)
        self.op(a, _call("MQXF_CMIT", a.tid, t) + _OK + [("High Res Time", a.last_us),
                                                                       ("QMgr Operation Duration", 900)])
        a.batch = 0

    def begin(self, a: _Agent, us: int) -> None:
        """Before a message: the batch ends if it is full or the queue was empty since the last message."""
        if a.batch and (a.batch >= BATCH_SIZE or us - a.last_us > BATCH_GAP_US):
            self.end_batch(a, empty=us - a.last_us > BATCH_GAP_US)

    def get(self, a: _Agent, us: int, m: AgentMessage, xmitq: str, dest: str) -> int:
        """A sending agent's MQGET of one message from its transmission queue at ``us`` (microseconds since 1970,
        later if the agent's clock is past it); the time printed."""
        msg_id, put_t, sender, queue, length, pers = m.msg_id, m.put_t, m.sender, m.queue, m.length, m.pers
        self.begin(a, us)
        hobj = self.open(a, xmitq, "", XMITQ_OPEN_OPTIONS, us)
        us, t = self.clock(a, us)
        pd, pt = RM.put_date_time(put_t)
        self.op(a, _call("MQXF_GET", a.tid, t) + [
            ("Hobj", hobj), ("Get Options", GET_OPTIONS)] + _OK + [
            ("Msg length", length + 428), ("High Res Time", us), ("Buffer Length", 4194304), ("Object_name", xmitq),
            ("Resolved_Q_Name", xmitq), ("Report Options", 0), ("Msg_type", RP.Const("MQMT_DATAGRAM")),
            ("Expiry", -1), ("Format_name", "MQXMIT"), ("Priority", 0), ("Persistence", pers),
            ("Msg_id", msg_id[:19] + bytes([XMITQ_DESCRIPTOR_KIND]) + msg_id[20:]), ("Correl_id", b"\0" * 24),
            ("Reply_to_Q ", ""), ("Reply_to_Q_Mgr", sender), ("Coded_char_set_id", 1208), ("Encoding", 546),
            ("Put_date", pd), ("Put_time", pt), ("Transmit Header Msg_id", msg_id),
            ("Transmit Header Correl_id", b"\0" * 24), ("Transmit Header RemoteQName", queue),
            ("Transmit Header RemoteQMgr", dest), ("Transmit Header Put_date", pd),
            ("Transmit Header Put_time", pt), ("QMgr Operation Duration", 35)])
        a.batch += 1
        return us

    def put(self, a: _Agent, us: int, m: AgentMessage) -> int:
        """A receiving agent's MQPUT of one message to its target queue at ``us``; the time printed."""
        msg_id, put_t, sender, queue, length, pers = m.msg_id, m.put_t, m.sender, m.queue, m.length, m.pers
        self.begin(a, us)
        hobj = self.open(a, queue, self.qm.name, TARGET_OPEN_OPTIONS, us)
        us, t = self.clock(a, us)
        pd, pt = RM.put_date_time(put_t)
        self.op(a, _call("MQXF_PUT", a.tid, t) + [
            ("Hobj", hobj), ("Put Options", AGENT_PUT_OPTIONS)] + _OK + [
            ("Msg length", length), ("Known_dest_count", 1), ("Unknown_dest_count", 0), ("Invalid_dest_count", 0),
            ("High Res Time", us), ("Object_name", queue), ("Resolved_Q_Name", queue),
            ("Resolved_Q_mgr", self.qm.name), ("Resolved_local_Q_name", queue), ("Resolved_local_Q_mgr", self.qm.name),
            ("Report Options", 0), ("Msg_type", RP.Const("MQMT_DATAGRAM")), ("Expiry", -1), ("Format_name", "MQSTR"),
            ("Priority", 0), ("Persistence", pers), ("Msg_id", msg_id), ("Correl_id", b"\0" * 24),
            ("Reply_to_Q ", ""), ("Reply_to_Q_Mgr", sender), ("Coded_char_set_id", 1208), ("Encoding", 546),
            ("Put_date", pd), ("Put_time", pt), ("QMgr Operation Duration", 41)])
        a.batch += 1
        return us

    def close(self) -> None:
        for a in self.agents.values():
            self.end_batch(a, empty=True)
            for hobj in a.handles.values():
                _, t = self.clock(a, a.last_us)
                self.op(a, _call("MQXF_CLOSE", a.tid, t) + [("Hobj", hobj)] + _OK + [("Close Options", 0)])
            self.flush(a)
        if not self.json:
            self.out.write(f"{self.records} Records Processed.\n")


class ChannelTraces:
    """The channel-agent traces of one day: a file per queue manager with a traced agent, the injected stops."""

    def __init__(self, estate: Estate, day: date, fmt: str, open_file: Callable[[str, str], object],
                 arrivals: bool = True):
        self.est, self.day, self.fmt = estate, day, fmt
        self.trace_arrivals = arrivals  # the receiving agents' puts too (both ends)
        self.open_file = open_file  # (queue manager, file name) -> a text stream
        self.files: dict[str, QueueManagerTrace] = {}
        self.streams: list = []
        self.day_us = (datetime(day.year, day.month, day.day) - _EPOCH) // timedelta(microseconds=1)
        self.stops: dict[tuple[str, str], ChannelStop] = {}  # (sender, channel) -> the stop not yet over
        self.done: list[ChannelStop] = []
        self.departures = 0
        self.arrivals = 0
        self.ledger = None  # --trace-gets: clwl.generate.consumers.DepthLedger, told each departure and arrival

    def file(self, qm: str) -> QueueManagerTrace:
        f = self.files.get(qm)
        if f is None:
            stream = self.open_file(qm, file_name(qm, self.day, self.fmt))
            self.streams.append(stream)
            f = self.files[qm] = QueueManagerTrace(stream, self.est.qmgrs[qm], self.day, self.fmt)
        return f

    def stop(self, s: ChannelStop) -> None:
        self.stops[(s.sender, s.channel)] = s

    def _restart_due(self, sender: str, now_ms: int, sd) -> None:
        for key in [k for k, s in self.stops.items() if k[0] == sender and s.restart_ms <= now_ms]:
            self._restart(self.stops.pop(key), sd)

    def _restart(self, s: ChannelStop, sd) -> None:
        waiting, s.waiting = s.waiting, []
        k = next(d.key for d in sd.router.dests if d.channel == s.channel)
        for mid, put_ms, qi, length, pers in waiting:
            self._leave(sd, k, mid, put_ms, qi, length, pers, s.restart_ms * 1000)
            s.waiting.append(mid)
        self.done.append(s)

    def depart(self, sd, k: int, mid: str, put_ms: int, qi: int, length: int, pers: int) -> None:
        """A message put to a running channel: it leaves now, or at the restart of an injected stop."""
        if self.stops:
            self._restart_due(sd.sender, put_ms, sd)
            s = self.stops.get((sd.sender, sd.router.dests[k].channel))
            if s is not None and s.stop_ms <= put_ms:
                s.waiting.append((mid, put_ms, qi, length, pers))  # type: ignore[arg-type]
                return
        self._leave(sd, k, mid, put_ms, qi, length, pers, (put_ms + DEPART_AFTER_MS) * 1000)

    def release(self, sd, k: int, mid: str, put_ms: int, qi: int, length: int, pers: int, at_ms: int) -> None:
        """A message that waited (an outage, a partition) leaves when the simulation delivers it."""
        if self.stops:
            self._restart_due(sd.sender, at_ms, sd)
        self._leave(sd, k, mid, put_ms, qi, length, pers, at_ms * 1000)

    def _leave(self, sd, k: int, mid: str, put_ms: int, qi: int, length: int, pers: int, at_us: int) -> None:
        d = sd.router.dests[k]
        qms = self.est.qmgrs
        put_t = _EPOCH + timedelta(microseconds=self.day_us + put_ms * 1000)
        f = self.file(sd.sender)
        m = AgentMessage(bytes.fromhex(mid), put_t, sd.sender, sd.qnames[qi], length, pers)
        us = f.get(f.agent(True, d.channel, qms[d.qmgr]), self.day_us + at_us, m, sd.xmitq[k], d.qmgr)
        self.departures += 1
        if self.ledger is not None:
            self.ledger.xmitq_get(sd.sender, sd.xmitq[k], us, mid)
        if not self.trace_arrivals:
            return
        g = self.file(d.qmgr)
        at = g.put(g.agent(False, d.channel, qms[sd.sender]), us + TRANSIT_US, m)
        self.arrivals += 1
        if self.ledger is not None:
            self.ledger.arrive(d.qmgr, sd.qnames[qi], at, mid, length, pers, self.day_us + put_ms * 1000)

    def close(self, sds: dict) -> None:
        """The end of the day: stops still on restart (at their restart time), every agent's batch committed, its
        transmission queue or target queue closed, the rest printed."""
        for key in sorted(self.stops):
            self._restart(self.stops.pop(key), sds[key[0]])
        for f in self.files.values():
            f.close()
        for stream in self.streams:
            stream.close()
