"""The trend rule (clwl/analyses/trend.py, docs/trends.md) over hand-built daily facts: a day is flagged when
|value - mean| / max(std, floor) >= 3 against the previous 14 published days of its baseline (at least 7), with
floor = max(metric floor, 5 % of the mean); each flag names its cause; a lasting change (drift, application)
starts a new baseline, a one-day event (incident, evidence gap) is left out of later windows.

Every expected number below is worked out in the test from those rules."""

from __future__ import annotations

import json
from datetime import date, timedelta

import pytest

from clwl.analyses.trend import Causes, Series, Subject, flag_series, flag_text, flags_of

DATES = [(date(2026, 11, 1) + timedelta(days=i)).isoformat() for i in range(20)]


def share(day: str, value: float, qmgr: str = "QM2", sender: str = "QM1", queue: str = "APP.ORDERS") -> dict:
    return {"run_date": day, "metric": "share_observed", "mq_cluster": "CL1", "queue": queue, "qmgr": qmgr,
            "sending_qmgr": sender, "channel": None, "facet": "observed_destination", "value": value,
            "messages": 600, "detail": None}


def stuck(day: str, value: float) -> dict:
    return {"run_date": day, "metric": "stuck", "mq_cluster": None, "queue": None, "qmgr": None,
            "sending_qmgr": "QM1", "channel": "TO.QM3", "facet": None, "value": value, "messages": None,
            "detail": None}


def other(day: str, metric: str, detail, **labels) -> dict:
    row = {"run_date": day, "metric": metric, "mq_cluster": None, "queue": None, "qmgr": None, "sending_qmgr": None,
           "channel": None, "facet": None, "value": 1.0, "messages": None, "detail": json.dumps(detail)}
    row.update(labels)
    return row


def opens(day: str, bind: str, app: str = "payments") -> dict:
    return other(day, "application_opens", {"bind": {bind: 100}, "target_qmgr": {}, "grouped": 0},
                 sending_qmgr="QM1", queue="APP.ORDERS", facet=app, value=100.0, messages=100)


def test_a_change_from_a_constant_baseline_flags_and_identical_days_do_not():
    # Ten days at exactly 25 %: std 0. The floor is max(0.01, 5 % of 0.25 = 0.0125) = 0.0125, so day 11 at 40 %
    # has z = (0.40 - 0.25) / 0.0125 = 12: flagged. The ten identical days before it have z = 0 (and the first
    # seven have fewer than 7 days behind them).
    rows = [share(d, 0.25) for d in DATES[:10]] + [share(DATES[10], 0.40)]
    found = flags_of(rows, DATES[:11])
    assert [(f.date, f.metric) for f in found.flags] == [(DATES[10], "share_observed")]
    f = found.flags[0]
    assert (f.baseline_mean, f.baseline_std) == (0.25, 0.0) and f.z == pytest.approx(12.0)
    assert f.cause.kind == "unexplained"
    assert flags_of([share(d, 0.25) for d in DATES], DATES).flags == []


def test_fewer_than_seven_days_behind_a_day_give_no_flag():
    # Six days at 25 %, then 90 %: a window of 6 < 7 days, no flag however far it moves. With a seventh day at
    # 25 % first, the same 90 % is flagged (z = 0.65 / 0.0125 = 52).
    assert flags_of([share(d, 0.25) for d in DATES[:6]] + [share(DATES[6], 0.9)], DATES[:7]).flags == []
    found = flags_of([share(d, 0.25) for d in DATES[:7]] + [share(DATES[7], 0.9)], DATES[:8]).flags
    assert [f.date for f in found] == [DATES[7]] and found[0].z == pytest.approx(52.0)


def test_the_window_and_the_minimum_are_settable():
    # min_days 3: three days at 25 % are enough to flag the fourth at 40 % (z = 12 as above).
    rows = [share(d, 0.25) for d in DATES[:3]] + [share(DATES[3], 0.40)]
    assert [f.date for f in flags_of(rows, DATES[:4], min_days=3, window=5).flags] == [DATES[3]]
    # threshold 20: z = 12 is not flagged.
    assert flags_of(rows, DATES[:4], min_days=3, threshold=20).flags == []


