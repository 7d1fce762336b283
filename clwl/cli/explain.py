"""``clwl explain MSG_ID [--lake DIR] [--date D] [--sender QM] [--json]``: one replayed message step by step.

The work is clwl/analyses/explain.py (deltalake and the engine, no JVM); the trace is printed by ``clwl route
--explain``'s own formatting, so the two commands show a routing decision in the same words.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime
from types import SimpleNamespace

from clwl.cli.extras import QUERY_MODULES
from clwl.cli.options import DATE, LAKE_LOCATION
from clwl.cli.task import LakeTask, TaskError
from clwl.terminal import printable

#: stay_detail of a message that could not be re-allocated, in words (docs/tables.md, not_reallocatable_reason).
NOT_ELIGIBLE = {
    "named-qmgr": "the application named the target queue manager",
    "bind-on-open": "bound on open (MQOO_BIND_ON_OPEN)",
    "bind-on-group": "bound on group, a group put in logical order",
}


def add_explain_command(subparsers) -> argparse.ArgumentParser:
    e = subparsers.add_parser(
        "explain", help="explain one replayed message step by step (no JVM)",
        description="The routing of one message of the published gold.routing_replay, step by step, as `clwl "
                    "route --explain` prints it, with the configuration and the routing state "
                    "(DestSeqFactor/DestSeqNumber) it met: its sender's day is replayed in-process up to it. "
                    "Then its fate: whether it waited behind a channel and from when, each time it was "
                    "re-allocated or stayed and why, when it was released or delivered, and the observed "
                    "destination; and its flow across queue managers where an activity trace saw it (the "
                    "application's put, the channel agent's get from the transmission queue, the receiving agent's "
                    "put, an application's get) with whether the replay's wait agrees.",
        epilog="example: clwl explain 414D5120514D312020202020202020205A46396A0000036B --date 2026-11-20 (a message "
               "of the samples put on a bind-on-open handle, stuck behind TO.QM3)")
    e.add_argument("msg_id", metavar="MSG_ID", help="the message id (hex), as in gold.routing_replay.msg_id")
    LAKE_LOCATION.add(e)
    DATE.add(e, help="the run date (needed when the message was replayed on several dates)")
    e.add_argument("--sender", metavar="QMNAME", help="the sending queue manager (when several sent that id)")
    e.add_argument("--json", action="store_true", help="one JSON object (timestamps ISO-8601)")
    e.set_defaults(func=ExplainTask.main)
    return e


def malformed_id(text: str) -> str | None:
    """Why ``text`` is not a message id (None when it is one): an id is 48 hex digits, MQMD MsgId's 24 bytes."""
    import re

    if re.fullmatch(r"[0-9A-Fa-f]{48}", text):
        return None
    bad = sorted({c for c in text if c not in "0123456789abcdefABCDEF"})
    what = (f"{', '.join(repr(c) for c in bad[:5])} {'is' if len(bad) == 1 else 'are'} not hex" if bad else
            f"{len(text)} digit{'' if len(text) == 1 else 's'}")
    return (f"{text!r} is not a message id: an id has 48 hex digits (MQMD MsgId's 24 bytes, as in "
            f"gold.routing_replay.msg_id), and {what}")


class ExplainTask(LakeTask):
    command = "explain"
    readers = QUERY_MODULES

    def check(self) -> None:
        problem = malformed_id(self.args.msg_id.strip())
        if problem:  # before the lake is read: a mistyped id is one line at once
            raise TaskError(problem)

    def failures(self):
        from clwl.analyses.explain import ExplainError

        return (ExplainError,)

    def compute(self):
        from clwl.analyses.explain import explain

        return explain(self.lake, self.args.msg_id.strip(), self.date, self.args.sender)

    def json_document(self, ex) -> dict:
        return ex.to_json()

    def render_text(self, ex) -> None:
        write_readable(ex)


def _t(v) -> str:
    if not isinstance(v, datetime):
        return "-" if v is None else str(v)
    return v.strftime("%Y-%m-%d %H:%M:%S UTC")


