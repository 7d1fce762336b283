"""clwl/analyses/lint_stale.py: the stale-knowledge rules (issue 44 item 4), each on a hand-made estate with the exact
messages whose destination it changed, and quiet on the samples, where nothing is stale.

Estates: tests/handmade.py's ``config_capture`` (DISPLAY QMGR, CLUSQMGR(*), QCLUSTER(*); one cluster CL1; every
remote queue manager reached by TO.<QM>, RUNNING, CLWLWGHT 50, rank and priority 0; every instance DEFBIND(NOTFIXED),
PUT(ENABLED) unless told), plus DISPLAY QLOCAL records where a rule reads a host's own definition. Who is who, from
the references (docs/lint.md and docs/landing.md: DISPLAY CLUSQMGR and DISPLAY QMGR):

- FR1 is the full repository: REPOS(CL1) in its DISPLAY QMGR, and QMTYPE(REPOS) in the CLUSQMGR record its partial
  repositories hold of it. A full repository shows every member and every instance; a partial repository only the
  queue managers it has used, plus the full repositories.
- QM1 is the sending partial repository; QM2 and QM3 host APP.IN.

The day: QM1's application "payroll" puts four messages on APP.IN, M1..M4 at 10:00:00..10:00:03 UTC, bound not
fixed. Where they go follows the default profile (docs/algorithm.md): step 1 removes PUT(DISABLED) instances, step
11b keeps the queues with the highest CLWLPRTY, so an instance with a higher CLWLPRTY than the other takes every
message; with one instance left it takes every message.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from clwl.analyses.lint import RULE_NAMES, lint_observations, observe
from clwl.analyses.lint_model import DayMessage
from clwl.engine.replay import PutEvent
from clwl.engine.view import read_captures
from tests.handmade import _record, _runmqsc, config_capture

STALE_RULES = ("partial-view-differs", "local-definition-differs", "departed-qmgr-chosen",
               "backout-or-streamq-differs")
DAY = "2026-11-20"
IDS = ("M1", "M2", "M3", "M4")
REPOS = {"QMTYPE": "REPOS"}  # how a partial repository's CLUSQMGR record shows a full repository


def at(second: int, hour: int = 10) -> datetime:
    return datetime(2026, 11, 20, hour, 0, second, tzinfo=timezone.utc)


def day_messages(sender: str, queues: frozenset[str]) -> list[DayMessage]:
    """QM1's four messages on APP.IN (the only ones of the day)."""
    if sender != "QM1" or "APP.IN" not in queues:
        return []
    return [DayMessage(PutEvent(m, at(i), "APP.IN", bind="notfixed"), "payroll") for i, m in enumerate(IDS)]


def qlocal(name: str, **attrs: str) -> str:
    return _record("AMQ8409I: Display Queue details.", {"QUEUE": name, "TYPE": "QLOCAL", "CLUSTER": "CL1", **attrs})


def observation(tmp: Path, qmgr: str, remotes: dict, queues: dict, qmgr_attrs: dict | None = None,
                qlocals: list[str] = ()):
    """One queue manager's captures written as runmqsc output, read back and observed as clwl lint does."""
    folder = tmp / qmgr
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.mqsc").write_text(config_capture(qmgr, remotes, queues, qmgr_attrs), encoding="utf-8")
    if qlocals:
        (folder / "qlocal.mqsc").write_text(_runmqsc(qmgr, [("DISPLAY QLOCAL(*) ALL", list(qlocals))]),
                                            encoding="utf-8")
    return observe(qmgr, read_captures([folder]).records)


def full_repository(tmp: Path, members=("QM1", "QM2", "QM3"), queues: dict | None = None):
    return observation(tmp, "FR1", {m: {} for m in members}, queues or {"APP.IN": {"QM2": {}, "QM3": {}}},
                       {"REPOS": "CL1"})


def stale(findings, rule: str):
    return [f for f in findings if f.rule == rule]


def test_the_four_rules_are_registered_after_the_others():
    assert RULE_NAMES[-4:] == STALE_RULES


