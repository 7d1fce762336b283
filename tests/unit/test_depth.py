"""clwl.analyses.depth on hand-made trace rows (mappings with bronze.activity_operations' columns).

Each test's expected values are worked out in its docstring from the rules of the module's docstring (docs/depth.md):
an arrival is an application's put MQ resolved to a local queue (or to another queue manager: its transmission queue)
or a receiving agent's put; a removal is a non-browse MQGET; a call under syncpoint counts at its own time once its
connection commits, not at all when it backs out; the oldest message is followed by MsgId, else first in first out
within priority (flagged).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from clwl.analyses.depth import (
    CAUSE_MID_UNIT,
    CAUSE_UNTRACED_GET,
    CAUSE_UNTRACED_PUT,
    Capture,
    StatsInterval,
    rebuild,
    reconcile,
)

DAY = datetime(2026, 11, 20, tzinfo=timezone.utc)
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def at(hms: str) -> datetime:
    h, m, s = (float(x) for x in hms.split(":"))
    return DAY + timedelta(hours=h, minutes=m, seconds=s)


class Conn:
    """One traced connection: its rows in call order."""

    def __init__(self, qmgr: str, name: str, *, channel_type: str | None = None, channel: str | None = None):
        self.qmgr, self.name, self.channel_type, self.channel = qmgr, name, channel_type, channel
        self.rows: list[dict] = []

    def _row(self, op: str, hms: str, **kw) -> "Conn":
        self.rows.append(dict(connection=f"{self.qmgr}/{self.name}", seq_number=0, operation_index=len(self.rows),
                              operation=op, comp_code=kw.pop("comp_code", "MQCC_OK"), qmgr=self.qmgr,
                              application_name=self.name, channel_type=self.channel_type, channel_name=self.channel,
                              api_environment="MQXE_MCA" if self.channel_type else "MQXE_OTHER",
                              high_res_time=(at(hms) - _EPOCH) // timedelta(microseconds=1), **kw))
        return self

    def put(self, hms: str, mid: str, dest: str, queue: str, xmitq: str | None = None, priority: int = 0,
            options: int = 0x4) -> "Conn":
        fields = {"Resolved_Q_mgr": dest, "Resolved_Q_Name": queue, "Priority": str(priority)}
        if xmitq:
            fields["Resolved_local_Q_name"] = xmitq
        return self._row("MQPUT", hms, msg_id=mid, object_name=queue, options=options, fields=fields)

    def get(self, hms: str, mid: str | None, queue: str, *, syncpoint: bool = False, xmitq_mid: str | None = None):
        return self._row("MQGET", hms, msg_id=mid, xmitq_msg_id=xmitq_mid, object_name=queue,
                         options=0x2 if syncpoint else 0x4, fields={})

    def commit(self, hms: str) -> "Conn":
        return self._row("MQCMIT", hms, fields={})

    def back(self, hms: str) -> "Conn":
        return self._row("MQBACK", hms, fields={})


def test_msgids_pair_puts_and_gets_so_the_oldest_age_and_its_putter_are_exact():
    """payapp puts M1 at 10:00:00 and M2 at 10:00:01 to QM1's local Q; the consumer gets M2 at 10:00:02 (by id, out
    of order), then M1 at 10:00:05. Depth 1, 2, 1, 0. After the get of M2 the oldest is M1, arrived 10:00:00: age
    2.0 s, put by payapp, exact. After M1's get the queue is empty: no oldest."""
    app = Conn("QM1", "payapp").put("10:00:00", "M1", "QM1", "Q").put("10:00:01", "M2", "QM1", "Q")
    cons = Conn("QM1", "consumer").get("10:00:02", "M2", "Q").get("10:00:05", "M1", "Q")
    r = rebuild(app.rows + cons.rows)
    line = r.line("QM1", "Q")
    assert [(c.depth, c.delta, c.operation, c.msg_id) for c in line] == [
        (1, 1, "put", "M1"), (2, 1, "put", "M2"), (1, -1, "get", "M2"), (0, -1, "get", "M1")]
    third = line[2]
    assert (third.oldest_msg_id, third.oldest_age_seconds, third.oldest_put_by, third.basis) == (
        "M1", 2.0, "payapp", "exact")
    assert line[3].oldest_msg_id is None and line[3].basis is None
    assert r.gaps == [] and r.start == {("QM1", "Q"): 0}