def write_readable(ex) -> None:
    from clwl.analyses.explain import states_at
    from clwl.cli.route import print_readable

    def w(line: str = "") -> None:  # one line, escaped: names, traces and remedies come from the lake
        sys.stdout.write(printable(line) + "\n")

    row = ex.row
    w(f"Message {ex.msg_id}")
    w(f"  put      {_t(row['put_time'])} on {ex.sending_qmgr} to {row['queue']}"
      + (f" at queue manager {row['target_qmgr']}" if row.get("target_qmgr") else "")
      + f", bind {row['bind']}, {row['length']} bytes (run date {ex.run_date}, profile {row['profile']})"
      + (f", by {ex.application}" if ex.application else ""))
    if ex.result is None:
        w(f"  routing  {row.get('error') or 'NO_CONFIGURATION'}: {row.get('trace') or ''}")
    else:
        w(f"  config   the captures in force at the put: {_t(ex.config_time)}")
        w(f"  state    step 12's routing state as it stood, after {ex.earlier_messages} earlier message(s) of "
          f"{ex.sending_qmgr} that day (the lowest DestSeqFactor is chosen, then the lowest DestSeqNumber)"
          + (":" if ex.state_before else ": no destination chosen yet"))
        for line in state_lines(ex.state_before):
            w(f"           {line}")
        w()
        # `clwl route --explain`'s own output for this one message, at this configuration and state.
        # The channels' states in force at the put, as `clwl route --at` shows them from the same captures.
        print_readable([ex.result], SimpleNamespace(count=1, queue=row["queue"], qmgr=row.get("target_qmgr"),
                                                     algorithm=row["profile"], bind=row["bind"], explain=True),
                        ex.sending_qmgr, None, states_at(ex.timeline, row["put_time"]))
    w("Fate (gold.routing_replay" + (", gold.stuck_messages" if ex.sighting is not None else "") + ")")
    for line in fate_lines(ex):
        w(f"  {line}")
    w("Flow (the activity trace, bronze.activity_operations, beside the replay)")
    for line in flow_lines(ex):
        w(f"  {line}")
    if ex.remedy:
        w("What to do")
        w(f"  {ex.remedy}")
    if ex.differences:
        w("The replay here differs from the published row:")
        for d in ex.differences:
            w(f"  {d}")
    elif ex.result is not None:
        first = _dest(row.get("qmgr"), row.get("channel")) if row.get("qmgr") else row.get("error")
        w(f"The replay here agrees with gold.routing_replay (version {ex.routing_replay_version}): first "
          f"destination {first}, the same re-allocations and end.")
    w(f"({ex.earlier_messages + 1} message(s) of {ex.sending_qmgr} replayed in {ex.seconds.get('replay', 0):.2f} s; "
      f"{ex.seconds.get('total', sum(ex.seconds.values())):.2f} s in all)")


def state_lines(state: dict) -> list[str]:
    """One line per destination of the routing state a message met, its numbers named: DestSeqFactor (the sum of
    1000 / CLWLWGHT over its choices, an exact fraction, shown as a decimal too when it is not whole) and
    DestSeqNumber (the sender's choice counter when it was last chosen)."""
    from fractions import Fraction

    rows = []
    for ch, (factor, number) in state.items():
        f = Fraction(factor)
        shown = str(f) if f.denominator == 1 else f"{float(f):.6g} (= {f})"
        rows.append((ch or "(local)", shown, str(number)))
    width = max((len(r[0]) for r in rows), default=0)
    return [f"{ch:<{width}}  DestSeqFactor {fac}, DestSeqNumber {n}" for ch, fac, n in rows]


def _dest(qmgr, channel) -> str:
    return f"{qmgr}/{channel or 'local'}"


def fate_lines(ex) -> list[str]:
    """What became of the message, in sentences: the routing_replay row, with the re-examinations the replay
    here recorded while it waited."""
    r = ex.row
    if r.get("error"):
        return [f"not put: {r['error']} ({r.get('reason_code')}): {r.get('trace') or ''}"]
    lines = []
    first = _dest(r["qmgr"], r["channel"])
    if r.get("held_from") is None and ex.sighting is not None:
        lines += sighting_lines(ex, first)
    elif r.get("held_from") is None:
        lines.append(f"delivered {_t(r.get('delivered_at'))} to {first}: its channel was moving messages")
    else:
        put = r["put_time"]
        lines.append(f"waited on {r.get('xmitq') or 'its transmission queue'} behind {r['channel']} from {_t(put)}"
                     + (f" ({_channel_state(ex, r['channel'], put)})" if ex.result is not None else ""))
    for x in ex.reexaminations:
        head = f"{_t(x.at)} {x.channel} {x.state}:"
        if x.moved:
            why = f" (step {x.redriven.decided_by} of the algorithm driven again)" if _is_route(x.redriven) else ""
            lines.append(f"{head} re-allocated to {_dest(x.to_qmgr, x.to_channel)}{why}"
                         + (": waits there, not moving either" if x.waits_again else ": left for a working channel"))
        else:
            lines.append(f"{head} stayed: {_stay(x.stay_reason, x.stay_detail)}")
    if ex.released is not None:
        at, channel, state = ex.released
        lines.append(f"{_t(at)} {channel} {state}: released, the channel moves messages again")
    if r.get("reallocations") and not ex.reexaminations:
        lines.append(f"re-allocated {r['reallocations']} time(s)")
    final = _dest(r.get("final_qmgr"), r.get("final_channel"))
    if r.get("held"):
        lines.append(f"still waiting at the end of the day behind {r.get('final_channel')} ({r.get('hold_state')}) "
                     f"since {_t(r.get('held_from'))}: {_stay(r.get('stay_reason'), r.get('stay_detail'))}")
    elif r.get("held_from") is not None:
        lines.append(f"delivered {_t(r.get('delivered_at'))} to {final}"
                     + (f" after {r['reallocations']} re-allocation(s)" if r.get("reallocations") else "")
                     + (f"; it had stayed: {_stay(r['stay_reason'], r.get('stay_detail'))}"
                        if r.get("stay_reason") else ""))
    lines.append(report_line(ex))
    if r.get("observed_qmgr"):
        seen = r["observed_qmgr"] + (f" (xmitq {r['observed_xmitq']})" if r.get("observed_xmitq") else "")
        verdict = {True: "agrees with the replay", False: f"DISAGREES: the replay has {final}"}.get(r.get("agrees"),
                                                                                                 "not compared")
        lines.append(f"observed at {seen}: {verdict}")
    else:
        lines.append("not observed (no destination in the put file or activity trace)")
    return lines


