"""Transmission queue and delivery path (docs/algorithm.md, "Transmission queue and path").

003: "The transmission queue a channel uses is determined by searching for a matching CLCHNAME value. If
multiple matches are found then the most specific match takes precedence. If no match is found then the value
of the DEFCLQX attribute is used"; DEFCLXQ(SCTQ) -> SYSTEM.CLUSTER.TRANSMIT.QUEUE, DEFCLXQ(CHANNEL) ->
SYSTEM.CLUSTER.TRANSMIT.<channel-name>; CLCHNAME "supports wildcards in any position". Contract reading 7: an
exact match beats a generic one; among generic ones, more characters other than '*' wins; then the
transmission queue name, ascending. Switching: "each channel queries the transmission queue it should use
when it starts" and, while switching, "new messages for the channel are queued to the old transmission queue".

004: intra-group queuing carries small messages between members of one queue-sharing group over
SYSTEM.QSG.TRANSMIT.QUEUE; large ones (CFLEVEL(3): "messages only up to 63 KB") and messages to queue
managers outside the group go over the cluster transmission queue.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from clwl_builders import SCTQ, chan, inst, make_view, req, route_n, xmitq  # noqa: E402

from clwl.engine.model import IGQ_DEFAULT_MAX_MESSAGE, QSG_XMITQ, LocalQueue  # noqa: E402
from clwl.engine.router import Router  # noqa: E402
from clwl.engine.xmitq import channel_xmitq, clchname_matches, configured_xmitq, delivery  # noqa: E402

EXAMPLE_003 = [xmitq("CLUSTER.XMITQ1", "AAA.*"), xmitq("CLUSTER.XMITQ2", "AAA.BBB")]


@pytest.mark.parametrize("channel,defclxq,expected", [
    ("AAA.BBB", "SCTQ", "CLUSTER.XMITQ2"),  # "a specific CLCHNAME value that matches the name"
    ("AAA.CCC", "SCTQ", "CLUSTER.XMITQ1"),  # "generic CLCHNAME value ... not a more specific match"
    ("XXX.YYY", "SCTQ", SCTQ),  # "depends on the value of the DEFCLXQ queue manager attribute"
    ("XXX.YYY", "CHANNEL", "SYSTEM.CLUSTER.TRANSMIT.XXX.YYY"),
    ("AAA.BBB", "CHANNEL", "CLUSTER.XMITQ2"),  # a CLCHNAME match wins over DEFCLXQ(CHANNEL) too
])
def test_003_worked_example(channel, defclxq, expected):
    """003's example (CLUSTER.XMITQ1 CLCHNAME('AAA.*'), CLUSTER.XMITQ2 CLCHNAME('AAA.BBB')), quoted per case."""
    view = make_view(local_queues=EXAMPLE_003, defclxq=defclxq)
    assert configured_xmitq(channel, view)[0] == expected


@pytest.mark.parametrize("pattern,channel,matches", [
    ("ABC.*", "ABC.QM2", True),  # "ABC.* matches any channel with a name that starts with ABC followed by a dot"
    ("ABC.*", "ABCD.QM2", False),
    ("*.QM2", "SALES.QM2", True),  # wildcard at the start
    ("SALES.*.X", "SALES.QM2.X", True),  # wildcard in the middle
    ("SALES.*.X", "SALES.QM2.Y", False),
    ("SALES.QM2", "SALES.QM2", True),
    ("SALES.QM2", "SALES.QM22", False),  # no wildcard: the whole name
    ("", "SALES.QM2", False),  # blank CLCHNAME: not a cluster transmission queue for anyone
])
def test_clchname_wildcards(pattern, channel, matches):
    """003: CLCHNAME "supports wildcards in any position"; notes: asterisks at start, end or in the middle."""
    assert clchname_matches(pattern, channel) is matches


def test_most_specific_generic_match_wins():
    """Reading 7: AAA.* (4 non-'*' characters) vs AAA.B* (5): AAA.BCD -> the AAA.B* queue; an exact
    AAA.BCD beats both; two generic matches with 5 non-'*' characters -> queue name ascending."""
    qs = [xmitq("XQ.SHORT", "AAA.*"), xmitq("XQ.LONGER", "AAA.B*")]
    assert configured_xmitq("AAA.BCD", make_view(local_queues=qs))[0] == "XQ.LONGER"
    qs.append(xmitq("XQ.ZEXACT", "AAA.BCD"))
    assert configured_xmitq("AAA.BCD", make_view(local_queues=qs))[0] == "XQ.ZEXACT"
    tie = [xmitq("XQ.B", "AAA.*D"), xmitq("XQ.A", "AAA.B*")]
    assert configured_xmitq("AAA.BCD", make_view(local_queues=tie))[0] == "XQ.A"


def test_only_usage_xmitq_queues_count():
    """CLCHNAME is a transmission-queue attribute (notes: "if CLCHNAME set, USAGE must be XMITQ"): a NORMAL
    queue carrying a CLCHNAME value is not a cluster transmission queue."""
    view = make_view(local_queues=[LocalQueue("NOT.AN.XMITQ", usage="NORMAL", clchname="TO.*")])
    assert configured_xmitq("TO.QM2", view)[0] == SCTQ