def test_a_backed_out_get_is_no_removal_and_the_committed_one_counts_at_its_call():
    """M1 put at 10:00:00 (depth 1). The consumer gets it under syncpoint at 10:00:01 and backs out at 10:00:01.5:
    nothing. It gets it again at 10:00:02 and commits at 10:00:03: one removal at 10:00:02 (the call), depth 0."""
    app = Conn("QM1", "payapp").put("10:00:00", "M1", "QM1", "Q")
    cons = (Conn("QM1", "consumer").get("10:00:01", "M1", "Q", syncpoint=True).back("10:00:01.5")
            .get("10:00:02", "M1", "Q", syncpoint=True).commit("10:00:03"))
    line = rebuild(app.rows + cons.rows).line("QM1", "Q")
    assert [(c.at, c.depth) for c in line] == [(at("10:00:00"), 1), (at("10:00:02"), 0)]


def test_gets_without_msgids_take_the_first_message_by_priority_then_arrival_and_say_so():
    """L (priority 0) at 10:00:00, H (priority 5) at 10:00:01, L2 (priority 0) at 10:00:02; two gets traced at LOW
    (no MsgId) at 10:00:03 and 10:00:04. FIFO within priority takes H first, then L: the depth goes 1, 2, 3, 2, 1,
    and after the first get the oldest is L (age 3 s), after the second L2 (age 2 s), both flagged fifo_assumed."""
    app = (Conn("QM1", "app").put("10:00:00", "L", "QM1", "Q").put("10:00:01", "H", "QM1", "Q", priority=5)
           .put("10:00:02", "L2", "QM1", "Q"))
    cons = Conn("QM1", "consumer").get("10:00:03", None, "Q").get("10:00:04", None, "Q")
    line = rebuild(app.rows + cons.rows).line("QM1", "Q")
    assert [c.depth for c in line] == [1, 2, 3, 2, 1]
    assert [(c.oldest_msg_id, c.oldest_age_seconds, c.basis) for c in line[3:]] == [
        ("L", 3.0, "fifo_assumed"), ("L2", 2.0, "fifo_assumed")]


def test_the_start_is_anchored_on_the_first_capture_and_its_messages_have_no_known_age():
    """A capture at 09:00 shows CURDEPTH 3 after one traced put at 08:00 (M1): the day started at 3 - 1 = 2. A get of
    M1 at 09:30 leaves the two older messages: depth 2, oldest of the start depth (age unknown). Two gets without
    MsgId at 09:31 and 09:32 take them (first in first out): depth 1 then 0."""
    app = Conn("QM1", "app").put("08:00:00", "M1", "QM1", "Q")
    cons = Conn("QM1", "consumer").get("09:30:00", "M1", "Q").get("09:31:00", None, "Q").get("09:32:00", None, "Q")
    r = rebuild(app.rows + cons.rows, captures=[Capture("QM1", "Q", at("09:00:00"), 3)])
    assert r.start[("QM1", "Q")] == 2
    line = r.line("QM1", "Q")
    assert [c.depth for c in line] == [3, 2, 1, 0]
    assert (line[1].basis, line[1].oldest_age_seconds, line[1].oldest_msg_id) == ("start_depth", None, None)
    assert r.end_depths()[("QM1", "Q")] == 0
    # the previous day's end wins over the capture
    assert rebuild(app.rows + cons.rows, start={("QM1", "Q"): 5},
                   captures=[Capture("QM1", "Q", at("09:00:00"), 3)]).start[("QM1", "Q")] == 5


def test_a_put_to_another_queue_manager_rises_its_transmission_queue_until_the_sending_agent_gets_it():
    """QM1's app puts M1 at 10:00:00 resolved to QM2 over SYSTEM.CLUSTER.TRANSMIT.QUEUE: that queue goes to 1. QM1's
    cluster-sender agent gets it at 10:00:00.002 (the transmission header's MsgId M1; its own descriptor X1): 0.
    QM2's cluster-receiver agent puts M1 to Q at 10:00:00.005: QM2/Q 1, its oldest put by QM1's app. QM2's consumer
    gets it at 10:00:01: 0."""
    xq = "SYSTEM.CLUSTER.TRANSMIT.QUEUE"
    app = Conn("QM1", "app").put("10:00:00", "M1", "QM2", "Q", xmitq=xq)
    sdr = (Conn("QM1", "amqrmppa", channel_type="MQCHT_CLUSSDR", channel="TO.QM2")
           .get("10:00:00.002", "X1", xq, syncpoint=True, xmitq_mid="M1").commit("10:00:00.003"))
    rcv = Conn("QM2", "amqrmppa", channel_type="MQCHT_CLUSRCVR", channel="TO.QM2").put(
        "10:00:00.005", "M1", "QM2", "Q", options=0x2).commit("10:00:00.006")
    cons = Conn("QM2", "consumer").get("10:00:01", "M1", "Q")
    r = rebuild(app.rows + sdr.rows + rcv.rows + cons.rows)
    assert [(c.depth, c.operation, c.application) for c in r.line("QM1", xq)] == [
        (1, "put", "app"), (0, "agent_get", "TO.QM2")]
    arrived = r.line("QM2", "Q")
    assert [c.depth for c in arrived] == [1, 0] and arrived[0].operation == "agent_put"
    assert (arrived[0].oldest_put_by, arrived[0].oldest_age_seconds) == ("app", 0.0)