def test_a_weight_change_is_drift_and_starts_a_new_baseline():
    # QM1 sends APP.ORDERS to QM1..QM3 at weights 50/50/50: QM2 gets 1/3. On day 11 TO.QM2's CLWLWGHT goes
    # 50 -> 80: QM2's share becomes 80 / (50 + 80 + 50)... here the facts say 50 % from day 11 on (the drift's
    # share effect, in percent, says 33.3 -> 50.0). Day 11: z = (0.5 - 0.3333) / max(0.01, 0.0167) = 10: flagged,
    # cause drift with the attribute, old and new value and MQ's stamp. Days 12-20 at 50 % are compared with the
    # new baseline (from day 11): fewer than 7 days until day 18, then identical: no more flags. Without the new
    # baseline, day 12 would have z = (0.5 - 0.3485) / 0.0503 = 3.0 against days 1-11 and be flagged again.
    change = {"at": f"{DATES[10]}T09:12:00+00:00", "qmgr": "QM1", "kind": "CLUSQMGR", "object": "CLUSQMGR(QM2) "
              "CHANNEL(TO.QM2)", "attribute": "CLWLWGHT", "old": "50", "new": "80",
              "stamp": f"altered {DATES[10]} 09:12:00"}
    effect = {"at": change["at"], "qmgr": "QM1", "queue": "APP.ORDERS", "before": {"QM1": 33.333, "QM2": 33.333,
              "QM3": 33.333}, "after": {"QM1": 25.0, "QM2": 50.0, "QM3": 25.0}}
    rows = ([share(d, 1 / 3) for d in DATES[:10]] + [share(d, 0.5) for d in DATES[10:]]
            + [other(DATES[10], "config_changes", {"changes": [change], "effects": [effect]}, qmgr="QM1")])
    found = flags_of(rows, DATES).flags
    assert [(f.date, f.cause.kind) for f in found] == [(DATES[10], "drift")]
    cause = found[0].cause.as_dict()
    assert cause["changes"][0]["attribute"] == "CLWLWGHT" and (cause["changes"][0]["old"],
                                                               cause["changes"][0]["new"]) == ("50", "80")
    assert cause["changes"][0]["stamp"] == f"altered {DATES[10]} 09:12:00"
    assert (cause["percent_before"], cause["percent_after"]) == (33.333, 50.0)
    assert found[0].z == pytest.approx((0.5 - 1 / 3) / (0.05 / 3))
    assert "QM2's share of APP.ORDERS from QM1 rose from 33 % to 50 % on 11-11 after CLWLWGHT 50 -> 80" in \
        flag_text(found[0])
    # The change moves QM2's share; a queue it does not move is not explained by it.
    assert Causes.from_rows(rows, DATES).of(DATES[10], "share_observed",
                                            Subject("CL1", "APP.OTHER", "QM2", "QM1", None, "x")).kind == "unexplained"


def test_an_outage_is_an_incident_and_does_not_move_the_baseline():
    # Stuck behind QM1's TO.QM3: 0 for ten days; 40 on day 11, the day of incident 1 (receiver QM3); 0 after.
    # Day 11: mean 0, std 0, floor 1: z = 40: flagged, cause incident. Day 12 (0) is not a departure. On day 15
    # 40 again without an incident: unexplained, and its baseline is days 1-14 without day 11 (a one-day event is
    # left out of the later windows): mean 0 and std 0 exactly (with day 11 in it, the mean would be 40 / 14).
    incident = {"number": 1, "side": "receiver", "qmgr": "QM3", "start": f"{DATES[10]}T10:00:00+00:00",
                "end": f"{DATES[10]}T11:30:00+00:00", "channels": ["QM1/TO.QM3"], "senders": ["QM1"],
                "receivers": ["QM3"]}
    values = [0] * 10 + [40] + [0] * 3 + [40]
    rows = [stuck(d, v) for d, v in zip(DATES, values)] + [other(DATES[10], "incidents", [incident], qmgr="QM3",
                                                                 facet="receiver")]
    found = flags_of(rows, DATES[:15]).flags
    assert [(f.date, f.cause.kind) for f in found] == [(DATES[10], "incident"), (DATES[14], "unexplained")]
    assert found[0].cause.as_dict() == {"kind": "incident", "number": 1, "side": "receiver", "qmgr": "QM3",
                                        "start": incident["start"], "end": incident["end"],
                                        "channels": ["QM1/TO.QM3"]}
    assert (found[1].baseline_mean, found[1].baseline_std, found[1].z) == (0.0, 0.0, 40.0)
    assert "during incident 1 (receiver QM3, 10:00-11:30)" in flag_text(found[0])


