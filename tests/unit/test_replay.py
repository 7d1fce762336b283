"""The replay of a sending queue manager (clwl/engine/replay.py): time-ordered configuration, re-allocation, holds."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from clwl.engine.algorithm import Request
from clwl.engine.model import ClusterChannel, ClusterView, QmgrAttributes, QueueInstance
from clwl.engine.replay import PutEvent, Snapshot, replay, timeline_from_captures
from clwl.engine.router import Router
from clwl.parse.mqsc import parse_mqsc_file
from clwl.parse.puts import parse_puts_file
from clwl.parse.rest import parse_rest_file

ROOT = Path(__file__).resolve().parents[2]
LANDING = ROOT / "samples" / "landing"
T0 = datetime(2026, 11, 20, 6, 0, tzinfo=timezone.utc)
CL = frozenset({"CL1"})


def view(states: dict[str, str], weights: dict[str, int] | None = None) -> ClusterView:
    weights = weights or {}
    chans = tuple(ClusterChannel(f"TO.{q}", q, CL, state=s, clwlwght=weights.get(q, 50)) for q, s in states.items())
    inst = tuple(QueueInstance("Q1", q, CL, defbind="NOTFIXED") for q in states)
    return ClusterView(QmgrAttributes("QM1"), chans, inst,
                       local_receivers=(ClusterChannel("TO.QM1", "QM1", CL, deftype="CLUSRCVR"),))


def ev(i: int, minutes: int, **kw) -> PutEvent:
    return PutEvent(f"{i:048X}", T0 + timedelta(minutes=minutes), "Q1", **kw)


def test_replay_agrees_with_route_on_one_configuration():
    """With one snapshot and not-fixed messages, the replay is exactly `clwl route --count N`: the same
    Router, the same state carried from message to message (weights 80/50/20: an uneven sequence)."""
    v = view({"QM2": "RUNNING", "QM3": "INACTIVE", "QM4": "RUNNING"}, {"QM2": 80, "QM4": 20})
    expected = [r.qmgr for r in Router(v).route_many(Request("Q1"), 40)]
    rows = list(replay("QM1", [Snapshot(T0, v)], [ev(i, i) for i in range(40)]))
    assert [r.final_qmgr for r in rows] == expected
    assert all(r.config_time == T0 and not r.held_from for r in rows)


def test_retrying_channel_holds_only_what_must_stay_and_moves_the_rest():
    """002: when a channel stops or retries, eligible waiting messages are re-driven, ineligible ones stay.

    06:00 both TO.QM2 and TO.QM3 are RETRYING (tier 3 of steps 6-9 for both): messages still go to one of
    them (step 12 alternates QM2, QM3, ...) and wait. 07:00 TO.QM2 is RUNNING again, TO.QM3 still RETRYING:
    QM2's waiting messages are delivered at 07:00; QM3's eligible ones are re-driven: step 6 keeps only
    TO.QM2 now, so they move (re-allocated once, delivered at 07:00). The bind-on-open message bound to QM3
    (zero AccountingToken) stays, held until the end."""
    tl = [Snapshot(T0, view({"QM2": "RETRYING", "QM3": "RETRYING"})),
          Snapshot(T0 + timedelta(hours=1), view({"QM2": "RUNNING", "QM3": "RETRYING"}))]
    events = [ev(1, 1), ev(2, 2), ev(3, 3, bind="open", open_handle="h1"), ev(4, 4)]
    rows = {r.msg_id[-1]: r for r in replay("QM1", tl, events)}
    # Routing at put time (state from zero, weight 50: +20 per choice): 1 -> QM2 (tie, name; DSF 20, DSN 1);
    # 2 -> QM3 (0 < 20; DSF 20, DSN 2); 3 opens handle h1 -> tie at 20, DSN 1 < 2 -> QM2 (DSF 40, DSN 3);
    # 4 -> QM3 (20 < 40).
    assert [rows[k].qmgr for k in "1234"] == ["QM2", "QM3", "QM2", "QM3"]
    t1 = T0 + timedelta(hours=1)
    assert rows["1"].final_qmgr == "QM2" and rows["1"].released_at == t1 and rows["1"].reallocations == 0
    assert rows["3"].final_qmgr == "QM2" and rows["3"].released_at == t1  # bound to QM2, delivered with it
    for k in "24":
        assert rows[k].final_qmgr == "QM2" and rows[k].reallocations == 1 and rows[k].released_at == t1
        assert not rows[k].held


def test_bound_message_stays_behind_retrying_channel():
    tl = [Snapshot(T0, view({"QM2": "RUNNING", "QM3": "RUNNING"})),
          Snapshot(T0 + timedelta(hours=1), view({"QM2": "RUNNING", "QM3": "RETRYING"})),
          Snapshot(T0 + timedelta(hours=2), view({"QM2": "RUNNING", "QM3": "RETRYING"}))]
    # Bind on open at 06:01 -> QM2 (name order); a second handle at 06:02 -> QM3; its next puts after
    # 07:00 go to QM3 although it is retrying (bound), and stay: not re-allocatable.
    events = [ev(1, 1, bind="open", open_handle="a"), ev(2, 2, bind="open", open_handle="b"),
              ev(3, 70, bind="open", open_handle="b"), ev(4, 75, target_qmgr="QM3")]
    rows = {r.msg_id[-1]: r for r in replay("QM1", tl, events)}
    assert rows["2"].final_qmgr == "QM3" and not rows["2"].held_from
    for k, why in (("3", "bind-on-open"), ("4", "named-qmgr")):
        r = rows[k]
        assert r.held and r.final_qmgr == "QM3" and r.hold_state == "RETRYING"
        assert (r.stay_reason, r.stay_detail) == ("not-reallocatable", why)


def test_still_most_favourable_when_it_is_the_only_instance():
    tl = [Snapshot(T0, view({"QM3": "RETRYING"})), Snapshot(T0 + timedelta(hours=1), view({"QM3": "RETRYING"}))]
    (row,) = list(replay("QM1", tl, [ev(1, 5)]))
    assert row.held and row.reallocatable and row.stay_reason == "still-most-favourable"
    assert "only eligible instance" in row.stay_detail


def test_weight_change_in_a_later_capture_resets_factors():
    """Reference step 12: factors reset to zero when a CLUSRCVR's workload attributes change. Before 07:00
    QM2 has been chosen 3 times (DSF 60) and QM3 2 times (DSF 40); at 07:00 QM2's weight changes to 80:
    both factors go to 0, DestSeqNumbers stay (QM2 5 > QM3 4), so the next message goes to QM3 (equal
    factors, lower DestSeqNumber), then QM2 (12.5 vs 20)..."""
    tl = [Snapshot(T0, view({"QM2": "RUNNING", "QM3": "RUNNING"})),
          Snapshot(T0 + timedelta(hours=1), view({"QM2": "RUNNING", "QM3": "RUNNING"}, {"QM2": 80}))]
    events = [ev(i, i) for i in range(5)] + [ev(10 + i, 61 + i) for i in range(3)]
    rows = list(replay("QM1", tl, events))
    assert [r.final_qmgr for r in rows[:5]] == ["QM2", "QM3", "QM2", "QM3", "QM2"]
    assert [r.final_qmgr for r in rows[5:]] == ["QM3", "QM2", "QM2"]


# samples/README.md, "Deliberate defects": the captures of QM1 and QM5 with problems, and how many. D1 (QM5's
# 21:00 channel status) ends in a cut-off record, quarantined; its 4 complete records are replayed, as the pipeline
# does. D3 (QM1's 12:00 configuration, an unknown attribute) is accepted whole: no problem.
CAPTURE_PROBLEMS = {"2026-11-20/QM5/chstatus_210000.mqsc": 1}


def _captures(qm: str):
    """``qm``'s captures (config and chstatus, runmqsc or REST) in time order. Only names that are no capture are
    skipped; a capture the parser fails on fails the test (nothing is dropped silently), and so does a capture
    with problems other than those listed above."""
    out = []
    for day in sorted(LANDING.iterdir()):
        for f in sorted((day / qm).glob("*")):
            if not f.name.startswith(("config_", "chstatus_")):
                continue
            t = datetime.strptime(day.name + f.stem.split("_")[1], "%Y-%m-%d%H%M%S").replace(tzinfo=timezone.utc)
            cap = parse_rest_file(f) if f.suffix == ".json" else parse_mqsc_file(f)
            name = f.relative_to(LANDING).as_posix()
            assert len(cap.problems) == CAPTURE_PROBLEMS.get(name, 0), (name, cap.problems)
            out.append((t, {"CHSTATUS"} if f.name.startswith("chstatus") else set(), cap.records))
    return out


@pytest.mark.parametrize("qm", ["QM1", "QM5"])
def test_samples_replay_matches_the_generators_independent_routing(qm):
    """samples/make_samples.py routes every put with its own, separately written replay of the algorithm
    and records the destination counts in facts.json; ours must give the same counts per day and queue, and
    agree with every observed destination in the put records."""
    facts = json.loads((ROOT / "samples" / "facts.json").read_text())["traffic"]
    tl = timeline_from_captures(qm, _captures(qm))
    for day in sorted(LANDING.iterdir()):
        events = []
        for f in sorted((day / qm).glob("puts*.csv")):
            recs, _ = parse_puts_file(f)
            events += [PutEvent(r.msg_id, r.put_time, r.queue, r.target_qmgr, r.bind, r.open_handle or "",
                                r.group_id or "", r.logical_order, r.from_cluster_channel, r.pcf, r.length,
                                r.observed_qmgr) for r in recs]
        events.sort(key=lambda e: e.put_time)
        rows = list(replay(qm, tl, events))
        counts = Counter((r.queue, r.final_qmgr) for r in rows)
        want = facts[f"{qm} {day.name}"]
        assert len(rows) == want["puts"]
        assert dict(counts) == {(q, d): n for q, per in want["by_queue_and_destination"].items()
                                for d, n in per.items()}
        assert all(r.agrees for r in rows if r.observed_qmgr)


def test_a_message_reallocated_away_did_not_stay():
    """002: "re-allocated messages leave the transmission queue"; only those not eligible, or for which the
    stopped channel is still the most favourable destination, stay. The replay marks exactly those with a
    stay reason (what stuck_messages keeps): in the scenario of
    test_retrying_channel_holds_only_what_must_stay_and_moves_the_rest, messages 2 and 4 waited behind TO.QM3
    and were re-allocated to QM2 at 07:00: no stay reason. Messages 1 and 3 waited behind TO.QM2, which was
    (tied) the most favourable until it ran again at 07:00: they stayed (1 eligible: step 12; 3 bound on open)."""
    tl = [Snapshot(T0, view({"QM2": "RETRYING", "QM3": "RETRYING"})),
          Snapshot(T0 + timedelta(hours=1), view({"QM2": "RUNNING", "QM3": "RETRYING"}))]
    events = [ev(1, 1), ev(2, 2), ev(3, 3, bind="open", open_handle="h1"), ev(4, 4)]
    rows = {r.msg_id[-1]: r for r in replay("QM1", tl, events)}
    for k in "24":
        assert rows[k].reallocations == 1 and rows[k].held_from == rows[k].put_time
        assert rows[k].stay_reason is None and rows[k].stay_detail is None and not rows[k].stayed
    assert rows["1"].stayed and rows["1"].stay_reason == "still-most-favourable"
    assert "least recently used (step 12)" == rows["1"].stay_detail
    assert rows["3"].stayed and (rows["3"].stay_reason, rows["3"].stay_detail) == ("not-reallocatable",
                                                                                   "bind-on-open")


def test_reallocated_to_a_channel_that_moves_nothing_either_waits_there_with_its_reason():
    """Three instances, all channels RETRYING at 06:00 (tier 3 of steps 6-9 for all: step 12 alternates QM2,
    QM3, QM4). At 07:00 TO.QM3 is STOPPED (tier 4) while TO.QM2 and TO.QM4 are still RETRYING (tier 3): QM3's
    waiting message is re-driven, steps 6-9 keep QM2 and QM4 (the best tier left), so it moves to one of
    them and waits there: it stays, as the most favourable destination, in that channel's state (RETRYING),
    never with an empty reason."""
    tl = [Snapshot(T0, view({"QM2": "RETRYING", "QM3": "RETRYING", "QM4": "RETRYING"})),
          Snapshot(T0 + timedelta(hours=1), view({"QM2": "RETRYING", "QM3": "STOPPED", "QM4": "RETRYING"}))]
    rows = {r.msg_id[-1]: r for r in replay("QM1", tl, [ev(1, 1), ev(2, 2), ev(3, 3)])}
    assert [rows[k].qmgr for k in "123"] == ["QM2", "QM3", "QM4"]
    moved = rows["2"]
    assert moved.reallocations == 1 and moved.final_qmgr in ("QM2", "QM4") and moved.held
    assert moved.held_from == T0 + timedelta(hours=1) and moved.hold_state == "RETRYING"
    assert moved.stay_reason == "still-most-favourable" and moved.stay_detail and moved.stayed
    assert all(r.held and r.stayed for r in rows.values())


def test_a_put_that_failed_is_neither_reallocatable_nor_not():
    """A put that fails (2268: every instance PUT(DISABLED); 2085: unknown queue) puts no message: the
    replay's reallocatable is None, not True."""
    v = view({"QM2": "RUNNING"})
    rows = list(replay("QM1", [Snapshot(T0, v)], [PutEvent("A" * 48, T0 + timedelta(minutes=1), "NO.SUCH.Q")]))
    assert rows[0].error == "MQRC_UNKNOWN_OBJECT_NAME" and rows[0].reallocatable is None