#: How each traced record of a message reads (clwl.analyses.observed.FlowStep.kind).
FLOW_WORDS = {
    "put": lambda s: f"put      on {s.qmgr} to {s.queue}" + (f" by {s.application}" if s.application else ""),
    "left": lambda s: f"left     {s.qmgr}'s {s.queue} over {s.channel}" + (f" for {s.remote}" if s.remote else ""),
    "arrived": lambda s: f"arrived  on {s.qmgr} in {s.queue} over {s.channel}",
    "got": lambda s: f"got      from {s.qmgr}'s {s.queue}" + (f" by {s.application}" if s.application else ""),
}


def flow_lines(ex) -> list[str]:
    """The message's traced records across queue managers, in time order, then the replay's own departure and
    the timing verdict (gold.routing_replay's timing columns); one line when nobody traced it."""
    r = ex.row
    if not ex.flow:
        return ["not traced: no application's or channel agent's activity trace names this message id (the "
                "replay's times rest on the channel status captures)"]
    lines = []
    if not any(s.kind == "put" for s in ex.flow):
        lines.append(f"{_t(r.get('put_time'))}  put      on {ex.sending_qmgr} to {r.get('queue')} (the put record)")
    for s in ex.flow:
        open_uow = "" if s.committed is not False else " (its unit of work not committed where the trace ends)"
        where = f"  [{s.source}:{s.line}]" if s.source else ""
        lines.append(f"{_t(s.at)}  {FLOW_WORDS[s.kind](s)}{open_uow}{where}")
    if r.get("error"):
        replay = "the replay: not put"
    elif r.get("held"):
        replay = f"the replay: held on the transmission queue from {_t(r.get('held_from'))} to the end of the day"
    elif r.get("held_from") is not None:
        replay = f"the replay: waited from {_t(r.get('held_from'))}, released {_t(r.get('released_at'))}"
    else:
        replay = f"the replay: left at its put, {_t(r.get('put_time'))}"
    lines.append(replay)
    verdict = r.get("timing_agrees")
    if verdict is None:
        lines.append("timing not compared (this row is not the traced departure, or the lake was published before "
                     "timing was)")
    else:
        lines.append(("timing agrees: " if verdict else f"timing DISAGREES ({r.get('timing_cause')}): ")
                     + (r.get("timing_note") or ""))
    return lines


#: Where the report's stuck row took its release from (gold.stuck_messages.timing_source), in words.
SOURCE_WORDS = {"channel agent trace": "the channel agents' trace", "xmitq browse": "a transmission queue browse",
                "channel status": "the channel status captures"}


def report_line(ex) -> str:
    """What the report says of the message (its gold.stuck_messages row), in one line: the same story."""
    s = ex.stuck
    if s is None:
        return "in the report: not stuck"
    source = SOURCE_WORDS.get(s.get("timing_source"), s.get("timing_source") or "the replay")
    until = f"until {_t(s['released_at'])}" if s.get("released_at") else "release unknown"
    return (f"in the report: stuck from {_t(s.get('held_from'))}, {until} (from {source}): "
            f"{_stay(s.get('why'), s.get('detail'))}")


def sighting_lines(ex, first: str) -> list[str]:
    """A message the replay delivered at once but a browse later found on the transmission queue: the browse is
    the stronger evidence (the channel failed between two status captures), so its fate is what the report's
    stuck messages say: stuck, when it left the queue unknown."""
    from clwl.analyses.explain import sighting_seen

    r, s = ex.row, ex.sighting
    seen = sighting_seen(s)
    left = (f"stuck until {_t(s['released_at'])}, when the channel agents' trace has it leave the transmission queue"
            if s.get("released_at") else
            "stuck, when it left the transmission queue is unknown (gold.stuck_messages, observed_on_xmitq)")
    return [f"routed to {first} at {_t(r.get('put_time'))}: the status captures had {s.get('channel')} moving "
            "messages, so the replay delivered it at once",
            f"but {'the browse at ' + _t(seen) if seen else 'a browse'} found it on "
            f"{s.get('xmitq') or 'the transmission queue'}, still waiting: {s.get('channel')} failed between two "
            "status captures",
            left]


def _is_route(res) -> bool:
    return res is not None and getattr(res, "error", None) is None


def _stay(reason, detail) -> str:
    if reason == "not-reallocatable":
        return f"not eligible for re-allocation: {NOT_ELIGIBLE.get(detail, detail)}"
    if reason == "still-most-favourable":
        return f"still the most favourable destination: {detail}"
    return reason or "-"


def _channel_state(ex, channel, at) -> str:
    from clwl.analyses.explain import state_at

    return state_at(ex.timeline, channel, at)
