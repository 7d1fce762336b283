"""clwl/analyses/lint.py: every rule on a hand-made estate that triggers it and one that does not.

Estates: tests/handmade.py's ``config_capture`` (DISPLAY QMGR, CLUSQMGR(*), QCLUSTER(*) in runmqsc's printed
shape; one cluster CL1; every remote queue manager reached by its auto-defined CLUSSDR TO.<QM>, RUNNING,
CLWLWGHT 50, rank and priority 0; every instance DEFBIND(NOTFIXED), PUT(ENABLED) unless told), plus, where a rule
needs them, DISPLAY QLOCAL / QALIAS / CHANNEL records in a second file. The expected values come from the
algorithm as docs/algorithm.md states it (profile default: "The steps", "Binding and re-allocation",
"Pitfalls"):

- step 1 eliminates queues that are not PUT enabled; step 3 chooses the local instance when the queue's
  CLWLUSEQ is LOCAL, or QMGR with the queue manager's LOCAL (MQ's defaults: queue QMGR, queue manager LOCAL);
  step 5 prefers resumed queue managers; step 11c keeps at most CLWLMRUC most recently used channels.
- workload attributes on a manual CLUSSDR are ignored: MQ uses what the destination's CLUSRCVR advertises
  (pitfall 1; DISPLAY CLUSQMGR shows the CLUSRCVR's values).
- DEFBIND's default is OPEN (pitfall 2); a QALIAS's DEFBIND wins over its base queue's.
Where a rule's consequence can be replayed, the engine (clwl.engine.router) is asked too, so lint and replay agree.
"""

from __future__ import annotations

import json
from pathlib import Path

from clwl.analyses.lint import (
    RULE_NAMES,
    RULES,
    Finding,
    bind_decision,
    lint_captures,
    lint_observations,
    observe,
    sort_findings,
)
from clwl.analyses.lint_lake import findings_json
from clwl.engine.algorithm import Request
from clwl.engine.candidates import queue_defbind
from clwl.engine.router import AS_Q_DEF, Router
from clwl.engine.view import build_view, read_captures
from tests.handmade import _record, _runmqsc, config_capture

EXPECTED_RULES = ("clussdr-workload-attrs", "local-instance-wins", "bind-on-open-default", "alias-overrides-bind",
                  "put-disabled-instance", "single-instance", "suspended-qmgr", "mruc-below-instances",
                  # issue 38: where intra-group queuing quietly does nothing (tests/unit/test_igq_evidence.py)
                  "igq-no-member-host", "igq-limit-too-small",
                  # issue 44: stale and inconsistent cluster knowledge (tests/unit/test_lint_stale.py)
                  "partial-view-differs", "local-definition-differs", "departed-qmgr-chosen",
                  "backout-or-streamq-differs")


# -- hand-made captures ---------------------------------------------------------------------------------------
def qlocal(name: str, **attrs: str) -> str:
    return _record("AMQ8409I: Display Queue details.", {"QUEUE": name, "TYPE": "QLOCAL", "CLUSTER": "CL1", **attrs})


def qalias(name: str, target: str, **attrs: str) -> str:
    return _record("AMQ8409I: Display Queue details.", {"QUEUE": name, "TYPE": "QALIAS", "TARGET": target,
                                                        "CLUSTER": " ", **attrs})


def channel(name: str, chltype: str, **attrs: str) -> str:
    return _record("AMQ8414I: Display Channel details.", {"CHANNEL": name, "CHLTYPE": chltype, **attrs})


