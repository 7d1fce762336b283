"""Intra-group queuing from what the landing holds (issue 38), without Spark: the z/OS DISPLAY GROUP and DISPLAY
CFSTRUCT answers, the size limit and which limit decided, the group as of each capture, the evidence gap, and the
lint rules where IGQ quietly does nothing.

The rules (IBM "Clustering with intra-group queuing"; docs/algorithm.md): a message takes SYSTEM.QSG.TRANSMIT.QUEUE
when the sender has IGQ(ENABLED), the destination is another member of its queue-sharing group, and the message
fits: length <= min(MAXMSGL of the shared queue, the structure's limit) - 428 (the MQXQH), the structure's limit
being 63 KB = 64,512 below CFLEVEL(4) and 100 MB = 104,857,600 from CFLEVEL(4) (offload to Db2 or SMDS).
"""

from __future__ import annotations

from datetime import datetime, timezone

from clwl.analyses.check import check_landing
from clwl.analyses.lint import lint_captures
from clwl.cli import main
from clwl.engine.model import QSG_XMITQ, SCTQ
from clwl.engine.qsg import membership_from_history
from clwl.engine.replay import timeline_from_history
from clwl.engine.view import build_view
from clwl.engine.xmitq import delivery, igq_limit
from clwl.parse.zos import parse_zos_text
from tests.handmade import IGQ_DAY, MB, igq_landing, write_day, zos_config_capture

QUEUES = {"APP.Q": ["MQ3A"]}


def _records(text: str):
    cap = parse_zos_text(text, "config_060000.txt")
    assert not cap.problems, cap.problems
    return cap.records


def test_display_group_and_cfstruct_are_read():
    text = zos_config_capture("MQ1A", "QSG1", True, ["MQ3A"], QUEUES, group=["MQ1A", "MQ2A", "MQ3A"],
                              cfstruct={"CFLEVEL": "5", "OFFLOAD": "SMDS"}, qsg_xmitq_maxmsgl=100 * MB)
    recs = _records(text)
    members = [(r.attrs["QSGNAME"], r.attrs["QSGMEMBER"], r.attrs["QMSTATUS"]) for r in recs if r.kind == "QSGMEMBER"]
    assert members == [("QSG1", "MQ1A", "ACTIVE"), ("QSG1", "MQ2A", "ACTIVE"), ("QSG1", "MQ3A", "ACTIVE")]
    (struct,) = [r for r in recs if r.kind == "CFSTRUCT"]
    assert (struct.attrs["CFSTRUCT"], struct.attrs["CFLEVEL"], struct.attrs["OFFLOAD"]) == ("APPL1", "5", "SMDS")
    # MQ2A is a member only by DISPLAY GROUP: the view holds it (MQ1A itself is not its own member).
    view, _ = build_view(recs, "MQ1A")
    assert view.qsg_members == {"MQ2A", "MQ3A"}


def test_a_broken_member_line_costs_only_itself():
    text = zos_config_capture("MQ1A", "QSG1", True, ["MQ3A"], QUEUES, group=["MQ1A", "MQ3A"])
    text = text.replace("MQ3A   2 +MQ3A", "MQ3A   ?? +MQ3A")
    cap = parse_zos_text(text, "f")
    assert [p.reason.split(":")[0] for p in cap.problems] == ["not a DISPLAY GROUP member line"]
    assert [r.attrs["QSGMEMBER"] for r in cap.records if r.kind == "QSGMEMBER"] == ["MQ1A"]
    assert any(r.kind == "QMGR" for r in cap.records)  # the rest of the file goes on