def test_partial_view_missing_an_instance_and_the_messages_it_kept_from_it(tmp_path):
    """FR1 holds APP.IN on QM2 (CLWLPRTY 0) and QM3 (CLWLPRTY 5); QM1's view misses QM3's instance. With QM1's view
    every message goes to QM2, its only instance; with the full repository's, step 11b keeps QM3's (priority 5 over
    0): all four, M1..M4, would have gone to QM3 instead."""
    queues = {"APP.IN": {"QM2": {}, "QM3": {"CLWLPRTY": "5"}}}
    obs = [full_repository(tmp_path, queues=queues),
           observation(tmp_path, "QM1", {"FR1": REPOS, "QM2": {}}, {"APP.IN": {"QM2": {}}})]
    found = stale(lint_observations(obs, run_date=DAY, messages=day_messages), "partial-view-differs")
    assert [(f.qmgr, f.object, f.seen_by) for f in found] == [("QM1", "APP.IN", ("FR1", "QM1"))]
    f = found[0]
    assert "QM3's instance is missing" in f.detail
    assert f.routing.messages == 4 and f.routing.changed == IDS
    assert (f.routing.first, f.routing.last, f.routing.applications) == (at(0), at(3), ("payroll",))
    assert "4 of the 4 messages QM1 put on APP.IN on 2026-11-20 would have gone elsewhere" in f.detail
    assert "REFRESH CLUSTER(CL1) REPOS(NO) on QM1" in f.remedy


def test_partial_view_with_a_different_attribute_that_changed_nothing_says_so(tmp_path):
    """QM1 holds QM2's instance with DEFBIND(OPEN) where FR1 holds DEFBIND(NOTFIXED). The messages are bound not
    fixed (their applications chose MQOO_BIND_NOT_FIXED), so DEFBIND decides nothing for them and every other
    attribute agrees: no message's destination changes, and the finding says so."""
    obs = [full_repository(tmp_path),
           observation(tmp_path, "QM1", {"FR1": REPOS, "QM2": {}, "QM3": {}},
                       {"APP.IN": {"QM2": {"DEFBIND": "OPEN"}, "QM3": {}}})]
    found = stale(lint_observations(obs, run_date=DAY, messages=day_messages), "partial-view-differs")
    assert len(found) == 1 and "QM2's DEFBIND(OPEN) against DEFBIND(NOTFIXED)" in found[0].detail
    assert found[0].routing.messages == 4 and found[0].routing.changed == ()
    assert "it changed no routing that day" in found[0].detail


def test_partial_view_with_a_stale_queue_manager_record_and_an_extra_instance(tmp_path):
    """Two differences on QM1, each replayed on its own:

    - QM1's record of QM3 says CLWLPRTY(5); FR1's (QM3's CLUSRCVR as the full repository holds it) says 0; both say
      QM2 is at 3. Step 11a keeps the channels with the highest channel CLWLPRTY: with QM1's record all four
      messages go to QM3 (5 over 3), with FR1's to QM2 (3 over 0): M1..M4 changed (object ``QMGR QM3``).
    - APP.OUT: QM1 still holds an instance on QM2 (CLWLPRTY 5) that FR1 no longer holds (QM2 still a member);
      no message is put on APP.OUT that day, so the finding says it changed no routing."""
    fr = observation(tmp_path, "FR1", {"QM1": {}, "QM2": {"CLWLPRTY": "3"}, "QM3": {}},
                     {"APP.IN": {"QM2": {}, "QM3": {}}, "APP.OUT": {"QM3": {}}}, {"REPOS": "CL1"})
    qm1 = observation(tmp_path, "QM1", {"FR1": REPOS, "QM2": {"CLWLPRTY": "3"}, "QM3": {"CLWLPRTY": "5"}},
                      {"APP.IN": {"QM2": {}, "QM3": {}}, "APP.OUT": {"QM2": {"CLWLPRTY": "5"}, "QM3": {}}})
    found = stale(lint_observations([fr, qm1], run_date=DAY, messages=day_messages), "partial-view-differs")
    assert [f.object for f in found] == ["APP.OUT", "QMGR QM3"]
    out, qm3 = found
    assert "an instance on QM2 that the full repositories no longer hold" in out.detail
    assert out.routing.messages == 0 and "no message was put on APP.OUT by an application on QM1" in out.detail
    assert "CLWLPRTY(5) against CLWLPRTY(0)" in qm3.detail
    assert qm3.routing.changed == IDS