def estate(folder: Path, qmgr: str, remotes: dict, queues: dict, qmgr_attrs: dict | None = None,
           extra: list[tuple[str, list[str]]] = ()) -> Path:
    """One queue manager's captures in ``folder``: config.mqsc, and extra.mqsc with ``extra`` commands."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.mqsc").write_text(config_capture(qmgr, remotes, queues, qmgr_attrs), encoding="utf-8")
    if extra:
        (folder / "extra.mqsc").write_text(_runmqsc(qmgr, list(extra)), encoding="utf-8")
    return folder


def lint_folders(*folders: Path) -> list[Finding]:
    records = {}
    for f in folders:
        caps = read_captures([f])
        records.setdefault(f.name, []).extend(caps.records)
    return lint_captures(records)


def view_of(folder: Path):
    return build_view(read_captures([folder]).records, folder.name)[0]


def of(findings: list[Finding], rule: str) -> list[Finding]:
    return [f for f in findings if f.rule == rule]


# -- the registry ----------------------------------------------------------------------------------------------
def test_rules_are_the_issues_fourteen_in_order_each_with_mq_s_words():
    assert RULE_NAMES == EXPECTED_RULES
    for rule in RULES:
        assert rule.mq_does and rule.remedy and callable(rule.check)
        assert rule.check.__name__ == rule.name.replace("-", "_")


def test_findings_sort_by_queue_manager_then_rule_order_and_serialise_as_the_issue_says():
    a = Finding("single-instance", "QM1", "Q", "d", "r")
    b = Finding("clussdr-workload-attrs", "QM2", "TO.QM3", "d", "r")
    c = Finding("clussdr-workload-attrs", "QM1", "TO.QM3", "d", "r")
    assert sort_findings([a, b, c]) == [c, a, b]
    doc = findings_json([c])
    assert doc == {"findings": [{"rule": "clussdr-workload-attrs", "qmgr": "QM1", "object": "TO.QM3",
                                 "detail": "d", "remedy": "r", "severity": "warning", "seen_by": []}]}
    assert json.loads(json.dumps(doc)) == doc


def test_a_quiet_estate_has_no_finding(tmp_path):
    """QM1 (CLWLUSEQ ANY, hosting nothing) sees APP.IN on QM2 and QM3, NOTFIXED, enabled, resumed; QM2 hosts it
    with CLWLUSEQ(ANY). No rule has anything to say."""
    qm1 = estate(tmp_path / "QM1", "QM1", {"QM2": {}, "QM3": {}}, {"APP.IN": {"QM2": {}, "QM3": {}}},
                 {"CLWLUSEQ": "ANY"})
    qm2 = estate(tmp_path / "QM2", "QM2", {"QM3": {}}, {"APP.IN": {"QM2": {}, "QM3": {}}}, {"CLWLUSEQ": "LOCAL"},
                 [("DISPLAY QLOCAL(*) ALL", [qlocal("APP.IN", CLWLUSEQ="ANY", DEFBIND="NOTFIXED")])])
    assert lint_folders(qm1, qm2) == []


# -- clussdr-workload-attrs ---------------------------------------------------------------------------------------
def test_clussdr_workload_attrs_fires_for_values_other_than_the_defaults(tmp_path):
    """QM1 has a manual CLUSSDR TO.QM2 (CLUSQMGR DEFTYPE CLUSSDRB) defined with CLWLWGHT(80) and CLWLRANK(0);
    QM2's CLUSRCVR advertises CLWLWGHT(50). MQ uses 50: the finding names CLWLWGHT only (CLWLRANK(0) is the
    default), and the remedy moves 80 to the CLUSRCVR on QM2."""
    qm1 = estate(tmp_path / "QM1", "QM1", {"QM2": {"DEFTYPE": "CLUSSDRB"}}, {"APP.IN": {"QM2": {}}},
                 {"CLWLUSEQ": "ANY"},
                 [("DISPLAY CHANNEL(*) ALL", [channel("TO.QM2", "CLUSSDR", CLWLWGHT="80", CLWLRANK="0",
                                                      CLWLPRTY="0"),
                                              channel("TO.QM1", "CLUSRCVR", CLWLWGHT="70")])])
    found = of(lint_folders(qm1), "clussdr-workload-attrs")
    assert [(f.qmgr, f.object) for f in found] == [("QM1", "TO.QM2")]
    assert "CLWLWGHT(80)" in found[0].detail and "CLWLRANK" not in found[0].detail
    assert "QM2's CLUSRCVR advertises CLWLWGHT(50)" in found[0].detail
    assert "ALTER CHANNEL(TO.QM2) CHLTYPE(CLUSRCVR) CLWLWGHT(80) on QM2" in found[0].remedy
    # The engine routes with the advertised 50, not 80 (the view keeps DISPLAY CLUSQMGR's values).
    assert view_of(qm1).channels_to("QM2")[0].clwlwght == 50


def test_clussdr_workload_attrs_is_silent_on_defaults_and_when_channels_were_not_captured(tmp_path):
    defaults = estate(tmp_path / "a" / "QM1", "QM1", {"QM2": {"DEFTYPE": "CLUSSDRB"}}, {},
                      extra=[("DISPLAY CHANNEL(*) ALL", [channel("TO.QM2", "CLUSSDR", CLWLWGHT="50",
                                                                 CLWLRANK="0", CLWLPRTY="0")])])
    uncaptured = estate(tmp_path / "b" / "QM1", "QM1", {"QM2": {"DEFTYPE": "CLUSSDRB", "CLWLWGHT": "80"}}, {})
    assert of(lint_folders(defaults), "clussdr-workload-attrs") == []
    assert of(lint_folders(uncaptured), "clussdr-workload-attrs") == []


# -- local-instance-wins ------------------------------------------------------------------------------------------
def test_local_instance_wins_with_mq_s_own_defaults(tmp_path):
    """QM1 hosts APP.IN (QCLUSTER on QM1 and QM2), no DISPLAY QLOCAL captured: the queue's CLWLUSEQ is MQ's
    default QMGR, the queue manager's LOCAL. Step 3 chooses the local instance: the finding fires, and the
    replay agrees (every message local, decided by step 3)."""
    qm1 = estate(tmp_path / "QM1", "QM1", {"QM2": {}}, {"APP.IN": {"QM1": {}, "QM2": {}}}, {"CLWLUSEQ": "LOCAL"})
    found = of(lint_folders(qm1), "local-instance-wins")
    assert [(f.qmgr, f.object) for f in found] == [("QM1", "APP.IN")]
    assert "CLWLUSEQ(QMGR)" in found[0].detail and "the instances on QM2 get none" in found[0].detail
    assert "ALTER QLOCAL(APP.IN) CLWLUSEQ(ANY) on QM1" in found[0].remedy
    routes = [Router(view_of(qm1)).route(Request(queue="APP.IN")) for _ in range(3)]
    assert {(r.qmgr, r.channel, r.decided_by) for r in routes} == {("QM1", None, "3")}


def test_local_instance_wins_with_the_queue_s_clwluseq_local(tmp_path):
    """The queue manager says ANY, but the queue's own CLWLUSEQ(LOCAL) decides step 3."""
    qm1 = estate(tmp_path / "QM1", "QM1", {"QM2": {}}, {"APP.IN": {"QM1": {}, "QM2": {}}}, {"CLWLUSEQ": "ANY"},
                 [("DISPLAY QLOCAL(*) ALL", [qlocal("APP.IN", CLWLUSEQ="LOCAL", DEFBIND="NOTFIXED")])])
    found = of(lint_folders(qm1), "local-instance-wins")
    assert [f.object for f in found] == ["APP.IN"] and "CLWLUSEQ(LOCAL) on the queue" in found[0].detail