def test_missing_trace_is_a_gap_not_a_line():
    """QM9 is expected but has no row: a gap naming it. QM1's queue R has two arrivals and no traced removal: its
    consumers' trace is missing, a gap naming QM1/R, and R gets no line (not a line rising to 2)."""
    app = Conn("QM1", "app").put("10:00:00", "A", "QM1", "R").put("10:00:01", "B", "QM1", "R")
    r = rebuild(app.rows, expected_qmgrs=["QM1", "QM9"])
    assert [(g.qmgr, g.queue) for g in r.gaps] == [("QM9", None), ("QM1", "R")]
    assert "2 arrival(s) and no traced removal" in r.gaps[1].reason
    assert r.line("QM1", "R") == [] and r.changes == []


def test_reconcile_lists_each_difference_with_its_likely_cause():
    """Q: M1 put 10:00:00, M2 put 10:00:10; the consumer gets M1 under syncpoint at 10:00:20 and commits at 10:00:40;
    start 0, so the line is 1, 2, 1.
    - A capture at 10:00:05 with CURDEPTH 1 agrees: not listed.
    - At 10:00:30 CURDEPTH 2, rebuilt 1: the capture fell inside the unit (10:00:20..10:00:40): mid-unit.
    - At 10:01:00 CURDEPTH 0, rebuilt 1: a get not traced.
    - At 10:02:00 CURDEPTH 3, rebuilt 1: a put not traced.
    - Statistics 10:00:00..10:01:00 with QMinDepth 0 and QMaxDepth 2: the depth before the interval is 0 and inside
      it 1, 2, 1, so min 0 and max 2 agree. With QMaxDepth 3: the rebuilt 2 is lower: a put not traced."""
    app = Conn("QM1", "app").put("10:00:00", "M1", "QM1", "Q").put("10:00:10", "M2", "QM1", "Q")
    cons = Conn("QM1", "consumer").get("10:00:20", "M1", "Q", syncpoint=True).commit("10:00:40")
    r = rebuild(app.rows + cons.rows)
    caps = [Capture("QM1", "Q", at(t), n) for t, n in
            (("10:00:05", 1), ("10:00:30", 2), ("10:01:00", 0), ("10:02:00", 3))]
    stats = [StatsInterval("QM1", "Q", at("10:00:00"), at("10:01:00"), 0, 2),
             StatsInterval("QM1", "Q", at("10:00:00"), at("10:01:00"), 0, 3)]
    diffs = reconcile(r, caps, stats)
    assert [(d.at, d.measure, d.captured, d.rebuilt, d.cause) for d in diffs] == [
        (at("10:00:30"), "CURDEPTH", 2, 1, CAUSE_MID_UNIT),
        (at("10:01:00"), "CURDEPTH", 0, 1, CAUSE_UNTRACED_GET),
        (at("10:02:00"), "CURDEPTH", 3, 1, CAUSE_UNTRACED_PUT),
        (at("10:01:00"), "QMaxDepth", 3, 2, CAUSE_UNTRACED_PUT)]


