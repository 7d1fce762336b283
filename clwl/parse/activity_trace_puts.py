"""What the MQI operations do to the open handles (MQOPEN, MQCLOSE, MQDISC), and the put events: each successful
MQPUT / MQPUT1 as a :class:`~clwl.parse.put_record.PutRecord` with the bind of its handle, the ids and
persistence the trace level carries (the MQMD dump at HIGH), and MQ's own answer (the resolved queue manager and
transmission queue) where it is traced. A put whose MQOPEN is not in the input waits for it to the end.
"""

from __future__ import annotations

import hashlib
import re
from datetime import tzinfo

from clwl.parse.activity_trace_lexer import OperationBlock
from clwl.parse.activity_trace_operations import OperationReader
from clwl.parse.activity_trace_records import (
    ORIGIN,
    ActivityTraceResult,
    OpenHandle,
    TracedPut,
    TraceOperation,
    TraceState,
)
from clwl.parse.activity_trace_values import Rejected, int_field, mqmd_fields, name_or_none, struct_codec
from clwl.parse.common import clip
from clwl.parse.put_record import PutRecord

__all__ = ["TraceReader"]

# MQOO_* / MQPMO_* / MQMF_* values (cmqc.h).
MQOO_BIND_ON_OPEN = 0x4000
MQOO_BIND_NOT_FIXED = 0x8000
MQOO_BIND_ON_GROUP = 0x400000
MQPMO_LOGICAL_ORDER = 0x8000
MQMF_MSG_IN_GROUP = 0x08
MQMF_LAST_MSG_IN_GROUP = 0x10
MQPER_NOT_PERSISTENT, MQPER_PERSISTENT = 0, 1

ZERO_TOKEN = "0" * 64
#: ``API Environment`` of a channel agent (MQXE_MCA); a client's SVRCONN agent (MQXE_MCA_SVRCONN) puts for its
#: application, and those puts are put events.
CHANNEL_AGENT = "MQXE_MCA"
_NAME_OK = re.compile(r"[A-Za-z0-9._/%]{1,48}")


def _chars(raw: bytes, codec: str) -> str:
    return raw.decode(codec, "replace").rstrip(" \x00")


def _mqpmo(dump: bytes) -> dict:
    """ResolvedQName / ResolvedQMgrName (output fields of the call) from an MQPMO dump; {} otherwise."""
    codec = struct_codec(dump[:4], "PMO ") if len(dump) >= 128 else None
    if codec is None:
        return {}
    return {"resolved_q": _chars(dump[32:80], codec) or None, "resolved_qmgr": _chars(dump[80:128], codec) or None}


def _synth_id(*parts: object) -> str:
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()[:48].upper()