def test_local_instance_does_not_win_with_clwluseq_any(tmp_path):
    """Queue CLWLUSEQ(QMGR) with the queue manager's ANY: step 3 does not choose; the replay shares the
    messages between QM1 and QM2 (step 12)."""
    qm1 = estate(tmp_path / "QM1", "QM1", {"QM2": {}}, {"APP.IN": {"QM1": {}, "QM2": {}}}, {"CLWLUSEQ": "ANY"})
    assert of(lint_folders(qm1), "local-instance-wins") == []
    router = Router(view_of(qm1))
    assert {router.route(Request(queue="APP.IN")).qmgr for _ in range(4)} == {"QM1", "QM2"}


# -- bind-on-open-default and alias-overrides-bind ------------------------------------------------------------------
def test_bind_on_open_default_for_a_cluster_queue_and_an_alias_resolving_to_it(tmp_path):
    """QM1 sees APP.IN on QM2 and QM3, both advertising DEFBIND(OPEN); its local alias ALIAS.IN (DEFBIND(OPEN))
    targets it. MQOO_BIND_AS_Q_DEF binds both on open: two findings; the replay's AS_Q_DEF bind makes the
    messages not re-allocatable (bind-on-open)."""
    qm1 = estate(tmp_path / "QM1", "QM1", {"QM2": {}, "QM3": {}},
                 {"APP.IN": {"QM2": {"DEFBIND": "OPEN"}, "QM3": {"DEFBIND": "OPEN"}}}, {"CLWLUSEQ": "ANY"},
                 [("DISPLAY QALIAS(*) ALL", [qalias("ALIAS.IN", "APP.IN", DEFBIND="OPEN")])])
    found = of(lint_folders(qm1), "bind-on-open-default")
    assert [f.object for f in found] == ["ALIAS.IN", "APP.IN"]
    alias, queue = found
    assert "QALIAS(ALIAS.IN) on QM1" in alias.detail and "ALTER QALIAS(ALIAS.IN) DEFBIND(NOTFIXED) on QM1" in \
        alias.remedy
    assert "advertised by the instances of APP.IN on QM2, QM3" in queue.detail
    assert "ALTER QLOCAL(APP.IN) DEFBIND(NOTFIXED) on QM2, QM3" in queue.remedy
    assert "MQOO_BIND_NOT_FIXED" in queue.remedy
    r = Router(view_of(qm1)).route(Request(queue="APP.IN"), bind=AS_Q_DEF, handle="h")
    assert (r.reallocatable, r.not_reallocatable_reason) == (False, "bind-on-open")