def test_more_removals_than_the_start_and_the_traced_arrivals_is_a_gap():
    """Start depth 1 (the previous day's end); one traced arrival A at 10:00:00; three gets at 10:00:01, 10:00:02 and
    10:00:03 (A and two without MsgId). The first two empty the queue (1 + 1 = 2 messages); the third finds it
    empty: a put was not traced, so the queue is a gap (its putters' trace missing), not a line clipped at 0."""
    app = Conn("QM1", "app").put("10:00:00", "A", "QM1", "Q")
    cons = Conn("QM1", "consumer").get("10:00:01", "A", "Q").get("10:00:02", None, "Q").get("10:00:03", None, "Q")
    r = rebuild(app.rows + cons.rows, start={("QM1", "Q"): 1})
    assert [(g.qmgr, g.queue) for g in r.gaps] == [("QM1", "Q")]
    assert "from an empty queue (start depth 1)" in r.gaps[0].reason and r.line("QM1", "Q") == []


def test_the_gauges_are_each_queues_peak_and_the_oldest_messages_greatest_age():
    """gold.queue_depth rows of QM1/Q on 2026-11-20: A arrives 10:00:00 (depth 1, oldest A), B 10:00:01 (2, oldest A),
    A leaves 10:00:05 (1, oldest B), B leaves 10:00:06 (0). The oldest message ages until the next change: A reaches
    5 s (10:00:00 to its removal at 10:00:05), B 5 s too (10:00:01 to 10:00:06); the greatest is 5 s, not the 1 s
    the rows show at their own times. QM2/R: one arrival C at 23:59:00 that stays: it ages to the day's end, 60 s.
    Gauges: Q peak 2, age 5; R peak 1, age 60."""
    from clwl.analyses.metrics import depth_families

    def row(qm, q, seq, hms, depth, arrived):
        return dict(qmgr=qm, queue=q, seq=seq, at=at(hms), depth=depth, oldest_arrived_at=arrived and at(arrived))

    rows = [row("QM1", "Q", 1, "10:00:00", 1, "10:00:00"), row("QM1", "Q", 2, "10:00:01", 2, "10:00:00"),
            row("QM1", "Q", 3, "10:00:05", 1, "10:00:01"), row("QM1", "Q", 4, "10:00:06", 0, None),
            row("QM2", "R", 1, "23:59:00", 1, "23:59:00")]
    peak, age = depth_families(rows, DAY.date())
    assert (peak.name, age.name) == ("clwl_queue_depth_max", "clwl_queue_oldest_age_max_seconds")
    assert peak.samples == [({"qmgr": "QM1", "queue": "Q"}, 2.0), ({"qmgr": "QM2", "queue": "R"}, 1.0)]
    assert age.samples == [({"qmgr": "QM1", "queue": "Q"}, 5.0), ({"qmgr": "QM2", "queue": "R"}, 60.0)]
    assert depth_families([], DAY.date())[0].samples == []


def test_clwl_depth_summary_peak_time_at_or_above_and_the_default_threshold():
    """A line of QM1/Q on 2026-11-20 starting at depth 1 (at midnight): A arrives 10:00:00 (2), B 10:00:10 (3), A
    leaves 10:00:40 (2), B leaves 10:01:00 (1). Threshold 2: at or above from 10:00:00 to 10:01:00, 60 s (the start
    depth 1 is below). Peak 3 at 10:00:10. The default threshold is QDEPTHHI percent of MAXDEPTH rounded up to a
    whole message: 80 % of 5000 is 4000; 33 % of 10 is 3.3, so 4."""
    from clwl.analyses.depth_day import _limit, summarise

    app = Conn("QM1", "app").put("10:00:00", "A", "QM1", "Q").put("10:00:10", "B", "QM1", "Q")
    cons = Conn("QM1", "consumer").get("10:00:40", "A", "Q").get("10:01:00", "B", "Q")
    line = rebuild(app.rows + cons.rows, start={("QM1", "Q"): 1}).line("QM1", "Q")
    s = summarise(line, 1, DAY.date(), 2)
    assert (s["peak"], s["peak_at"], s["above"]) == (3, at("10:00:10"), 60.0)
    assert summarise(line, 1, DAY.date(), None)["above"] is None
    limits = {("QM1", "Q"): (5000, 80), ("QM1", "R"): (10, 33)}
    assert _limit(limits, ("QM1", "Q"), None) == (4000, "QDEPTHHI 80% of MAXDEPTH 5000")
    assert _limit(limits, ("QM1", "R"), None)[0] == 4
    assert _limit(limits, ("QM1", "Q"), 7) == (7, "--threshold")
    assert _limit(limits, ("QM9", "Q"), None)[0] is None


# ----------------------------------------------------------------------------------------------------------
# statistics intervals (QMinDepth / QMaxDepth): agreement, differences, and a window the trace misses