def test_how_long_a_partial_view_differed_over_the_day(tmp_path):
    """At 06:00 QM1 misses QM3's instance, at 09:00 it knows both (nothing differs), from 12:00 it misses it again:
    the difference holds since 12:00, the last 1 of the day's 3 configurations, and held earlier at 06:00."""
    queues = {"APP.IN": {"QM2": {}, "QM3": {"CLWLPRTY": "5"}}}
    fr = full_repository(tmp_path / "a", queues=queues)
    whole = observation(tmp_path / "a", "QM1", {"FR1": REPOS, "QM2": {}, "QM3": {}}, queues)
    part = observation(tmp_path / "b", "QM1", {"FR1": REPOS, "QM2": {}}, {"APP.IN": {"QM2": {}}})
    moments = [(at(0, 6), [fr, part]), (at(0, 9), [fr, whole]), (at(0, 12), [fr, part])]
    found = stale(lint_observations([fr, part], moments=moments), "partial-view-differs")
    assert ("(since 12:00:00 UTC, the last 1 of the day's 3 configurations; also earlier, from 06:00:00 to "
            "06:00:00 UTC)") in found[0].detail
    assert found[0].routing is None  # captures alone: nothing said of messages


def test_local_definition_not_advertised_and_the_messages_that_went_by_the_old_value(tmp_path):
    """QM2's QLOCAL(APP.IN) says CLWLPRTY(5), but the cluster (FR1, and QM1's view) still advertises 0; QM3's
    instance is advertised at 3. QM1 routes by what is advertised: step 11b keeps QM3 (3 over 0), all four
    messages go there; by QM2's own definition, QM2 (5 over 3) takes all four: M1..M4 changed."""
    queues = {"APP.IN": {"QM2": {}, "QM3": {"CLWLPRTY": "3"}}}
    obs = [full_repository(tmp_path, queues=queues),
           observation(tmp_path, "QM1", {"FR1": REPOS, "QM2": {}, "QM3": {}}, queues),
           observation(tmp_path, "QM2", {"FR1": REPOS}, {"APP.IN": {"QM2": {}}},
                       qlocals=[qlocal("APP.IN", CLWLPRTY="5", CLWLRANK="0", PUT="ENABLED", DEFBIND="NOTFIXED")])]
    found = lint_observations(obs, run_date=DAY, messages=day_messages)
    local = stale(found, "local-definition-differs")
    assert [(f.qmgr, f.object) for f in local] == [("QM2", "APP.IN")]
    assert "QLOCAL(APP.IN) on QM2 has CLWLPRTY(5); the cluster advertises CLWLPRTY(0) (held by FR1)" in \
        local[0].detail
    assert local[0].routing.changed == IDS and local[0].routing.messages == 4
    assert not stale(found, "partial-view-differs")  # QM1's view is the full repository's


def test_departed_queue_manager_still_chosen_and_where_its_messages_would_have_gone(tmp_path):
    """FR1 knows QM1 and QM2 only: QM3 has left CL1. QM1's view still holds QM3's APP.IN at CLWLPRTY 5 beside
    QM2's at 0, so step 11b sends all four messages to QM3; without it, QM2 is the only instance: M1..M4 changed."""
    obs = [full_repository(tmp_path, members=("QM1", "QM2"), queues={"APP.IN": {"QM2": {}}}),
           observation(tmp_path, "QM1", {"FR1": REPOS, "QM2": {}, "QM3": {}},
                       {"APP.IN": {"QM2": {}, "QM3": {"CLWLPRTY": "5"}}})]
    found = lint_observations(obs, run_date=DAY, messages=day_messages)
    gone = stale(found, "departed-qmgr-chosen")
    assert [(f.qmgr, f.object, f.seen_by) for f in gone] == [("QM1", "QM3", ("FR1", "QM1"))]
    assert gone[0].routing.changed == IDS
    assert "ACTION(FORCEREMOVE)" in gone[0].remedy
    assert not stale(found, "partial-view-differs")  # a departed host is this rule's, not a member's difference