def test_the_limit_and_which_limit_decided():
    # CFLEVEL(3), MAXMSGL 64,512: both 64,512; 64,512 - 428 = 64,084 (IBM's example).
    small = igq_limit("64512", "APPL1", {"CFLEVEL": "3"})
    assert small.max_message == 64_084
    # MAXMSGL below the structure's 63 KB decides: 32,768 - 428 = 32,340.
    q = igq_limit("32768", "APPL1", {"CFLEVEL": "3"})
    assert q.max_message == 32_340 and "MAXMSGL" in q.why
    # CFLEVEL(5) with offload, MAXMSGL 100 MB: 104,857,600 - 428 = 104,857,172; a 1 MB message fits.
    big = igq_limit(str(100 * MB), "APPL2", {"CFLEVEL": "5", "OFFLOAD": "SMDS"})
    assert big.max_message == 104_857_172 and "CFLEVEL(5) with OFFLOAD(SMDS)" in big.why
    # CFLEVEL(5) but the queue's MAXMSGL 4 MB (MQ's default): 4,194,304 - 428 = 4,193,876.
    assert igq_limit("4194304", "APPL2", {"CFLEVEL": "5"}).max_message == 4_193_876
    # No structure captured: assumed 63 KB (CFLEVEL(3), IBM's example), and the reason says so.
    assumed = igq_limit(None, "APPL1", None)
    assert assumed.max_message == 64_084 and "assumed" in assumed.why and "APPL1 not captured" in assumed.why


def test_explain_names_the_limit_that_decided():
    """The issue's own line: 65,536 bytes > 64,084: 64,512 (MAXMSGL) less the 428-byte MQXQH; cluster path."""
    recs = _records(zos_config_capture("MQ1A", "QSG1", True, ["MQ3A"], QUEUES, qsg_xmitq_maxmsgl=64_512))
    view, _ = build_view(recs, "MQ1A", ["MQ3A"])
    channel = view.channels_to("MQ3A")[0]
    d = delivery(view, "MQ3A", channel, 65_536)
    assert (d.path, d.xmitq) == ("cluster", SCTQ)
    assert d.why.startswith("too large for intra-group queuing: 65,536 bytes > 64,084 = 64,512 (MAXMSGL of "
                            f"{QSG_XMITQ}) less the 428-byte MQXQH; cluster path")
    assert delivery(view, "MQ3A", channel, 64_084).path == "igq"
    # The receiver's IGQ does not matter, the sender's does: the same view with IGQ(DISABLED) on the sender.
    off, _ = build_view(_records(zos_config_capture("MQ1A", "QSG1", False, ["MQ3A"], QUEUES)), "MQ1A", ["MQ3A"])
    assert delivery(off, "MQ3A", off.channels_to("MQ3A")[0], 100).path == "cluster"


def _hist(qm: str, text: str, at: datetime, until: datetime | None = None):
    return [(qm, r.kind, dict(r.attrs), at, until) for r in _records(text)]


def test_a_member_that_joins_mid_day_counts_from_its_capture():
    """MQ3A shows no QSGNAME at 06:00 and QSGNAME(QSG1) from its 12:00 capture: MQ1A's timeline gets a snapshot at
    12:00 (no capture of MQ1A's own then), before which MQ3A is outside the group and after which it is in it."""
    t6, t12 = (datetime(2026, 11, 20, h, tzinfo=timezone.utc) for h in (6, 12))
    start, end = datetime(2026, 11, 20, tzinfo=timezone.utc), datetime(2026, 11, 21, tzinfo=timezone.utc)
    mq1a = _hist("MQ1A", zos_config_capture("MQ1A", "QSG1", True, ["MQ3A"], QUEUES), t6)
    mq3a = (_hist("MQ3A", zos_config_capture("MQ3A", "", False, ["MQ1A"], QUEUES), t6, t12)
            + _hist("MQ3A", zos_config_capture("MQ3A", "QSG1", False, ["MQ1A"], QUEUES), t12))
    groups = membership_from_history((qm, k, a, vf, vt) for qm, k, a, vf, vt in mq3a + mq1a)
    rows = [(k, a, vf, vt, "f") for _qm, k, a, vf, vt in mq1a]
    timeline = timeline_from_history("MQ1A", rows, start, end, groups=groups)
    assert [(s.time.hour, sorted(s.view.qsg_members)) for s in timeline] == [(6, []), (12, ["MQ3A"])]


