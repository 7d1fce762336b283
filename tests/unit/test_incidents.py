"""The incident rules (clwl/analyses/incidents.py, docs/diagnosis.md "Incidents") on hand-made days of channel trouble, and
the application behind a put (clwl.analyses.incidents.application_of). No Spark, no lake.

The estate of every test: senders QM1, QM5 and QM6, each with one cluster-sender channel TO.<qmgr> per receiving
queue manager QM2, QM3 and QM4 (the channels that carry their messages: the workload channels). Times are on
2026-11-20, UTC. Each test's docstring derives the expected incidents from the rules:

1. one channel's trouble spans merge where their half-open spans [start, end) intersect, transitively;
2. sender side: one chain of a sender's windows covers every workload channel of it (at least two);
3. receiver side: one chain of windows to a receiver holds channels of at least two senders;
4. every window left is a channel incident; when 2 and 3 both apply, the sender wins unless every channel of its
   chain is in a receiver chain too.
"""

from __future__ import annotations

from datetime import datetime, timezone

from clwl.analyses.incidents import (
    CHANNEL,
    RECEIVER,
    SENDER,
    Delay,
    Trouble,
    application_of,
    channel_windows,
    incidents,
    overlaps,
)

WORKLOAD = {s: {"TO.QM2", "TO.QM3", "TO.QM4"} for s in ("QM1", "QM5", "QM6")}


def at(hh: int, mm: int = 0) -> datetime:
    return datetime(2026, 11, 20, hh, mm, tzinfo=timezone.utc)


def down(sender: str, receiver: str, start: datetime, end: datetime) -> Trouble:
    return Trouble(sender, f"TO.{receiver}", receiver, start, end)


def test_two_senders_losing_one_receiver_in_overlapping_windows_are_one_receiver_incident():
    """QM1 -> QM3 is down 14:00-17:00 and QM5 -> QM3 13:52-15:00: the spans intersect (13:52 < 17:00 and
    14:00 < 15:00), two senders, one receiver: rule 3, one incident at QM3 over [13:52, 17:00). Neither sender lost
    TO.QM2 or TO.QM4, so rule 2 does not apply."""
    found = incidents([down("QM1", "QM3", at(14), at(17)), down("QM5", "QM3", at(13, 52), at(15))], WORKLOAD)
    assert len(found) == 1
    inc = found[0]
    assert (inc.side, inc.subject, inc.start, inc.end) == (RECEIVER, "QM3", at(13, 52), at(17))
    assert inc.senders == ["QM1", "QM5"]
    assert inc.headline == ("QM3 unreachable from QM1 and QM5, 13:52–17:00: look at QM3: its listener, host, or the "
                            "network to it")


def test_a_sender_losing_every_workload_channel_together_is_one_sender_incident():
    """QM5's TO.QM2 10:00-11:00, TO.QM3 10:00-12:00 and TO.QM4 10:30-12:00 chain into one window 10:00-12:00 that
    covers all three of its workload channels: rule 2, one incident at QM5's side. No other sender lost QM2, QM3
    or QM4 (rule 3 finds nothing)."""
    found = incidents([down("QM5", "QM2", at(10), at(11)), down("QM5", "QM3", at(10), at(12)),
                       down("QM5", "QM4", at(10, 30), at(12))], WORKLOAD)
    assert [(i.side, i.subject, i.start, i.end) for i in found] == [(SENDER, "QM5", at(10), at(12))]
    assert found[0].headline.startswith("QM5 lost all 3 cluster channels at 10:00 (10:00–12:00, to QM2, QM3 and "
                                        "QM4): look at QM5's side")


def test_a_sender_losing_two_of_three_channels_is_two_channel_incidents():
    """QM5 loses TO.QM2 and TO.QM3 at 10:00 but TO.QM4 keeps running: rule 2 needs every workload channel, so no
    sender incident; one sender per receiver, so no receiver incident (rule 3): two channel incidents (rule 4)."""
    found = incidents([down("QM5", "QM2", at(10), at(11)), down("QM5", "QM3", at(10), at(12))], WORKLOAD)
    assert [(i.side, i.channels) for i in found] == [(CHANNEL, [("QM5", "TO.QM2")]),
                                                     (CHANNEL, [("QM5", "TO.QM3")])]
    assert found[1].headline == ("QM5 → QM3 over TO.QM3 not moving messages, 10:00–12:00: look at that channel: "
                                 "DISPLAY CHSTATUS(TO.QM3) on QM5 and its receiver on QM3")


def test_windows_that_only_touch_are_disjoint():
    """QM1 -> QM3 09:00-10:00 and QM5 -> QM3 10:00-11:00: [09:00, 10:00) and [10:00, 11:00) do not intersect (the
    first ends where the second starts), so no chain holds two senders: two channel incidents, in start order."""
    assert not overlaps(at(9), at(10), at(10), at(11))
    found = incidents([down("QM5", "QM3", at(10), at(11)), down("QM1", "QM3", at(9), at(10))], WORKLOAD)
    assert [(i.side, i.senders, i.start) for i in found] == [(CHANNEL, ["QM1"], at(9)), (CHANNEL, ["QM5"], at(10))]