def test_instances_that_handle_poison_messages_differently(tmp_path):
    """QM2's APP.IN backs a message out to APP.BACKOUT after 5 tries and streams a copy to APP.COPY; QM3's has
    BOTHRESH 0, no BOQNAME and no STREAMQ. QM1 sees QM3's instance at CLWLPRTY 5: step 11b sends all four messages
    there, to the instance without a backout queue. The difference changes no destination (routing does not read
    these attributes): the finding says so and names the four."""
    queues = {"APP.IN": {"QM2": {}, "QM3": {"CLWLPRTY": "5"}}}
    obs = [observation(tmp_path, "QM1", {"QM2": {}, "QM3": {}}, queues),
           observation(tmp_path, "QM2", {}, {"APP.IN": {"QM2": {}}},
                       qlocals=[qlocal("APP.IN", BOTHRESH="5", BOQNAME="APP.BACKOUT", STREAMQ="APP.COPY")]),
           observation(tmp_path, "QM3", {}, {"APP.IN": {"QM3": {"CLWLPRTY": "5"}}},
                       qlocals=[qlocal("APP.IN", BOTHRESH="0", BOQNAME=" ", STREAMQ=" ", CLWLPRTY="5")])]
    found = stale(lint_observations(obs, run_date=DAY, messages=day_messages), "backout-or-streamq-differs")
    assert [(f.qmgr, f.object) for f in found] == [("QM2, QM3", "APP.IN")]
    f = found[0]
    assert "differ in BOTHRESH, BOQNAME, STREAMQ" in f.detail
    assert f.routing.messages == 4 and f.routing.changed == ()
    assert "it changes no destination, but 4 of the 4 messages QM1 put on APP.IN on 2026-11-20 went to QM3" in \
        f.detail and "M1, M2, M3, M4" in f.detail


def test_nothing_stale_nothing_said(tmp_path):
    """QM1's view is FR1's; QM2's definition is what is advertised; both hosts handle poison messages alike."""
    queues = {"APP.IN": {"QM2": {}, "QM3": {}}}
    same = qlocal("APP.IN", BOTHRESH="3", BOQNAME="APP.BACKOUT", CLWLPRTY="0", CLWLRANK="0", PUT="ENABLED",
                  DEFBIND="NOTFIXED")
    obs = [full_repository(tmp_path, queues=queues),
           observation(tmp_path, "QM1", {"FR1": REPOS, "QM2": {}, "QM3": {}}, queues),
           observation(tmp_path, "QM2", {"FR1": REPOS}, {"APP.IN": {"QM2": {}}}, qlocals=[same]),
           observation(tmp_path, "QM3", {"FR1": REPOS}, {"APP.IN": {"QM3": {}}}, qlocals=[same])]
    assert not [f for f in lint_observations(obs, run_date=DAY, messages=day_messages) if f.rule in STALE_RULES]


def test_the_samples_where_nothing_is_stale_stay_quiet():
    """samples/landing/2026-11-20: FR1 and FR2 full repositories, QM1..QM5 partial; every queue manager's latest
    captures of the day, as clwl lint --mqsc reads a date folder (QM3's unreadable 14:00 capture replaced by the
    one before it). What differs there is no staleness: QM4's APP.ORDERS went PUT(DISABLED) at 17:55 (samples/
    README.md), which QM1's and QM4's 18:00 captures show and the full repositories' only capture, at 06:00, cannot:
    a view is compared only with one captured no earlier. At 06:00 (--at), when every queue manager was captured at
    once, every view is compared, and none differs either."""
    from clwl.cli.lint import lint_mqsc
    from clwl.engine.view import parse_capture_moment

    root = Path(__file__).resolve().parents[2] / "samples" / "landing" / "2026-11-20"
    for at_ in (None, parse_capture_moment("06:00")):
        linted = lint_mqsc([str(root)], at_)
        assert linted.findings and {"FR1", "FR2", "QM1"} <= set(linted.source.split(", "))
        assert not [f for f in linted.findings if f.rule in STALE_RULES]