def test_agreement_compares_the_traced_put_with_the_first_destination():
    """A put record's observed destination is where the message arrived: the replay's final destination. An
    activity-traced MQPUT records MQ's choice at the put, before any re-allocation (which happens later inside the
    queue manager and is no MQI call): the replay's first destination."""
    from datetime import datetime, timezone

    from clwl.engine.replay import ReplayRow

    t = datetime(2026, 11, 20, 10, tzinfo=timezone.utc)

    def row(observed, at_put, observed_xmitq=None):
        return ReplayRow("M1", t, "Q1", None, "notfixed", 10, "QM3", "TO.QM3", "SYSTEM.CLUSTER.TRANSMIT.QUEUE",
                         "cluster", "12", True, None, "", None, None, t, observed, reallocations=1,
                         final_qmgr="QM2", final_channel="TO.QM2", final_xmitq="SYSTEM.CLUSTER.TRANSMIT.QUEUE",
                         observed_xmitq=observed_xmitq, observed_at_put=at_put)

    assert row("QM2", False).agrees is True and row("QM3", False).agrees is False  # arrived: final
    assert row("QM3", True).agrees is True and row("QM2", True).agrees is False  # traced: first
    assert row("QM3", True, "XQ.OTHER").agrees is False  # same queue manager, another transmission queue
    assert row(None, True).agrees is None