def test_bind_on_open_default_is_silent_for_notfixed(tmp_path):
    qm1 = estate(tmp_path / "QM1", "QM1", {"QM2": {}}, {"APP.IN": {"QM2": {}}}, {"CLWLUSEQ": "ANY"},
                 [("DISPLAY QALIAS(*) ALL", [qalias("ALIAS.IN", "APP.IN", DEFBIND="NOTFIXED"),
                                             qalias("ALIAS.LOCAL", "NOT.CLUSTERED", DEFBIND="OPEN")])])
    found = lint_folders(qm1)
    assert of(found, "bind-on-open-default") == [] and of(found, "alias-overrides-bind") == []


def test_alias_overrides_bind_when_the_alias_and_its_target_differ(tmp_path):
    """ALIAS.IN DEFBIND(NOTFIXED) over APP.IN DEFBIND(OPEN): the alias wins for whoever opens the alias (the
    replay's AS_Q_DEF through the alias is NOTFIXED, re-allocatable), the queue stays OPEN for whoever opens it
    directly."""
    qm1 = estate(tmp_path / "QM1", "QM1", {"QM2": {}, "QM3": {}},
                 {"APP.IN": {"QM2": {"DEFBIND": "OPEN"}, "QM3": {"DEFBIND": "OPEN"}}}, {"CLWLUSEQ": "ANY"},
                 [("DISPLAY QALIAS(*) ALL", [qalias("ALIAS.IN", "APP.IN", DEFBIND="NOTFIXED")])])
    found = of(lint_folders(qm1), "alias-overrides-bind")
    assert [(f.qmgr, f.object) for f in found] == [("QM1", "ALIAS.IN")]
    assert "DEFBIND(NOTFIXED)" in found[0].detail and "DEFBIND(OPEN)" in found[0].detail
    # They agree on NOTFIXED, not on OPEN (which bind-on-open-default warns about).
    assert "make them agree, ALTER QLOCAL(APP.IN) DEFBIND(NOTFIXED) on QM2, QM3" in found[0].remedy
    router = Router(view_of(qm1))
    assert router.route(Request(queue="ALIAS.IN"), bind=AS_Q_DEF, handle="a").reallocatable is True
    assert router.route(Request(queue="APP.IN"), bind=AS_Q_DEF, handle="b").reallocatable is False


def test_alias_overrides_bind_with_an_open_alias_over_a_notfixed_queue(tmp_path):
    """ALIAS.IN DEFBIND(OPEN) over APP.IN DEFBIND(NOTFIXED): the remedy changes the alias."""
    qm1 = estate(tmp_path / "QM1", "QM1", {"QM2": {}}, {"APP.IN": {"QM2": {}}}, {"CLWLUSEQ": "ANY"},
                 [("DISPLAY QALIAS(*) ALL", [qalias("ALIAS.IN", "APP.IN", DEFBIND="OPEN")])])
    found = of(lint_folders(qm1), "alias-overrides-bind")
    assert [f.remedy.split(";")[0] for f in found] == ["make them agree, ALTER QALIAS(ALIAS.IN) DEFBIND(NOTFIXED) on QM1"]


def test_alias_overrides_bind_says_nothing_when_the_target_s_defbind_is_not_known(tmp_path):
    """APP.IN's instances disagree (OPEN on QM2, NOTFIXED on QM3): no definition decides the target's bind."""
    qm1 = estate(tmp_path / "QM1", "QM1", {"QM2": {}, "QM3": {}},
                 {"APP.IN": {"QM2": {"DEFBIND": "OPEN"}, "QM3": {}}}, {"CLWLUSEQ": "ANY"},
                 [("DISPLAY QALIAS(*) ALL", [qalias("ALIAS.IN", "APP.IN", DEFBIND="NOTFIXED")])])
    assert of(lint_folders(qm1), "alias-overrides-bind") == []