def test_overlap_chains_transitively():
    """QM1 -> QM3 09:00-10:00, QM5 -> QM3 09:30-11:00, QM6 -> QM3 10:45-12:00: the first and the last never meet,
    but each meets the middle one, so the chain is one: a receiver incident at QM3 over [09:00, 12:00) with three
    senders. One channel's own spans chain the same way (rule 1): 09:00-09:20 and 09:10-09:40 of QM1 -> QM2 are one
    window 09:00-09:40."""
    found = incidents([down("QM1", "QM3", at(9), at(10)), down("QM5", "QM3", at(9, 30), at(11)),
                       down("QM6", "QM3", at(10, 45), at(12))], WORKLOAD)
    assert [(i.side, i.subject, i.start, i.end, i.senders) for i in found] == [
        (RECEIVER, "QM3", at(9), at(12), ["QM1", "QM5", "QM6"])]
    windows = channel_windows([down("QM1", "QM2", at(9), at(9, 20)), down("QM1", "QM2", at(9, 10), at(9, 40))])
    assert [(w.start, w.end) for w in windows] == [(at(9), at(9, 40))]


def test_a_chain_reaches_to_the_latest_end_of_any_of_its_spans_not_its_last():
    """Rule 1 on one channel, the chain's reach kept as spans join it: 09:00-12:00, then 09:30-09:45 (inside it),
    then 11:00-11:30. The third does not meet the second (09:45 < 11:00) but meets the chain, whose span is
    [09:00, 12:00): one window 09:00-12:00. A fourth at 12:00-13:00 only touches that end: a window of its own.
    (The chain's span is kept as it grows, so a channel with thousands of spans is chained in one pass.)"""
    windows = channel_windows([down("QM1", "QM2", at(9), at(12)), down("QM1", "QM2", at(9, 30), at(9, 45)),
                               down("QM1", "QM2", at(11), at(11, 30)), down("QM1", "QM2", at(12), at(13))])
    assert [(w.start, w.end) for w in windows] == [(at(9), at(12)), (at(12), at(13))]


def test_a_sender_whose_receivers_are_fine_elsewhere_is_the_sender_side():
    """QM5 loses TO.QM2, TO.QM3 and TO.QM4 10:00-12:00 (rule 2); QM1 -> QM3 is also down 11:00-11:30, so QM3 alone
    is unreachable from two senders (rule 3 for QM5's TO.QM3 window). Not every channel of QM5's chain is in a
    receiver chain (TO.QM2 and TO.QM4 are not), so the sender wins and takes its three windows; QM1's window is
    left alone with no second sender: a channel incident."""
    found = incidents([down("QM5", r, at(10), at(12)) for r in ("QM2", "QM3", "QM4")]
                      + [down("QM1", "QM3", at(11), at(11, 30))], WORKLOAD)
    assert [(i.side, i.subject, i.senders) for i in found] == [(SENDER, "QM5", ["QM5"]),
                                                               (CHANNEL, "QM3", ["QM1"])]


def test_a_sender_whose_every_receiver_is_down_for_others_too_is_explained_by_the_receivers():
    """QM5 loses all three channels 10:00-12:00, and QM1 loses its channels to QM2, QM3 and QM4 as well in the same
    hours: each receiver is unreachable from two senders (rule 3), and every channel of QM5's (and QM1's) chain is
    in a receiver chain, so no sender incident: three receiver incidents, QM2, QM3, QM4."""
    troubles = [down(s, r, at(10), at(12)) for s in ("QM5", "QM1") for r in ("QM2", "QM3", "QM4")]
    found = incidents(troubles, WORKLOAD)
    assert [(i.side, i.subject, i.senders) for i in found] == [(RECEIVER, q, ["QM1", "QM5"])
                                                               for q in ("QM2", "QM3", "QM4")]


def test_an_incident_counts_its_messages_and_names_their_applications():
    """Behind QM1 -> QM3 (14:00-17:00) and QM5 -> QM3 (14:00-16:00): two stuck messages of orders-api (waits 3:00
    and 2:30), one of billing-batch re-allocated away after 0:10, and one of QM1's waits at 18:00, outside every
    window (not channel trouble of this incident: left out). Delayed 3, stuck 2, re-allocated 1, longest 3:00."""
    delays = [Delay("QM1", "TO.QM3", "M1", "APP.ORDERS", at(14), 3 * 3600, stuck=True, application="orders-api"),
              Delay("QM1", "TO.QM3", "M2", "APP.ORDERS", at(14, 30), 2.5 * 3600, stuck=True,
                    application="orders-api"),
              Delay("QM5", "TO.QM3", "M3", "APP.BILLING", at(14, 5), 600, reallocated=True,
                    application="billing-batch"),
              Delay("QM1", "TO.QM3", "M4", "APP.ORDERS", at(18), 60, stuck=True, application="orders-api")]
    (inc,) = incidents([down("QM1", "QM3", at(14), at(17)), down("QM5", "QM3", at(14), at(16))], WORKLOAD, delays)
    assert (inc.delayed, inc.stuck, inc.reallocated, inc.longest_wait) == (3, 2, 1, 3 * 3600)
    assert inc.applications == (("orders-api", 2), ("billing-batch", 1))
    assert inc.queues == ["APP.BILLING", "APP.ORDERS"]
    assert inc.sentence.endswith("On QM1 TO.QM3 and QM5 TO.QM3: 3 messages delayed (2 stuck, 1 re-allocated), the "
                                 "longest wait 3:00; queues APP.BILLING, APP.ORDERS; applications: orders-api 2, "
                                 "billing-batch 1.")


