"""The consumers' gets and the depth truth of a synthetic estate (``clwl generate --trace-gets``; issue 44).

Every message that reaches a destination queue instance (an application's local put, a receiving channel agent's
put) is got by that instance's consumer, an application with one connection per queue instance, traced as amqsact
prints an application at MEDIUM: MQCONNX, MQOPEN (input), per message an MQGET under syncpoint with the message's
MsgId and an MQCMIT, MQCLOSE and MQDISC at the end of the day. One file per queue manager and day:
``<QM>.<date>.consumers.amqsact`` (``.consumers.amqsevt.jsonl`` with trace format json).

The consumer takes the oldest message first (all are priority 0): message i is got at
``max(arrival_i + think, previous get + GET_SPACING_US, end of a pause)``. A consumer may pause once a day inside
one half-hour slot (from ``PAUSE_FROM_MIN`` minutes into the slot, ending ``PAUSE_CLEAR_MIN`` before its end): a
burst that no capture sees, since every capture is at a quiet mark where every queue is drained. About one get in
``BACKOUT_EVERY`` is backed out (MQBACK) and the message got again at once: not a removal.

MQ's queue statistics of the same day (``statistics.amqsmon`` per queue manager, STATINT 1800 on the :00 and :30
marks, as the accounting): per interval, a QueueStatistics record with a group per queue that changed in it or held
messages, its QMinDepth and QMaxDepth taken from the depth truth over [start, end): the depth the interval began
with and every depth after a change inside it.

The depth truth (``_generate.json`` ``depth``): per day, per ``QM/QUEUE`` (every destination queue instance and
transmission queue that changed), every change in time order as ``[microseconds since 1970, depth after, MsgId]``
where depth counts committed units only (a get that is backed out changes nothing); the starting depth of each day
is ``start``. Times are those the traces print (High Res Time).
"""

from __future__ import annotations

import hashlib
import random
from datetime import date, datetime, timedelta
from typing import Callable

import clwl.generate.render_messages as RM
import clwl.generate.render_puts as RP
from clwl.generate.estate import SLOT_MIN, TRAFFIC_END_MIN, TRAFFIC_START_MIN
from clwl.generate.trace_json import trace_object

STATINT_US = 1800 * 1_000_000  # the queue managers' statistics interval (STATINT 1800), from midnight
THINK_US = (2_000, 40_000)  # a consumer's delay after a message arrives
GET_SPACING_US = 150  # a consumer's calls are at least this far apart
COMMIT_AFTER_US = 40
BACKOUT_EVERY = 97
PAUSE_SHARE = 0.5  # the share of queue instances whose consumer pauses once a day
PAUSE_FROM_MIN, PAUSE_CLEAR_MIN = 2, 6
PAUSE_MINUTES = (4, 20)
ACTIVITY_COUNT = 100
GET_OPTIONS = 0x2000 | 0x2 | 0x1  # MQGMO_FAIL_IF_QUIESCING | MQGMO_SYNCPOINT | MQGMO_WAIT
OPEN_OPTIONS = 0x2 | 0x2000  # MQOO_INPUT_SHARED | MQOO_FAIL_IF_QUIESCING
_EPOCH = datetime(1970, 1, 1)


def file_name(qm: str, day: date, fmt: str) -> str:
    return f"{qm}.{day.isoformat()}.consumers." + ("amqsevt.jsonl" if fmt == "json" else "amqsact")


def _at(us: int) -> datetime:
    return _EPOCH + timedelta(microseconds=us)


def _call(op: str, tid: int, t: datetime) -> list[tuple[str, object]]:
    iso = t.isoformat()
    return [("Operation Id", RP.Const(op)), ("ApplicationTid", tid), ("OperationDate", iso[:10]),
            ("OperationTime", iso[11:19])]


_OK = [("Completion Code", RP.Const("MQCC_OK")), ("Reason Code", 0)]