class TraceReader(OperationReader):
    """The whole reader of amqsact output: the lexer, the operation records, and here the handles and put events."""

    def __init__(self, source: str, zone: tzinfo, state: TraceState | None, on_chunk, chunk_ops: int):
        super().__init__(source, zone, state, on_chunk, chunk_ops)
        # puts whose MQOPEN has not been seen, by (connection, Hobj): (SeqNumber, block, record)
        self.pending: dict[tuple[str, int], list[tuple[int, OperationBlock, TraceOperation]]] = {}

    # --- what an operation does to the handles, and the put events -------------------------------------------

    def accept(self, rec: TraceOperation, op: OperationBlock, hv: dict) -> None:
        r = self.result
        r.operations.append(rec)
        r.counts[rec.operation] += 1
        r.forms.add("verbose")
        handles = r.state.handles
        failed = rec.comp_code == "MQCC_FAILED"
        name = rec.operation
        if name == "MQOPEN" and not failed:
            f = rec.fields
            key = (rec.connection, rec.hobj)
            handles[key] = OpenHandle(rec.object_name or "", rec.object_qmgr_name, rec.options or 0,
                                      f"{rec.connection}:{rec.hobj}:{rec.seq_number}.{rec.index}",
                                      name_or_none(f.get("Resolved_Q_mgr")), name_or_none(f.get("Resolved_Q_Name")),
                                      name_or_none(f.get("Resolved_local_Q_name")), rec.seq_number or 0)
            waiting = self.pending.get(key)
            if waiting:
                keep = []
                opened_at = (rec.seq_number or 0, rec.index)
                for seq, wop, wrec in waiting:
                    if (seq, wrec.index) > opened_at:  # only a put after this open, in the connection's order
                        self.put_event(wrec, wop, handles[key])
                    else:
                        keep.append((seq, wop, wrec))
                self.pending[key] = keep
        elif name == "MQCLOSE" and not failed:
            handles.pop((rec.connection, rec.hobj), None)
        elif name == "MQDISC":
            for key in [k for k in handles if k[0] == rec.connection]:
                del handles[key]
        elif name in ("MQPUT", "MQPUT1"):
            if failed:
                r.failed_puts += 1
            elif rec.api_environment == CHANNEL_AGENT:
                # A receiving channel agent's put delivers a message that arrived over its channel: an arrival
                # (clwl.analyses.observed), not a put the sending queue manager's CLWL algorithm chose for; as a put event
                # it would repeat the sender's message id on the receiving queue manager.
                r.agent_puts += 1
            elif name == "MQPUT1":
                self.put_event(rec, op, None)
            else:
                handle = handles.get((rec.connection, rec.hobj))
                if handle is None:
                    self.pending.setdefault((rec.connection, rec.hobj), []).append((rec.seq_number or 0, op, rec))
                else:
                    self.put_event(rec, op, handle)
        self.tick()

    def put_event(self, rec: TraceOperation, op: OperationBlock, handle: OpenHandle | None) -> None:
        f = rec.fields
        notes: list[str] = []
        try:
            if rec.qmgr is None:
                raise Rejected("trace message without QueueManager: the sending queue manager is unknown")
            if rec.operation_time is None:
                raise Rejected("put without OperationDate/OperationTime or High Res Time")
            put_options = rec.options or 0
            length = int_field(f, "Msg length")
            if length is None or length < 0:
                raise Rejected(f"bad Msg length {f.get('Msg length')!r}")
            if handle is None:  # MQPUT1: its own open, one choice per message
                queue, target, bind, bind_source, open_options, open_id = (
                    rec.object_name, rec.object_qmgr_name, "notfixed", "put1", None, None)
            else:
                queue, target, open_options, open_id = (handle.object_name, handle.object_qmgr, handle.options,
                                                        handle.open_id)
                if open_options & MQOO_BIND_NOT_FIXED:
                    bind, bind_source = "notfixed", "open_options"
                elif open_options & MQOO_BIND_ON_GROUP:
                    bind, bind_source = "group", "open_options"
                elif open_options & MQOO_BIND_ON_OPEN:
                    bind, bind_source = "open", "open_options"
                else:
                    bind, bind_source = "as_q_def", "as_q_def"
                    notes.append("MQOO_BIND_AS_Q_DEF: bind is the queue's DEFBIND at put time (resolve from config)")
            if not queue or not _NAME_OK.fullmatch(queue):
                raise Rejected(f"bad or missing queue name {clip(queue or '')!r}")
            if target is not None and not _NAME_OK.fullmatch(target):
                raise Rejected(f"bad Object_Q_mgr_name {clip(target)!r}")
            logical = bool(put_options & MQPMO_LOGICAL_ORDER)
            md = mqmd_fields(op.dumps.get("MQMD Structure", b""))
            pmo = _mqpmo(op.dumps.get("MQPMO Structure", b""))
            if "MQMD Structure" in op.dumps and not md:
                notes.append("MQMD Structure dump is not a readable MQMD (cut or not 'MD  ')")
            # message id: the put record's Msg_id (MEDIUM), the MQMD (HIGH), else synthesized
            msg_id = f.get("Msg_id") or md.get("msg_id")
            msg_id_traced = bool(msg_id) and len(msg_id) == 48
            if not msg_id_traced:
                msg_id = _synth_id(rec.source, rec.connection, rec.seq_number, rec.index)
                notes.append("Msg_id not traced (LOW): synthesized from connection, SeqNumber and operation")
            # persistence: Persistence field (MEDIUM) or the MQMD
            pers = int_field(f, "Persistence")
            if pers is None:
                pers = md.get("persistence")
            if pers not in (MQPER_NOT_PERSISTENT, MQPER_PERSISTENT):
                notes.append("persistence not known (not traced or MQPER_PERSISTENCE_AS_Q_DEF): read as false")
            persistent = pers == MQPER_PERSISTENT
            # group id: a GroupId field, else the MQMD when the message is in a group
            group_id = f.get("GroupId")
            if not group_id and md.get("msg_flags", 0) & (MQMF_MSG_IN_GROUP | MQMF_LAST_MSG_IN_GROUP):
                group_id = md.get("group_id")
            if group_id and group_id.count("0") == len(group_id):
                group_id = None
            if logical and bind == "group" and not group_id:
                notes.append("logical order on a bind-on-group handle but no GroupId traced (needs HIGH)")
            # accounting token: traced (AccountingToken field or MQMD), else from the bind as the replay reads it
            token = f.get("AccountingToken") or md.get("accounting_token")
            token_traced = bool(token) and len(token) == 64
            if not token_traced:
                never_moves = bind == "open" or target is not None or (bind == "group" and logical)
                token = ZERO_TOKEN if never_moves else _synth_id("token", rec.connection)[:48].ljust(64, "F")
                notes.append("AccountingToken not traced: derived from the bind")
            observed_qmgr, observed_q, basis, reason = self.observed(rec, handle, bind, pmo)
            xmitq = None
            if observed_qmgr is not None and observed_qmgr != rec.qmgr:
                local_q = name_or_none(f.get("Resolved_local_Q_name")) or (
                    handle.resolved_local_q if basis == "open" and handle is not None else None)
                if local_q is not None and local_q != observed_q:
                    xmitq = local_q
                else:
                    notes.append("remote destination but no Resolved_local_Q_name: transmission queue not traced")
            from_channel = rec.channel_type == "MQCHT_CLUSRCVR"  # the put is a cluster-receiver MCA's
            put = PutRecord(
                rec.source, rec.line, rec.operation_time, rec.qmgr, queue, target, bind, open_id, group_id,
                logical, from_channel, queue.startswith("SYSTEM.CLUSTER.COMMAND.QUEUE"), length, persistent,
                token.upper(), token.count("0") == 64, msg_id.upper(), observed_qmgr, None, xmitq)
        except Rejected as exc:
            self.problem(rec.line, str(exc), "\n".join(op.raw))
            return
        self.result.puts.append(TracedPut(
            put, rec.operation, ORIGIN, rec.connection, rec.hobj, rec.trace_level, rec.comp_code, rec.reason_code,
            put_options, open_options, bind_source, basis, reason, token_traced, msg_id_traced, tuple(notes)))

    @staticmethod
    def observed(rec: TraceOperation, handle: OpenHandle | None, bind: str, pmo: dict):
        """MQ's answer for this message: (qmgr, queue, basis, reason-when-None)."""
        if pmo.get("resolved_qmgr"):
            return pmo["resolved_qmgr"], pmo.get("resolved_q"), "mqpmo", None
        qmgr = name_or_none(rec.fields.get("Resolved_Q_mgr"))
        if qmgr is not None:
            return qmgr, name_or_none(rec.fields.get("Resolved_Q_Name")), "put_record", None
        if handle is not None and bind == "open" and handle.resolved_qmgr:
            return handle.resolved_qmgr, handle.resolved_q, "open", None
        if rec.trace_level == "low":
            return None, None, None, "trace level LOW: the put record carries no resolved queue manager"
        return None, None, None, f"{rec.operation} record at {rec.trace_level.upper()} without Resolved_Q_mgr"

    def close(self) -> ActivityTraceResult:
        for (connection, hobj), waiting in self.pending.items():
            for _, op, rec in waiting:
                self.problem(rec.line, f"MQPUT on handle {hobj} of connection {clip(connection, 60)} whose MQOPEN "
                             "is not in the input (opened before the trace started or in an earlier file)",
                             "\n".join(op.raw))
        self.pending.clear()
        return super().close()