def _half_hours(qmgr: str, queue: str, *spans: tuple[str, int, int]) -> list[StatsInterval]:
    """MQ's statistics intervals of 30 minutes from each ``(start, QMinDepth, QMaxDepth)``."""
    return [StatsInterval(qmgr, queue, at(t), at(t) + timedelta(minutes=30), lo, hi) for t, lo, hi in spans]


def test_statistics_intervals_that_agree_give_no_difference():
    """QM1/Q: M1..M3 put at 10:00, 10:10, 10:40; the consumer gets each 5 minutes later (10:05, 10:15, 10:45); start
    0. The line is 1, 0, 1, 0, 1, 0. MQ's intervals [10:00, 10:30): it began at 0 and went to 1: QMinDepth 0,
    QMaxDepth 1; [10:30, 11:00) the same; [11:00, 11:30): nothing happened, 0 and 0. The rebuilt least and greatest
    depth over each interval (its starting depth and every depth after a change inside it) are the same: no
    difference, and no gap (every interval MQ saw move has traced changes)."""
    app = Conn("QM1", "app").put("10:00:00", "M1", "QM1", "Q").put("10:10:00", "M2", "QM1", "Q") \
        .put("10:40:00", "M3", "QM1", "Q")
    cons = Conn("QM1", "consumer").get("10:05:00", "M1", "Q").get("10:15:00", "M2", "Q").get("10:45:00", "M3", "Q")
    stats = _half_hours("QM1", "Q", ("10:00:00", 0, 1), ("10:30:00", 0, 1), ("11:00:00", 0, 0))
    r = rebuild(app.rows + cons.rows, stats=stats)
    assert r.gaps == [] and [c.depth for c in r.line("QM1", "Q")] == [1, 0, 1, 0, 1, 0]
    assert reconcile(r, (), stats) == []


def test_gets_by_an_application_not_traced_are_differences_with_their_cause():
    """QM1/Q: M1, M2, M3 put at 10:00, 10:01, 10:02 (traced); the traced consumer gets M1 at 10:10 and M3 at 10:20;
    another application, not traced, got M2 at 10:05. What MQ saw: 1, 2, 3, 2 (10:05), 1 (10:10), 0 (10:20), so
    [10:00, 10:30) QMinDepth 0 / QMaxDepth 3 and [10:30, 11:00) 0 / 0. The rebuild lacks the 10:05 get: 1, 2, 3,
    2 (10:10), 1 (10:20). First interval: 0 / 3, the same. Second: it stays at 1, so QMinDepth 0 against 1 and
    QMaxDepth 0 against 1: rebuilt higher, a get not traced, both listed at the interval's end (11:00). Not a gap:
    MQ saw no movement in the second interval (nothing was missed then), and in the first the trace has changes and
    the offset did not change."""
    app = Conn("QM1", "app").put("10:00:00", "M1", "QM1", "Q").put("10:01:00", "M2", "QM1", "Q") \
        .put("10:02:00", "M3", "QM1", "Q")
    cons = Conn("QM1", "consumer").get("10:10:00", "M1", "Q").get("10:20:00", "M3", "Q")
    stats = _half_hours("QM1", "Q", ("10:00:00", 0, 3), ("10:30:00", 0, 0))
    r = rebuild(app.rows + cons.rows, stats=stats)
    assert r.gaps == [] and [c.depth for c in r.line("QM1", "Q")] == [1, 2, 3, 2, 1]
    assert [(d.at, d.measure, d.captured, d.rebuilt, d.cause) for d in reconcile(r, (), stats)] == [
        (at("11:00:00"), "QMinDepth", 0, 1, CAUSE_UNTRACED_GET),
        (at("11:00:00"), "QMaxDepth", 0, 1, CAUSE_UNTRACED_GET)]


def _every_ten_minutes() -> list[dict]:
    """QM1/Q put at 10:00, 10:10, ... 11:50 and got 2 minutes later; QM2/P put a minute past and got at 4 past."""
    rows = []
    for qm, queue, put_s, get_s in (("QM1", "Q", 0, 2), ("QM2", "P", 1, 4)):
        app, cons = Conn(qm, "app"), Conn(qm, "consumer")
        for i in range(12):
            h, m = 10 + i // 6, (i % 6) * 10
            app.put(f"{h}:{m + put_s}:00", f"{queue}{i}", qm, queue)
            cons.get(f"{h}:{m + get_s}:00", f"{queue}{i}", queue)
        rows += app.rows + cons.rows
    return rows