def test_an_application_that_binds_on_open_is_the_cause_and_a_lasting_one():
    # payments puts APP.ORDERS from QM1 not fixed for ten days (QM3 gets 1/3); on day 11 it opens with
    # MQOO_BIND_ON_OPEN and every message goes to QM3: z = (1 - 0.3333) / 0.0167 = 40. The part bound on open
    # moved 0 -> 1 (>= 0.2): cause application, named. Day 12 at 100 % again: new baseline, not flagged.
    rows = ([share(d, 1 / 3, qmgr="QM3") for d in DATES[:10]] + [share(d, 1.0, qmgr="QM3") for d in DATES[10:12]]
            + [opens(d, "notfixed") for d in DATES[:10]] + [opens(d, "open") for d in DATES[10:12]])
    found = flags_of(rows, DATES[:12]).flags
    assert [(f.date, f.cause.kind) for f in found] == [(DATES[10], "application")]
    c = found[0].cause.as_dict()
    assert (c["application"], c["sender"], c["queue"], c["since"]) == ("payments", "QM1", "APP.ORDERS", DATES[9])
    assert c["changed"] == {"bind on open": {"before": 0.0, "after": 1.0}}


def test_an_evidence_gap_is_named_and_unexplained_otherwise():
    # Trace agreement 100 % for ten days, 80 % on day 11: z = -0.2 / 0.05 = -4 (floor 5 % of 1). With channel
    # status unseen at QM1 that day the cause is the gap; without, unexplained.
    rows = [{"run_date": d, "metric": "trace_agreement", "mq_cluster": None, "queue": None, "qmgr": None,
             "sending_qmgr": None, "channel": None, "facet": None, "value": v, "messages": 500, "detail": None}
            for d, v in zip(DATES[:11], [1.0] * 10 + [0.8])]
    gap = {"run_date": DATES[10], "metric": "evidence_gaps", "mq_cluster": None, "queue": None, "qmgr": "QM1",
           "sending_qmgr": None, "channel": None, "facet": "chstatus_interval", "value": 1.0, "messages": None,
           "detail": None}
    plain = flags_of(rows, DATES[:11]).flags
    assert [(f.cause.kind, f.z) for f in plain] == [("unexplained", pytest.approx(-4.0))]
    found = flags_of(rows + [gap], DATES[:11]).flags
    assert found[0].cause.as_dict() == {"kind": "evidence_gap", "gaps": {"QM1": ["chstatus_interval"]}}
    assert found[0].as_dict()["value"] == 0.8 and "sender" not in found[0].as_dict()


def test_days_a_series_lacks_are_not_days_of_its_window():
    # A queue nobody put to on days 4-6 has no share those days: the window of day 11 is days 1-3 and 7-10 (7
    # days at 25 %), enough to flag 40 %; drop one more day and it is 6: no flag.
    s = Series("share_observed", Subject("CL1", "APP.ORDERS", "QM2", "QM1", None, "observed_destination"),
               {d: 0.25 for i, d in enumerate(DATES[:10]) if i not in (3, 4, 5)} | {DATES[10]: 0.40})
    assert [f.date for f in flag_series(s, DATES[:11], Causes())] == [DATES[10]]
    del s.values[DATES[0]]
    assert flag_series(s, DATES[:11], Causes()) == []