# -- MQOO_BIND_AS_Q_DEF: which definition decides --------------------------------------------------------------------
def test_bind_decision_names_the_definition_queue_defbind_takes(tmp_path):
    """An alias's DEFBIND first, then a local queue's, then what the instances advertise; instances that
    disagree, or nothing known: OPEN, MQ's default, decided by no definition."""
    qm1 = estate(tmp_path / "QM1", "QM1", {"QM2": {}, "QM3": {}},
                 {"APP.IN": {"QM1": {}, "QM2": {}}, "APP.MIXED": {"QM2": {"DEFBIND": "OPEN"}, "QM3": {}},
                  "APP.GRP": {"QM2": {"DEFBIND": "GROUP"}}}, {"CLWLUSEQ": "ANY"},
                 [("DISPLAY QLOCAL(*) ALL", [qlocal("APP.IN", DEFBIND="OPEN")]),
                  ("DISPLAY QALIAS(*) ALL", [qalias("ALIAS.IN", "APP.IN", DEFBIND="NOTFIXED")])])
    view = view_of(qm1)
    cases = {"ALIAS.IN": ("notfixed", "QALIAS(ALIAS.IN) on QM1"), "APP.IN": ("open", "QLOCAL(APP.IN) on QM1"),
             "APP.GRP": ("group", "the cluster queue APP.GRP (QM2)"), "APP.MIXED": ("open", ""),
             "NOWHERE": ("open", "")}
    for queue, (bind, definition) in cases.items():
        d = bind_decision(view, queue)
        assert (d.bind, d.definition) == (bind, definition), queue
        assert d.bind == queue_defbind(view, queue)
    assert "QM2 OPEN, QM3 NOTFIXED" in bind_decision(view, "APP.MIXED").why


# -- put-disabled-instance -----------------------------------------------------------------------------------------
def test_put_disabled_instance(tmp_path):
    """QM3's instance of APP.IN is PUT(DISABLED): the finding names it; step 1 drops it, so the replay sends
    everything to QM2, decided by step 1."""
    qm1 = estate(tmp_path / "QM1", "QM1", {"QM2": {}, "QM3": {}},
                 {"APP.IN": {"QM2": {}, "QM3": {"PUT": "DISABLED"}}}, {"CLWLUSEQ": "ANY"})
    found = of(lint_folders(qm1), "put-disabled-instance")
    assert [(f.qmgr, f.object, f.seen_by) for f in found] == [("QM3", "APP.IN", ("QM1",))]
    assert "QM3's instance of APP.IN is PUT(DISABLED)" in found[0].detail
    assert "every other instance" not in found[0].detail
    assert found[0].remedy.startswith("ALTER QLOCAL(APP.IN) PUT(ENABLED) on QM3")
    r = Router(view_of(qm1)).route(Request(queue="APP.IN"))
    assert (r.qmgr, r.decided_by) == ("QM2", "1")


def test_put_disabled_everywhere_says_puts_fail_and_enabled_says_nothing(tmp_path):
    off = estate(tmp_path / "a" / "QM1", "QM1", {"QM2": {}, "QM3": {}},
                 {"APP.IN": {"QM2": {"PUT": "DISABLED"}, "QM3": {"PUT": "DISABLED"}}})
    on = estate(tmp_path / "b" / "QM1", "QM1", {"QM2": {}, "QM3": {}}, {"APP.IN": {"QM2": {}, "QM3": {}}})
    found = of(lint_folders(off), "put-disabled-instance")
    assert len(found) == 2 and all("MQRC_CLUSTER_PUT_INHIBITED (2268)" in f.detail for f in found)
    assert of(lint_folders(on), "put-disabled-instance") == []


# -- single-instance ------------------------------------------------------------------------------------------------
def test_single_instance_and_what_other_observers_know(tmp_path):
    """QM1 sees APP.AUDIT on QM3 alone: fires. QM3's own view shows only its instance of APP.IN, but QM1 sees
    APP.IN on QM2 and QM3: a partial repository's narrow view is completed by the others, so no finding for
    APP.IN from either."""
    qm1 = estate(tmp_path / "QM1", "QM1", {"QM2": {}, "QM3": {}},
                 {"APP.AUDIT": {"QM3": {}}, "APP.IN": {"QM2": {}, "QM3": {}}}, {"CLWLUSEQ": "ANY"})
    qm3 = estate(tmp_path / "QM3", "QM3", {}, {"APP.IN": {"QM3": {}}}, {"CLWLUSEQ": "ANY"})
    found = of(lint_folders(qm1, qm3), "single-instance")
    assert [(f.qmgr, f.object, f.seen_by) for f in found] == [("QM3", "APP.AUDIT", ("QM1",))]
    assert "hosted by QM3 alone" in found[0].detail
    assert "DEFINE QLOCAL(APP.AUDIT) CLUSTER(CL1)" in found[0].remedy
    alone = estate(tmp_path / "b" / "QM3", "QM3", {}, {"APP.IN": {"QM3": {}}}, {"CLWLUSEQ": "ANY"})
    assert [f.object for f in of(lint_folders(alone), "single-instance")] == ["APP.IN"]