def test_running_channel_keeps_current_xmitq_until_restart():
    """003 switching: a channel uses the newly configured queue only once it (re)starts; it reports its
    current queue (CHSTATUS / CLUSQMGR XMITQ). Configured CLUSTER.XMITQ1 via CLCHNAME(TO.*), channel still
    on SCTQ -> SCTQ; channel reporting CLUSTER.XMITQ1 -> CLUSTER.XMITQ1; no report -> the configuration."""
    view = make_view(local_queues=[xmitq("CLUSTER.XMITQ1", "TO.*")])
    assert channel_xmitq(chan("QM2", state="RUNNING", current_xmitq=SCTQ), view)[0] == SCTQ
    assert channel_xmitq(chan("QM2", state="RUNNING", current_xmitq="CLUSTER.XMITQ1"), view)[0] == "CLUSTER.XMITQ1"
    assert channel_xmitq(chan("QM2"), view)[0] == "CLUSTER.XMITQ1"


def test_local_instance_has_no_xmitq():
    """Contract: xmitq is null and path "local" when the local instance is chosen (step 3 here)."""
    view = make_view([chan("QM2")], [inst("QM1"), inst("QM2")])
    r = Router(view).route(req())
    assert (r.qmgr, r.channel, r.xmitq, r.path) == ("QM1", None, None, "local")


# =====================================================================================================
# Intra-group queuing
# =====================================================================================================
def igq_view(**kw):
    """Figure 1 of 004: QMG1 (sending), QMG2, QMG3 in queue-sharing group SQ26; QMG4 outside; CLUSQ1 on
    QMG2, QMG3, QMG4."""
    return make_view([chan("QMG2", "TO.QMG2"), chan("QMG3", "TO.QMG3"), chan("QMG4", "TO.QMG4")],
                     [inst(q, "CLUSQ1") for q in ("QMG2", "QMG3", "QMG4")],
                     local="QMG1", qsgname="SQ26", qsg_members=("QMG1", "QMG2", "QMG3"), **kw)


def test_igq_default_limit_is_63kb_less_the_transmission_header():
    """004: CFLEVEL(3) holds "messages only up to 63 KB" = 63 x 1024 = 64512 bytes; notes B23: "IGQ limit =
    max shared-queue msg length - MQXQH", MQXQH = 4 + 4 + 48 + 48 + 324 = 428 -> 64084 bytes of data."""
    assert IGQ_DEFAULT_MAX_MESSAGE == 63 * 1024 - (4 + 4 + 48 + 48 + 324) == 64084
    view = igq_view(igq=True)
    ch = chan("QMG2", "TO.QMG2")
    assert delivery(view, "QMG2", ch, 64084).path == "igq"
    assert delivery(view, "QMG2", ch, 64085).path == "cluster"


@pytest.mark.parametrize("target,size,path,xq", [
    ("QMG2", 1000, "igq", QSG_XMITQ),  # "All small messages ... Put to the shared transmission queue"
    ("QMG2", 100_000, "cluster", SCTQ),  # "All large messages ... Put to the SYSTEM.CLUSTER.TRANSMIT.QUEUE"
    ("QMG4", 1000, "cluster", SCTQ),  # "QMG4 is not a member of queue-sharing group SQ26"
    ("QMG4", 100_000, "cluster", SCTQ),
])
def test_igq_path_by_member_and_size(target, size, path, xq):
    """004 figure 1, with the target named so that each case reaches the queue manager it is about."""
    view = igq_view(igq=True)
    r = Router(view).route(req("CLUSQ1", target_qmgr=target, size=size))
    assert (r.qmgr, r.path, r.xmitq) == (target, path, xq)


def test_igq_disabled_uses_cluster_path():
    """IGQ(DISABLED): no intra-group path even to a group member; the cluster transmission queue is used."""
    r = Router(igq_view(igq=False)).route(req("CLUSQ1", target_qmgr="QMG2", size=10))
    assert (r.path, r.xmitq) == ("cluster", SCTQ)


def test_igq_path_chosen_per_message_even_when_bound():
    """004: "message delivery might be divided across the two paths ... without regard to the MQOO_BIND_*
    option": bind on open to QMG2 (first choice, name order), then a small, a large and a small message."""
    router = Router(igq_view(igq=True))
    rs = [router.route(req("CLUSQ1", size=s), bind="open", handle="h") for s in (10, 100_000, 10)]
    assert [(r.qmgr, r.path) for r in rs] == [("QMG2", "igq"), ("QMG2", "cluster"), ("QMG2", "igq")]


def test_igq_does_not_change_the_workload_choice():
    """The path is chosen after the destination: the rotation QMG2, QMG3, QMG4 is the same with and
    without IGQ (each decided by step 12)."""
    with_igq = [r.qmgr for r in route_n(Router(igq_view(igq=True)), req("CLUSQ1", size=10), 6)]
    without = [r.qmgr for r in route_n(Router(igq_view(igq=False)), req("CLUSQ1", size=10), 6)]
    assert with_igq == without == ["QMG2", "QMG3", "QMG4"] * 2


def test_cluster_path_uses_clchname_queue():
    """A remote destination outside the group uses its channel's configured xmitq (CLCHNAME TO.QMG4)."""
    view = igq_view(igq=True, local_queues=[xmitq("XQ.QMG4", "TO.QMG4")])
    r = Router(view).route(req("CLUSQ1", target_qmgr="QMG4", size=10))
    assert (r.path, r.xmitq) == ("cluster", "XQ.QMG4")