def test_clwl_check_names_the_rules_a_missing_full_repository_capture_disables(tmp_path):
    """QM1's captures of the day name FR1 as a full repository (QMTYPE(REPOS) in its CLUSQMGR record), but FR1 has
    no capture that day: a no_full_repository gap naming the two rules that compare with it. With FR1's capture
    beside it, none."""
    from clwl.analyses.check import check_landing

    def write(qmgr: str, text: str) -> None:
        folder = tmp_path / "landing" / DAY / qmgr
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config_060000.mqsc").write_text(text, encoding="utf-8")

    write("QM1", config_capture("QM1", {"FR1": REPOS, "QM2": {}}, {"APP.IN": {"QM2": {}}}))
    gaps = [g for g in check_landing(tmp_path / "landing").gaps if g.kind == "no_full_repository"]
    assert [(g.run_date, g.qmgr) for g in gaps] == [(DAY, None)]
    assert "name the full repositories FR1" in gaps[0].detail
    assert "partial-view-differs and departed-qmgr-chosen say nothing" in gaps[0].detail

    write("FR1", config_capture("FR1", {"QM1": {}, "QM2": {}}, {"APP.IN": {"QM2": {}}}, {"REPOS": "CL1"}))
    assert not [g for g in check_landing(tmp_path / "landing").gaps if g.kind == "no_full_repository"]


def test_a_landing_date_replays_its_put_files_and_the_json_lists_the_changed_messages(tmp_path, capsys):
    """The first estate (QM1's view misses QM3's APP.IN, CLWLPRTY 5 in FR1's) as a landing date folder, with QM1's
    put file of the same four messages (MQ message ids in hex, as a put file carries them; application payroll,
    from the open handle payroll:1:1): `clwl lint --mqsc <date> --json` replays the put file as the lake's put
    records would be, and the finding's routing lists the four."""
    import json

    from clwl.cli import main
    from tests.handmade import PUTS_HEADER, msg, put_row

    ids = tuple(msg(n) for n in range(1, 5))

    day = tmp_path / "landing" / DAY
    queues = {"APP.IN": {"QM2": {}, "QM3": {"CLWLPRTY": "5"}}}
    for qmgr, text in (("FR1", config_capture("FR1", {"QM1": {}, "QM2": {}, "QM3": {}}, queues, {"REPOS": "CL1"})),
                       ("QM1", config_capture("QM1", {"FR1": REPOS, "QM2": {}}, {"APP.IN": {"QM2": {}}}))):
        (day / qmgr).mkdir(parents=True)
        (day / qmgr / "config_060000.mqsc").write_text(text, encoding="utf-8")
    rows = [put_row(at(i), "QM1", "APP.IN", m, handle="payroll:1:1") for i, m in enumerate(ids)]
    (day / "QM1" / "puts.csv").write_text("\n".join([PUTS_HEADER, *rows]) + "\n", encoding="utf-8")

    assert main(["lint", "--mqsc", str(day), "--json"]) == 0
    found = [f for f in json.loads(capsys.readouterr().out)["findings"] if f["rule"] in STALE_RULES]
    assert [(f["rule"], f["qmgr"], f["object"]) for f in found] == [("partial-view-differs", "QM1", "APP.IN")]
    assert found[0]["routing"] == {"messages": 4, "changed": list(ids), "first": at(0).isoformat(),
                                   "last": at(3).isoformat(), "applications": ["payroll"]}