def test_a_window_without_trace_is_a_named_gap_not_a_flat_or_rising_line():
    """Two queue managers, each queue put to every 10 minutes from 10:00 to 11:50 and got soon after, so MQ's four
    30-minute intervals from 10:00 each show QMinDepth 0 / QMaxDepth 1.

    QM1/Q (put at :00, got at :02): QM1's whole trace stops 10:30-11:30 (those rows are missing). The rebuild has
    no change of Q in [10:30, 11:00) and [11:00, 11:30) while MQ saw it move (0 to 1): a window with no trace, the
    queue manager silent; a flat 0 there would be wrong. One gap, 10:30:00-11:30:00, two intervals.

    QM2/P (put at :01, got at :04): only the consumer's trace stops 10:30-11:30. The traced puts go on, so the
    rebuild would rise 1, 2, 3 in [10:30, 11:00) (least 0, greatest 3: off MQ's 0 / 1 by (0, 2), before (0, 0)) and
    4, 5, 6 in [11:00, 11:30) (3 / 6: off by (3, 5)); the consumer got P before 10:30 and after 11:30 and has no
    traced call inside either interval: both are in the window, one gap 10:30:00-11:30:00. In [11:30, 12:00) the
    consumer is traced again: the carried offset there is no further window. Neither queue has a line."""
    rows = _every_ten_minutes()
    lost = (at("10:30:00") - _EPOCH) // timedelta(microseconds=1), (at("11:30:00") - _EPOCH) // timedelta(
        microseconds=1)
    rows = [r for r in rows if not (lost[0] <= r["high_res_time"] < lost[1]
                                    and (r["qmgr"] == "QM1" or r["application_name"] == "consumer"))]
    stats = [st for qm, queue in (("QM1", "Q"), ("QM2", "P")) for st in _half_hours(
        qm, queue, ("10:00:00", 0, 1), ("10:30:00", 0, 1), ("11:00:00", 0, 1), ("11:30:00", 0, 1))]
    r = rebuild(rows, stats=stats)
    assert [(g.qmgr, g.queue) for g in r.gaps] == [("QM1", "Q"), ("QM2", "P")]
    q, p = (g.reason for g in r.gaps)
    assert "10:30:00-11:30:00 (2 statistics interval(s): the depth moved but the trace holds no put or get of the " \
           "queue: the queue manager's trace is silent)" in q
    assert "10:30:00-11:30:00 (2 statistics interval(s): a connection that changes the queue before and after it " \
           "has no traced call)" in p
    assert r.changes == [] and reconcile(r, (), stats) == []
    # with the whole trace, both queues have their line and agree with every interval
    full = rebuild(_every_ten_minutes(), stats=stats)
    assert full.gaps == [] and len(full.changes) == 48 and reconcile(full, (), stats) == []


def test_a_queue_moving_in_the_statistics_with_nothing_traced_all_day_is_a_gap():
    """QM1 is traced (an application puts and gets Q) but nothing of QM1/R is: MQ's statistics show R moving in
    [10:00, 10:30) (QMinDepth 0, QMaxDepth 3) and still in [10:30, 11:00) (2 / 2). R has no traced change, so no
    line could be drawn; it is named as a gap from the statistics (one interval moved, the first 10:00-10:30). QM2
    has no trace at all and is not expected: its statistics name QM2/S. Q, traced and agreeing, keeps its line."""
    app = Conn("QM1", "app").put("10:00:00", "M1", "QM1", "Q").get("10:01:00", "M1", "Q")
    stats = (_half_hours("QM1", "R", ("10:00:00", 0, 3), ("10:30:00", 2, 2))
             + _half_hours("QM1", "Q", ("10:00:00", 0, 1)) + _half_hours("QM2", "S", ("10:00:00", 1, 4)))
    r = rebuild(app.rows, stats=stats)
    assert [(g.qmgr, g.queue) for g in r.gaps] == [("QM1", "R"), ("QM2", "S")]
    assert r.gaps[0].reason == ("MQ's statistics show the depth moving in 1 interval(s) (the first 10:00:00-10:30:00) "
                                "but the trace holds no put or get of the queue all day: the trace of the "
                                "applications (or channel agents) that use it is missing")
    assert r.gaps[1].reason.endswith("but no activity trace from this queue manager on the day")
    assert [c.depth for c in r.line("QM1", "Q")] == [1, 0] and reconcile(r, (), stats) == []