def test_a_days_facts_from_its_rows():
    # gold.trend_facts of one day (clwl/analyses/trend_facts.py), from rows as the publish holds them. QM1 put 4
    # messages to APP.ORDERS: 3 observed at QM2, 1 at QM3 (shares 0.75 and 0.25; the replay sent 2 and 2: 0.5
    # each). Behind TO.QM3: one stuck message, not re-allocatable, 600 s old; one that waited 10:00-10:30 and was
    # re-allocated (1800 s: the longest wait). payments put 2 messages bound on open, 1 naming QM3.
    from types import SimpleNamespace

    from clwl.analyses.published_day import Estate
    from clwl.analyses.trend_facts import DayInputs, day_facts

    day = "2026-11-20"
    estate = Estate(qmgrs={"QM1", "QM2", "QM3"}, observers={"QM1"}, channels={("QM1", "TO.QM2"), ("QM1", "TO.QM3")},
                    shares={("QM1", "APP.ORDERS", "QM2"): "CL1", ("QM1", "APP.ORDERS", "QM3"): "CL1"})
    dist = [{"source": "observed_destination", "sending_qmgr": "QM1", "queue": "APP.ORDERS", "qmgr": q,
             "expected": 2, "observed": o} for q, o in (("QM2", 3), ("QM3", 1))]
    stuck_rows = [{"sending_qmgr": "QM1", "channel": "TO.QM3", "why": "not-reallocatable", "age_seconds": 600,
                   "released_at": None}]
    from datetime import datetime, timezone

    at = datetime(2026, 11, 20, 10, 0, tzinfo=timezone.utc)
    delayed = [{"sending_qmgr": "QM1", "channel": "TO.QM3", "held_from": at, "released_at": at + timedelta(minutes=30),
                "reallocations": 1, "stay_reason": None}]
    opens_rows = [{"sending_qmgr": "QM1", "queue": "APP.ORDERS", "application": "payments", "bind": "OPEN",
                   "target_qmgr": t, "grouped": False, "messages": 1} for t in (None, "QM3")]
    drift = SimpleNamespace(changes=[], effects=[], qmgrs=("QM1",))
    facts = day_facts(day, DayInputs(distribution=dist, stuck=stuck_rows, delayed=delayed, estate=estate,
                                     findings={"defbind_open": 2}, rules=["defbind_open", "single_host"],
                                     drift=drift, evidence=SimpleNamespace(gaps={("QM1", "no_chstatus"): 1}),
                                     traced=4, agreed=3, opens=opens_rows))
    got = {(f.metric, f.qmgr, f.channel, f.facet): (f.value, f.messages) for f in facts}
    assert got[("share_observed", "QM2", None, "observed_destination")] == (0.75, 4)
    assert got[("share_observed", "QM3", None, "observed_destination")] == (0.25, 4)
    assert got[("share_configured", "QM2", None, "observed_destination")] == (0.5, 4)
    assert got[("stuck", None, "TO.QM3", None)] == (1.0, None) and got[("stuck", None, "TO.QM2", None)] == (0.0, None)
    assert got[("not_reallocatable", None, "TO.QM3", None)] == (1.0, None)
    assert got[("reallocated", None, "TO.QM3", None)] == (1.0, None)
    assert got[("longest_wait_seconds", None, "TO.QM3", None)] == (1800.0, None)
    assert got[("config_findings", None, None, "defbind_open")] == (2.0, None)
    assert got[("config_findings", None, None, "single_host")] == (0.0, None)
    assert got[("config_changes", "QM1", None, None)] == (0.0, None)
    assert got[("evidence_gaps", "QM1", None, "no_chstatus")] == (1.0, None)
    assert got[("trace_agreement", None, None, None)] == (0.75, 4)
    app = next(f for f in facts if f.metric == "application_opens")
    assert (app.sending_qmgr, app.queue, app.facet, app.value) == ("QM1", "APP.ORDERS", "payments", 2.0)
    assert json.loads(app.detail) == {"bind": {"open": 2}, "target_qmgr": {"QM3": 1}, "grouped": 0}
    assert all(isinstance(f.value, float) for f in facts)


def test_mean_and_std_are_the_sample_statistics():
    """The float mean and sample deviation (n - 1) agree with the statistics module's exact ones."""
    import statistics

    from clwl.analyses.trend import mean_and_std

    for values in ([0.5], [0.5, 0.5], [0.33, 0.34, 0.32, 0.35, 0.33, 0.31, 0.36], [10.0, 12.0, 9.0, 500.0]):
        mean, std = mean_and_std(values)
        assert mean == pytest.approx(statistics.fmean(values), rel=1e-12)
        assert std == pytest.approx(statistics.stdev(values) if len(values) > 1 else 0.0, rel=1e-9, abs=1e-15)
