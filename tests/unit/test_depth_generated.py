"""Issue 44's done-test for the depth rebuild, on a generated estate with a traced day (``clwl generate
--trace-gets``: the applications' puts, the channel agents at both ends, the consumers' gets, some backed out).

What is checked: the trace files parse with no problem; :func:`clwl.analyses.depth.rebuild` of each day's operations
(the next day started from the previous one's end) gives every queue instance's and transmission queue's depth equal
to the generator's truth at every change (0 error: the same changes, the same depths, the same MsgIds, the same
microsecond), equal to the CURDEPTH of every QLOCAL capture in the landing folder, and equal to the QMinDepth and
QMaxDepth of every amqsmon statistics interval the generator wrote (statistics.amqsmon: the least and greatest of its
truth over each half hour); with one consumer's connection left out of the trace, that queue is a named gap (no
line) and every other queue is still exact; with one queue manager's trace missing from 10:00 to 12:00, each of its
queues that changed then is a gap naming that window (not a flat line) and every other queue is still exact.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from clwl.analyses.depth import Capture, StatsInterval, rebuild, reconcile
from clwl.generate import GenerateOptions, generate
from clwl.parse.activity_trace import parse_activity_trace_file
from clwl.parse.amqsmon import parse_amqsmon_file
from clwl.parse.mqsc import parse_mqsc_file

ESTATE = dict(seed=5, qmgrs=7, days=2, messages_per_day=1500, outages=1.0, observed_every=1, broken_records=0,
              skew=0, rest_qmgrs=0, puts_format="activity-trace", channel_trace=True, channel_trace_ends="both",
              trace_gets=True)
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _us(t: datetime) -> int:
    return (t - _EPOCH) // timedelta(microseconds=1)


def _operations(day_dir: Path) -> list:
    ops = []
    for qm_dir in sorted(day_dir.iterdir()):
        state = None
        for p in sorted(qm_dir.glob("*.amqsact")):  # one queue manager's files in name order, state handed on
            r = parse_activity_trace_file(p, state=state)
            assert r.problems == [], p
            state = r.state
            ops += r.operations
    return ops


def _captures(day_dir: Path) -> list[Capture]:
    out = []
    for p in sorted(day_dir.rglob("config_*.mqsc")):
        hhmmss = p.stem.split("_")[1]
        at = datetime.fromisoformat(f"{day_dir.name}T{hhmmss[:2]}:{hhmmss[2:4]}:{hhmmss[4:]}+00:00")
        for r in parse_mqsc_file(p).records:
            if r.kind == "QLOCAL" and r.get("CURDEPTH") is not None:
                out.append(Capture(p.parent.name, r.get("QUEUE"), at, int(r.get("CURDEPTH"))))
    return out


def _statistics(day_dir: Path) -> list[StatsInterval]:
    out = []
    for p in sorted(day_dir.rglob("statistics.amqsmon")):
        records, problems, _ = parse_amqsmon_file(p)
        assert problems == [], p
        out += [StatsInterval(r.qmgr, r.queue, r.interval_start.replace(tzinfo=timezone.utc),
                              r.interval_end.replace(tzinfo=timezone.utc), r.q_min_depth, r.q_max_depth)
                for r in records]
    return out


@pytest.fixture(scope="module")
def estate(tmp_path_factory):
    out = tmp_path_factory.mktemp("depth") / "landing"
    truth = generate(GenerateOptions(out=str(out), quiet=True, **ESTATE))
    days = {d: (_operations(out / d), _captures(out / d), _statistics(out / d)) for d in sorted(truth["depth"])}
    return out, truth, days


def _as_truth(line) -> list[list]:
    return [[_us(c.at), c.depth, c.msg_id] for c in line]


def test_the_rebuilt_depth_is_the_generators_at_every_change_and_every_capture(estate):
    _, truth, days = estate
    assert truth["consumers"]["backouts"] > 0 and truth["consumers"]["pauses"]
    start = None
    peaks = 0
    held = 0
    intervals = 0
    for day, (ops, captures, stats) in days.items():
        rebuilt = rebuild(ops, start=start, captures=captures, stats=stats)
        assert rebuilt.gaps == [] and rebuilt.notes == []
        expected = truth["depth"][day]
        assert {(c.qmgr, c.queue) for c in rebuilt.changes} == {tuple(k.split("/", 1)) for k in expected}
        for key, v in expected.items():
            qm, queue = key.split("/", 1)
            assert rebuilt.start[(qm, queue)] == v["start"], key
            assert _as_truth(rebuilt.line(qm, queue)) == v["changes"], key
            peaks = max([peaks] + [c[1] for c in v["changes"]])
        # every capture of a queue with a line agrees (the generator captures at quiet marks: many zeros, and the
        # messages held behind a channel that is retrying)
        compared = [c for c in captures if (c.qmgr, c.queue) in rebuilt.start]
        assert compared and reconcile(rebuilt, captures) == []
        # and every statistics interval's QMinDepth / QMaxDepth: 0 difference
        assert {(st.qmgr, st.queue) for st in stats} <= set(rebuilt.start)
        assert stats and reconcile(rebuilt, (), stats) == []
        intervals += sum(st.min_depth < st.max_depth for st in stats)
        held += sum(c.curdepth for c in compared)
        assert all(c.basis in ("exact", None) for c in rebuilt.changes)  # every get names its MsgId
        start = rebuilt.end_depths()
    assert peaks > 3  # a paused consumer's burst, which no capture shows
    assert held > 0  # some capture shows messages held on a transmission queue: not only zeros agree
    assert intervals > 100  # intervals in which the depth moved, not only still ones


def test_the_statistics_are_the_truths_least_and_greatest_per_half_hour(estate):
    """Recomputed here from the truth: over [start, end) the depth the interval began with and every depth after a
    change inside it; a reconcile that passed because both sides were empty would not catch a wrong file."""
    _, truth, days = estate
    for day, (_, _, stats) in days.items():
        for st in stats:
            v = truth["depth"][day][f"{st.qmgr}/{st.queue}"]
            lo, hi = _us(st.start), _us(st.end)
            before = [d for us, d, _ in v["changes"] if us < lo]
            seen = [before[-1] if before else v["start"]] + [d for us, d, _ in v["changes"] if lo <= us < hi]
            assert (st.min_depth, st.max_depth) == (min(seen), max(seen)), (day, st)


def test_one_consumer_left_out_is_a_named_gap_not_a_wrong_line(estate):
    _, truth, days = estate
    day = min(days)
    ops, captures, stats = days[day]
    opened = next(o for o in ops if o.application_name == "consumer" and o.operation == "MQOPEN")
    qm, queue, conn = opened.qmgr, opened.object_name, opened.connection
    rebuilt = rebuild([o for o in ops if o.connection != conn], captures=captures, stats=stats)
    assert [(g.qmgr, g.queue) for g in rebuilt.gaps] == [(qm, queue)]
    assert "no traced removal" in rebuilt.gaps[0].reason and rebuilt.line(qm, queue) == []
    for key, v in truth["depth"][day].items():
        if key != f"{qm}/{queue}":
            assert _as_truth(rebuilt.line(*key.split("/", 1))) == v["changes"], key


def test_the_truth_lists_the_consumer_files_and_the_option(estate):
    out, truth, _ = estate
    files = truth["consumers"]["files"]
    assert files and all(".consumers.amqsact" in f and (out / f).is_file() for f in files)
    assert truth["args"]["trace_gets"] is True
    assert json.loads((out / "_generate.json").read_text())["depth"] == truth["depth"]


def test_a_queue_managers_trace_missing_for_two_hours_names_a_window_not_a_flat_line(estate):
    """The first day, with every trace row of one queue manager (the one with the most queue changes from 10:00 to
    12:00) between 10:00 and 12:00 left out. MQ's statistics still show those queues moving there; the trace holds
    nothing of them: each queue of that queue manager whose depth changed in the window is a gap that names a span
    inside 10:00-12:00, and has no line. Every other queue (that queue manager's quiet ones, every other queue
    manager's) keeps its exact line."""
    _, truth, days = estate
    day = min(days)
    ops, captures, stats = days[day]
    w0 = datetime.fromisoformat(f"{day}T10:00:00+00:00")
    w1 = w0 + timedelta(hours=2)
    moved: dict[str, set[str]] = {}
    for key, v in truth["depth"][day].items():
        if any(_us(w0) <= us < _us(w1) for us, _, _ in v["changes"]):
            qm, queue = key.split("/", 1)
            moved.setdefault(qm, set()).add(queue)
    qm = max(sorted(moved), key=lambda q: len(moved[q]))

    def when(o) -> datetime:  # a call without High Res Time (MQCONNX): its printed time, UTC here
        if o.high_res_time is None:
            return o.operation_time.replace(tzinfo=timezone.utc)
        return _EPOCH + timedelta(microseconds=o.high_res_time)

    rebuilt = rebuild([o for o in ops if not (o.qmgr == qm and w0 <= when(o) < w1)], captures=captures, stats=stats)
    assert {(g.qmgr, g.queue) for g in rebuilt.gaps} == {(qm, q) for q in moved[qm]}
    for g in rebuilt.gaps:
        assert g.reason.startswith("no trace for part of the day: ") and rebuilt.line(qm, g.queue) == []
        spans = [s.split(" ", 1)[0].split("-") for s in g.reason.split(": ", 1)[1].split("; ")[:-1]]
        assert spans and all("10:00:00" <= a < b <= "12:00:00" for a, b in spans), g.reason
    for key, v in truth["depth"][day].items():
        if (key.split("/", 1)[0], key.split("/", 1)[1]) not in {(g.qmgr, g.queue) for g in rebuilt.gaps}:
            assert _as_truth(rebuilt.line(*key.split("/", 1))) == v["changes"], key


def test_a_consumer_untraced_for_two_hours_names_a_window_not_a_rising_line(estate):
    """The first day, with the first consumer connection (by id) whose queue moved between 10:00 and 12:00 left out
    of the trace for those two hours. The arrivals are still traced, so the rebuilt line would rise there while
    MQ's statistics show the queue drained each half hour; the consumer got the queue before 10:00 and after 12:00
    and has no traced call inside: the queue is a gap naming spans inside 10:00-12:00, and every other queue keeps
    its exact line."""
    _, truth, days = estate
    day = min(days)
    ops, captures, stats = days[day]
    w0 = datetime.fromisoformat(f"{day}T10:00:00+00:00")
    w1 = w0 + timedelta(hours=2)
    opened = sorted((o for o in ops if o.application_name == "consumer" and o.operation == "MQOPEN"),
                    key=lambda o: o.connection)
    o = next(o for o in opened if any(_us(w0) <= us < _us(w1) for us, d, _ in
                                      truth["depth"][day][f"{o.qmgr}/{o.object_name}"]["changes"]))
    qm, queue, conn = o.qmgr, o.object_name, o.connection
    kept = [x for x in ops if not (x.connection == conn and x.high_res_time is not None
                                   and _us(w0) <= x.high_res_time < _us(w1))]
    rebuilt = rebuild(kept, captures=captures, stats=stats)
    assert [(g.qmgr, g.queue) for g in rebuilt.gaps] == [(qm, queue)] and rebuilt.line(qm, queue) == []
    reason = rebuilt.gaps[0].reason
    assert "a connection that changes the queue before and after it has no traced call" in reason
    spans = [s.split(" ", 1)[0].split("-") for s in reason.split(": ", 1)[1].split("; ")[:-1]]
    assert spans and all("10:00:00" <= a < b <= "12:00:00" for a, b in spans), reason
    for key, v in truth["depth"][day].items():
        if key != f"{qm}/{queue}":
            assert _as_truth(rebuilt.line(*key.split("/", 1))) == v["changes"], key
    assert reconcile(rebuilt, captures, stats) == []