# -- suspended-qmgr -------------------------------------------------------------------------------------------------
def test_suspended_qmgr(tmp_path):
    """QM3 advertises SUSPEND(YES): step 5 prefers QM2 (resumed) while it hosts APP.IN; the finding's remedy is
    RESUME QMGR on QM3. Nothing is suspended in the other estate."""
    qm1 = estate(tmp_path / "QM1", "QM1", {"QM2": {}, "QM3": {"SUSPEND": "YES"}},
                 {"APP.IN": {"QM2": {}, "QM3": {}}}, {"CLWLUSEQ": "ANY"})
    found = of(lint_folders(qm1), "suspended-qmgr")
    assert [(f.qmgr, f.object, f.seen_by) for f in found] == [("QM3", "QM3", ("QM1",))]
    assert found[0].remedy.startswith("RESUME QMGR CLUSTER(CL1) on QM3")
    router = Router(view_of(qm1))
    assert {(router.route(Request(queue="APP.IN")).qmgr) for _ in range(3)} == {"QM2"}
    resumed = estate(tmp_path / "b" / "QM1", "QM1", {"QM2": {}, "QM3": {}}, {"APP.IN": {"QM2": {}, "QM3": {}}})
    assert of(lint_folders(resumed), "suspended-qmgr") == []


# -- mruc-below-instances ---------------------------------------------------------------------------------------------
def test_mruc_below_instances(tmp_path):
    """CLWLMRUC(2) on QM1, APP.IN on QM2, QM3 and QM4: step 11c keeps the 2 most recently used channels, so
    over 12 messages the replay never reaches a third queue manager (the first two choices, by step 12's name
    tie-break, are QM2 and QM3; from then on 11c keeps those two)."""
    qm1 = estate(tmp_path / "QM1", "QM1", {"QM2": {}, "QM3": {}, "QM4": {}},
                 {"APP.IN": {"QM2": {}, "QM3": {}, "QM4": {}}}, {"CLWLUSEQ": "ANY", "CLWLMRUC": "2"})
    found = of(lint_folders(qm1), "mruc-below-instances")
    assert [(f.qmgr, f.object) for f in found] == [("QM1", "APP.IN")]
    assert "CLWLMRUC(2)" in found[0].detail and "3 other queue managers (QM2, QM3, QM4)" in found[0].detail
    assert found[0].remedy.startswith("ALTER QMGR CLWLMRUC(3) or more on QM1")
    router = Router(view_of(qm1))
    assert {router.route(Request(queue="APP.IN")).qmgr for _ in range(12)} == {"QM2", "QM3"}
    enough = estate(tmp_path / "b" / "QM1", "QM1", {"QM2": {}, "QM3": {}, "QM4": {}},
                    {"APP.IN": {"QM2": {}, "QM3": {}, "QM4": {}}}, {"CLWLUSEQ": "ANY", "CLWLMRUC": "3"})
    assert of(lint_folders(enough), "mruc-below-instances") == []


# -- several observers ------------------------------------------------------------------------------------------------
def test_observations_are_linted_together_and_sorted(tmp_path):
    """Two observers each seeing QM3 suspended: one finding, on QM3, seen by both; the order does not depend on
    the order the captures were given in."""
    qm1 = estate(tmp_path / "QM1", "QM1", {"QM3": {"SUSPEND": "YES"}}, {}, {"CLWLUSEQ": "ANY"})
    qm2 = estate(tmp_path / "QM2", "QM2", {"QM3": {"SUSPEND": "YES"}}, {}, {"CLWLUSEQ": "ANY"})
    obs = [observe(f.name, read_captures([f]).records) for f in (qm2, qm1)]
    found = lint_observations(obs)
    assert [(f.rule, f.qmgr, f.object, f.seen_by) for f in found] == [("suspended-qmgr", "QM3", "QM3",
                                                                      ("QM1", "QM2"))]
    assert lint_observations(reversed(obs)) == found