def test_check_and_route_name_an_igq_sender_whose_group_shows_no_member(tmp_path, capsys):
    """MQ4B has IGQ(ENABLED) in QSG2 and is the only queue manager of QSG2 captured that day: an evidence gap in
    clwl check (kind igq_no_member) and a warning from clwl route; with MQ5B's capture beside it, none."""
    landing = tmp_path / "landing"
    write_day(landing, IGQ_DAY, "MQ4B", {"config_060000.txt": zos_config_capture("MQ4B", "QSG2", True, ["MQ5B"],
                                                                               {"APP.B": ["MQ5B"]})})
    gaps = [g for g in check_landing(landing).gaps if g.kind == "igq_no_member"]
    assert [(g.qmgr, "capture DISPLAY GROUP on MQ4B" in g.detail) for g in gaps] == [("MQ4B", True)]
    assert main(["route", "--mqsc", str(landing / IGQ_DAY / "MQ4B"), "--queue", "APP.B"]) == 0
    assert "no other member of QSG2 is captured" in capsys.readouterr().err

    write_day(landing, IGQ_DAY, "MQ5B", {"config_060000.txt": zos_config_capture("MQ5B", "QSG2", False, ["MQ4B"],
                                                                               {"APP.B": ["MQ5B"]})})
    assert not [g for g in check_landing(landing).gaps if g.kind == "igq_no_member"]
    assert main(["route", "--mqsc", str(landing / IGQ_DAY / "MQ4B"), "--queue", "APP.B", "--json"]) == 0
    out = capsys.readouterr()
    assert '"path": "igq"' in out.out and "no other member" not in out.err


def test_lint_finds_igq_that_carries_nothing(tmp_path):
    """MQ1A and MQ3A are in QSG1 with IGQ(ENABLED) on MQ1A, but APP.Q is hosted by QMD alone (outside the group):
    igq-no-member-host on MQ1A, once. In the hand-made estate of tests/spark/test_igq_day.py MQ3A hosts APP.Q:
    no finding there."""
    queues = {"APP.Q": ["QMD"]}
    recs = {"MQ1A": _records(zos_config_capture("MQ1A", "QSG1", True, ["MQ3A", "QMD"], queues)),
            "MQ3A": _records(zos_config_capture("MQ3A", "QSG1", False, ["MQ1A", "QMD"], queues))}
    found = [f for f in lint_captures(recs) if f.rule == "igq-no-member-host"]
    assert [(f.qmgr, f.object) for f in found] == [("MQ1A", "QMGR MQ1A")]
    assert "its other members (MQ3A) host none of the cluster queues it sees" in found[0].detail

    landing = igq_landing(tmp_path / "landing")
    day = landing / IGQ_DAY
    recs = {qm: [r for f in sorted((day / qm).glob("config_*")) for r in _read(f)] for qm in ("MQ1A", "MQ3A")}
    assert not [f for f in lint_captures(recs) if f.rule == "igq-no-member-host"]


def _read(path):
    from clwl.engine.view import parse_capture_file

    return parse_capture_file(path).records


def test_lint_counts_the_messages_too_large_for_the_shared_queue():
    """igq-limit-too-small, from the day's counts (on a lake: gold.routing_replay): MQ1A sent 10 messages to members
    of QSG1, 7 of them over 64,084 bytes (MAXMSGL 64,512 less the MQXQH): more than half, a finding naming the
    count and the MAXMSGL that decided, with ALTER QLOCAL(SYSTEM.QSG.TRANSMIT.QUEUE) MAXMSGL as the fix. 5 of 10 is
    not most: no finding."""
    from clwl.analyses.lint import lint_observations, observe

    recs = _records(zos_config_capture("MQ1A", "QSG1", True, ["MQ3A"], QUEUES, qsg_xmitq_maxmsgl=64_512))
    obs = [observe("MQ1A", recs), observe("MQ3A", _records(zos_config_capture("MQ3A", "QSG1", False, ["MQ1A"],
                                                                            QUEUES)))]
    found = [f for f in lint_observations(obs, igq_traffic={"MQ1A": (10, 7)}) if f.rule == "igq-limit-too-small"]
    assert [(f.qmgr, f.object) for f in found] == [("MQ1A", "QLOCAL SYSTEM.QSG.TRANSMIT.QUEUE")]
    assert "7 of the 10 messages MQ1A sent to members of QSG1" in found[0].detail and "MAXMSGL" in found[0].detail
    assert found[0].remedy.startswith("ALTER QLOCAL(SYSTEM.QSG.TRANSMIT.QUEUE) MAXMSGL(n) on MQ1A")
    assert not [f for f in lint_observations(obs, igq_traffic={"MQ1A": (10, 5)}) if f.rule == "igq-limit-too-small"]