def test_the_application_comes_from_the_column_the_trace_or_the_handle():
    """application:pid:handle (the samples' and clwl generate's form) names the application; an activity trace's
    handle begins with its connection id (48 hex digits), which is no name: its ApplName is taken instead, and the
    put file's application column wins over both."""
    assert application_of("orders-api:2831:1") == "orders-api"
    trace_handle = "414D5143514D31202020202020202020A1B2C3D4E5F60718:101:0.3"
    assert application_of(trace_handle) is None
    assert application_of(trace_handle, traced_appl_name="amqsput                     ") == "amqsput"
    assert application_of("orders-api:2831:1", "amqsput", column="orders") == "orders"
    assert application_of(None) is None and application_of("nohandle") is None


def test_a_one_channel_sender_losing_its_channel_is_a_channel_incident():
    """Rule 2 needs at least two workload channels: QM7 sends over TO.QM2 alone, and it is down 10:00-11:00. Every
    workload channel of QM7 failed, but one channel is no evidence of the sender's side: a channel incident (rule 4),
    whose advice is the channel's DISPLAY CHSTATUS, not QM7's network (issue 39 item 12: the guard
    ``if len(channels) < 2: continue`` in clwl/analyses/incidents.py must not be lost)."""
    found = incidents([Trouble("QM7", "TO.QM2", "QM2", at(10), at(11))], {"QM7": {"TO.QM2"}})
    assert [(i.side, i.subject) for i in found] == [(CHANNEL, "QM2")]


def test_the_verdict_line_names_what_when_stuck_whose_and_where_to_look():
    """Issue 39 item 6: the first screen's line for an incident. QM1 -> QM3 14:00-17:00 and QM5 -> QM3 13:52-15:00
    (a receiver incident at QM3, 13:52-17:00) with 3 stuck (orders-batch 2, billing-batch 1) and 1 re-allocated:
    "QM3 unreachable from QM1 and QM5, 13:52–17:00: 3 stuck (orders-batch 2, billing-batch 1), 1 re-allocated:
    look at QM3: ..."; an incident without messages says no message waited."""
    delays = [Delay("QM1", "TO.QM3", "M1", "Q", at(14), 600, stuck=True, application="orders-batch"),
              Delay("QM1", "TO.QM3", "M2", "Q", at(14, 1), 600, stuck=True, application="orders-batch"),
              Delay("QM5", "TO.QM3", "M3", "Q", at(14, 2), 600, stuck=True, application="billing-batch"),
              Delay("QM5", "TO.QM3", "M4", "Q", at(14, 3), 60, reallocated=True, application="other")]
    (inc,) = incidents([down("QM1", "QM3", at(14), at(17)), down("QM5", "QM3", at(13, 52), at(15))], WORKLOAD, delays)
    assert inc.verdict == ("QM3 unreachable from QM1 and QM5, 13:52–17:00: 3 stuck (orders-batch 2, billing-batch 1), "
                           "1 re-allocated: look at QM3: its listener, host, or the network to it")
    (quiet,) = incidents([down("QM1", "QM2", at(9), at(10))], WORKLOAD)
    assert quiet.verdict.startswith("QM1 → QM2 over TO.QM2 not moving messages, 09:00–10:00: no message waited: ")


def test_a_sender_incident_names_the_transmission_queues_its_channels_use():
    """Issue 39 item 2: QM5's channels take their messages from CLUS.XMITQ.QM2 and CLUS.XMITQ.QM (CLCHNAME), so the
    advice names those, never a template SYSTEM.CLUSTER.TRANSMIT.QUEUE; without the engine's resolution it names
    none. And a centre whose own channel status was unseen during the incident is named as such (item 4)."""
    found = incidents([down("QM5", r, at(10), at(12)) for r in ("QM2", "QM3", "QM4")], WORKLOAD)
    (inc,) = found
    assert "SYSTEM.CLUSTER.TRANSMIT.QUEUE" not in inc.look_at and inc.look_at.endswith("its transmission queues")
    inc.xmitqs = {("QM5", "TO.QM2"): "CLUS.XMITQ.QM2", ("QM5", "TO.QM3"): "CLUS.XMITQ.QM",
                  ("QM5", "TO.QM4"): "CLUS.XMITQ.QM"}
    assert inc.look_at == ("look at QM5's side: its network, its channel initiator, its transmission queues "
                           "CLUS.XMITQ.QM and CLUS.XMITQ.QM2")
    inc.unseen = ("QM5",)
    assert "QM5's own channel status was not captured during it (unseen)" in inc.sentence