class DepthLedger:
    """One day's queue changes: told by the application trace writer (puts), the channel traces (agents' gets and
    puts); at the end of the day it plans the consumers, writes their trace and gives the depth truth."""

    def __init__(self, estate, day: date, fmt: str, seed: int, open_file: Callable[[str, str], object],
                 start: dict[tuple[str, str], int] | None = None):
        self.est, self.day, self.fmt, self.seed = estate, day, fmt, seed
        self.open_file = open_file  # (queue manager, file name) -> a text stream
        self.start = dict(start or {})  # (qm, queue) -> depth at the start of the day
        self.changes: dict[tuple[str, str], list[tuple[int, int, str]]] = {}  # -> (us, +1/-1, msg id hex)
        self.arrivals: dict[tuple[str, str], list[tuple[int, str, int, int, int]]] = {}  # (us, mid, len, pers, put)
        self.gets = 0
        self.backouts = 0
        self.pauses: list[dict] = []
        self.files: list[str] = []

    # -- told by the traces ------------------------------------------------------------------------------------
    def app_put(self, sender: str, queue: str, dest: str, xmitq: str | None, us: int, mid: str, length: int,
                pers: int) -> None:
        if dest == sender:
            self.arrive(sender, queue, us, mid, length, pers, us)
        elif xmitq:
            self.changes.setdefault((sender, xmitq), []).append((us, 1, mid.upper()))

    def xmitq_get(self, sender: str, xmitq: str, us: int, mid: str) -> None:
        self.changes.setdefault((sender, xmitq), []).append((us, -1, mid.upper()))

    def arrive(self, qm: str, queue: str, us: int, mid: str, length: int, pers: int, put_us: int) -> None:
        self.changes.setdefault((qm, queue), []).append((us, 1, mid.upper()))
        self.arrivals.setdefault((qm, queue), []).append((us, mid.upper(), length, pers, put_us))

    # -- the end of the day ------------------------------------------------------------------------------------
    def close(self) -> dict:
        """Plan every consumer, write the consumers' trace files, and return the day's depth truth."""
        by_qm: dict[str, list[tuple[str, list]]] = {}
        for (qm, queue), arrivals in sorted(self.arrivals.items()):
            arrivals.sort()
            by_qm.setdefault(qm, []).append((queue, self._consume(qm, queue, arrivals)))
        for qm, queues in sorted(by_qm.items()):
            self._write(qm, queues)
        day_truth: dict[str, dict] = {}
        for key in sorted(set(self.changes) | set(self.start)):
            depth = self.start.get(key, 0)
            rows = []
            for us, delta, mid in sorted(self.changes.get(key, ()), key=lambda c: (c[0], -c[1], c[2])):
                depth += delta
                rows.append([us, depth, mid])
            day_truth[f"{key[0]}/{key[1]}"] = {"start": self.start.get(key, 0), "changes": rows}
        return day_truth

    def statistics(self, truth: dict) -> dict[str, str]:
        """Each queue manager's statistics.amqsmon text for the day, from the depth truth (:meth:`close`)."""
        day_us = (datetime(self.day.year, self.day.month, self.day.day) - _EPOCH) // timedelta(microseconds=1)
        per: dict[str, dict[int, list[tuple[str, int, int]]]] = {}
        for key, v in sorted(truth.items()):
            qm, queue = key.split("/", 1)
            depth, changes, i = v["start"], v["changes"], 0
            for k in range(24 * 3600 * 1_000_000 // STATINT_US):
                end = day_us + (k + 1) * STATINT_US
                seen = [depth]
                while i < len(changes) and changes[i][0] < end:
                    depth = changes[i][1]
                    seen.append(depth)
                    i += 1
                if len(seen) > 1 or depth:  # a queue that changed in the interval, or held messages
                    per.setdefault(qm, {}).setdefault(k, []).append((queue, min(seen), max(seen)))
        out = {}
        for qm, intervals in sorted(per.items()):
            q = self.est.qmgrs[qm]
            out[qm] = RM.render_amqsmon([
                RM.statistics_record(q, _at(day_us + k * STATINT_US), _at(day_us + (k + 1) * STATINT_US), queues)
                for k, queues in sorted(intervals.items())], "QueueStatistics")
        return out

    def end_depths(self, truth: dict) -> dict[tuple[str, str], int]:
        """The depth of every queue at the end of the day (the next day's start)."""
        out = {}
        for k, v in truth.items():
            qm, queue = k.split("/", 1)
            out[(qm, queue)] = v["changes"][-1][1] if v["changes"] else v["start"]
        return {k: n for k, n in out.items() if n}

    def _consume(self, qm: str, queue: str, arrivals: list) -> list[tuple[int, str, int, int, int, bool]]:
        """The consumer's gets of one queue instance: (us, mid, length, persistence, put us, backed out)."""
        rng = random.Random(f"clwl-generate/{self.seed}/consumer/{qm}/{queue}/{self.day}")
        day_us = (datetime(self.day.year, self.day.month, self.day.day) - _EPOCH) // timedelta(microseconds=1)
        pause = None
        if rng.random() < PAUSE_SHARE:
            slots = (TRAFFIC_END_MIN - TRAFFIC_START_MIN) // SLOT_MIN
            slot = TRAFFIC_START_MIN + rng.randrange(slots) * SLOT_MIN
            length = rng.randint(*PAUSE_MINUTES)
            first = slot + PAUSE_FROM_MIN
            last = slot + SLOT_MIN - PAUSE_CLEAR_MIN - length
            begin = rng.randint(first, max(first, last))
            pause = (day_us + begin * 60_000_000, day_us + (begin + length) * 60_000_000)
            self.pauses.append({"qmgr": qm, "queue": queue, "from": _at(pause[0]).isoformat() + "Z",
                                "to": _at(pause[1]).isoformat() + "Z"})
        gets = []
        last = 0
        for us, mid, length, pers, put_us in arrivals:
            t = max(us + rng.randint(*THINK_US), last + GET_SPACING_US)
            if pause is not None and pause[0] <= t < pause[1]:
                t = max(pause[1], last + GET_SPACING_US)
            if rng.randrange(BACKOUT_EVERY) == 0:  # got, backed out, got again
                gets.append((t, mid, length, pers, put_us, True))
                self.backouts += 1
                t += 2 * GET_SPACING_US
            gets.append((t, mid, length, pers, put_us, False))
            self.changes.setdefault((qm, queue), []).append((t, -1, mid))
            last = t + COMMIT_AFTER_US
            self.gets += 1
        return gets

    def _write(self, qm: str, queues: list[tuple[str, list]]) -> None:
        name = file_name(qm, self.day, self.fmt)
        out = self.open_file(qm, name)
        self.files.append(name)
        q = self.est.qmgrs[qm]
        pid = 4000 + int(hashlib.sha256(f"consumer/{qm}/{self.day}".encode()).hexdigest()[:4], 16) % 20000
        records = 0
        for queue, gets in queues:
            correl = b"AMQC" + qm.ljust(12).encode()[:12] + hashlib.sha256(
                f"{qm}/{self.day}/consumer/{queue}".encode()).digest()[:8]
            ops: list[tuple[int, list]] = []
            seq = 0

            def flush() -> None:
                nonlocal ops, seq, records
                if not ops:
                    return
                start, end = _at(ops[0][0]), _at(ops[-1][0])
                conn = RP.TracedConnection(q, correl, "consumer", "MQAT_UNIX", pid, "app", 2)
                header = RP.trace_header_fields(conn, start, end, seq)
                fields = [f for _, f in ops]
                out.write(trace_object(header, fields, end) if self.fmt == "json"
                          else RP.trace_message_text(header, fields))
                records += 1
                seq += 1
                ops = []

            def op(us: int, fields: list) -> None:
                ops.append((us, fields))
                if len(ops) >= ACTIVITY_COUNT:
                    flush()

            first = gets[0][0] - 2 * GET_SPACING_US
            op(first - GET_SPACING_US, RP.trace_connx(1, _at(first - GET_SPACING_US)))
            op(first, _call("MQXF_OPEN", 1, _at(first)) + [
                ("Object_type", RP.Const("MQOT_Q")), ("Object_name", queue), ("Object_Q_mgr_name", ""), ("Hobj", 1)]
                + _OK + [("Open_options", OPEN_OPTIONS), ("Known_dest_count", 0), ("Unknown_dest_count", 0),
                         ("Invalid_dest_count", 0), ("High Res Time", first), ("Resolved_Q_Name", queue),
                         ("Resolved_Q_mgr", qm), ("Resolved_type", RP.Const("MQOT_Q")),
                         ("QMgr Operation Duration", 80)])
            for us, mid, length, pers, put_us, backed_out in gets:
                pd, pt = RM.put_date_time(_at(put_us))
                op(us, _call("MQXF_GET", 1, _at(us)) + [("Hobj", 1), ("Get Options", GET_OPTIONS)] + _OK + [
                    ("Msg length", length), ("High Res Time", us), ("Buffer Length", 4194304),
                    ("Object_name", queue), ("Resolved_Q_Name", queue), ("Report Options", 0),
                    ("Msg_type", RP.Const("MQMT_DATAGRAM")), ("Expiry", -1), ("Format_name", "MQSTR"),
                    ("Priority", 0), ("Persistence", pers), ("Msg_id", bytes.fromhex(mid)),
                    ("Correl_id", b"\0" * 24), ("Reply_to_Q ", ""), ("Reply_to_Q_Mgr", ""),
                    ("Coded_char_set_id", 1208), ("Encoding", 546), ("Put_date", pd), ("Put_time", pt),
                    ("QMgr Operation Duration", 30)])
                end = us + COMMIT_AFTER_US
                op(end, _call("MQXF_BACK" if backed_out else "MQXF_CMIT", 1, _at(end)) + _OK + [
                    ("High Res Time", end), ("QMgr Operation Duration", 200)])
            last = gets[-1][0] + COMMIT_AFTER_US
            op(last + GET_SPACING_US, RP.trace_close(1, _at(last + GET_SPACING_US), 1))
            op(last + 2 * GET_SPACING_US, RP.trace_disc(1, _at(last + 2 * GET_SPACING_US)))
            flush()
        if self.fmt != "json":
            out.write(f"{records} Records Processed.\n")
        out.close()
