"""``clwl generate --qsg``: a queue-sharing group of z/OS queue managers with intra-group queuing (issue 38, item 5).

The generated captures are read with clwl's own parsers (z/OS CSQUTIL output: DISPLAY QMGR QSGNAME / IGQ, DISPLAY
GROUP, DISPLAY CFSTRUCT, SYSTEM.QSG.TRANSMIT.QUEUE); the observed transmission queue of every put record follows
the IGQ rule (IBM, "Clustering with intra-group queuing"; docs/algorithm.md):

    a message goes over IGQ (SYSTEM.QSG.TRANSMIT.QUEUE) exactly when its sending queue manager is a member with
    IGQ(ENABLED) at the put, its destination is another member of the same group, and its length is at most the
    limit: min(the structure's largest message, MAXMSGL of SYSTEM.QSG.TRANSMIT.QUEUE) less the 428-byte MQXQH;
    otherwise the cluster path (or the local instance); the destination itself is chosen as without IGQ.

and the project's replay (clwl/engine/replay.py, fed the generated captures and put records) agrees with every one.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import pytest

from clwl.cli.generate import add_generate_command
from clwl.engine.replay import PutEvent, replay, timeline_from_captures
from clwl.engine.view import build_view, parse_capture_file
from clwl.generate import GenerateOptions, generate
from clwl.parse.common import InputError
from clwl.parse.puts import parse_puts_file

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_generate import _parse_all, accounted, undelivered_by_receiver  # noqa: E402

QSG_XMITQ = "SYSTEM.QSG.TRANSMIT.QUEUE"
MQXQH = 428

# seed 1's default estate (FR1, FR2, senders QM01 QM02, back ends QM03-QM07), 4 of them in the group
QSG = dict(seed=1, days=2, messages_per_day=6000, observed_every=1, qsg=4, qsg_igq_changes=1.0,
           bind_open_share=0.05, bind_group_share=0.05, named_qmgr_share=0.03)


def _generate(out: Path, **kw) -> dict:
    return generate(GenerateOptions(out=str(out), quiet=True, **kw))


@pytest.fixture(scope="module")
def estate(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("qsg") / "landing"
    return out, _generate(out, **QSG)


@pytest.fixture(scope="module")
def parsed(estate):
    """Every file of the estate through its parser (test_generate._parse_all): puts, accounting, browses, captures,
    problems, rejected files."""
    return _parse_all(estate[0])


def _ts(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _capture_time(day: str, name: str) -> datetime:
    return datetime.strptime(day + name.split("_")[1].split(".")[0], "%Y-%m-%d%H%M%S").replace(tzinfo=timezone.utc)


def _igq_at(truth: dict):
    """The rule's first condition over time: sending queue manager -> IGQ(ENABLED) at a put time, from the ground
    truth's settings at the start and its igq_change events (each effective from its capture)."""
    start = {m: v == "ENABLED" for m, v in truth["qsg"]["igq_at_start"].items()}
    changes = sorted((_ts(e["start"]), e["qmgr"], e["new"] == "ENABLED") for e in truth["events"]
                     if e["kind"] == "igq_change")

    def enabled(qm: str, t: datetime) -> bool:
        on = start.get(qm, False)
        for at, who, value in changes:
            if who == qm and at <= t:
                on = value
        return on

    return enabled


def _expected_path(truth: dict, enabled, r) -> str:
    """The IGQ rule for one put record (its destination: observed_qmgr, every row has one here)."""
    members = set(truth["qsg"]["members"])
    if r.observed_qmgr == r.sending_qmgr:
        return "local"
    if (r.sending_qmgr in members and enabled(r.sending_qmgr, r.put_time) and r.observed_qmgr in members
            and r.length <= truth["qsg"]["igq_max_message"]):
        return "igq"
    return "cluster"


def _sender_timeline(root: Path, qm: str):
    """The sending queue manager's snapshots from its own captures only: its DISPLAY GROUP names the group, its
    DISPLAY QLOCAL / CFSTRUCT the limit."""
    caps = []
    for day in sorted(p for p in root.iterdir() if p.is_dir()):
        for f in sorted((day / qm).glob("*")):
            if f.name.startswith(("config_", "chstatus_")):
                caps.append((_capture_time(day.name, f.name), {"CHSTATUS"} if f.name.startswith("chstatus") else set(),
                             parse_capture_file(f).records))
    return timeline_from_captures(qm, caps)


def _replay_all(root: Path, truth: dict) -> list:
    rows = []
    for qm in truth["estate"]["senders"]:
        tl = _sender_timeline(root, qm)
        for day in sorted(p for p in root.iterdir() if p.is_dir()):
            recs, _problems = parse_puts_file(day / qm / "puts.csv")
            events = sorted((PutEvent(r.msg_id, r.put_time, r.queue, r.target_qmgr, r.bind, r.open_handle or "",
                                      r.group_id or "", r.logical_order, r.from_cluster_channel, r.pcf, r.length,
                                      r.observed_qmgr, r.observed_xmitq) for r in recs), key=lambda e: e.put_time)
            rows += [(qm, r) for r in replay(qm, tl, events)]
    return rows


# --------------------------------------------------------------------------------------------------
# the group as the captures show it


def test_the_group_its_igq_settings_and_limit_from_the_captures(estate):
    """Seed 1 with --qsg 4: the sending queue managers QM01 (IGQ ENABLED) and QM02 (DISABLED), and the back ends
    QM03 (ENABLED) and QM05 (DISABLED: a receiver's setting plays no part), in QSG1; QM04, QM06, QM07, FR1 and FR2
    stay distributed. The default structure is CFLEVEL(3) (IBM's example): 64,512 bytes, MAXMSGL(64512), so the
    limit is 64,512 - 428 = 64,084 bytes. Each member's captures are z/OS CSQUTIL output whose DISPLAY QMGR shows
    QSGNAME(QSG1) and its IGQ, whose DISPLAY GROUP lists the four, and whose view (clwl.engine.view.build_view) has the
    other three as its group and 64,084 as its limit, decided by the structure."""
    root, truth = estate
    q = truth["qsg"]
    assert q["members"] == ["QM01", "QM02", "QM03", "QM05"] and q["sending_members"] == ["QM01", "QM02"]
    assert q["igq_at_start"] == {"QM01": "ENABLED", "QM02": "DISABLED", "QM03": "ENABLED", "QM05": "DISABLED"}
    assert q["structure"] == {"name": "CSQSYSAPPL", "cflevel": 3, "offload": None, "largest_message": 64_512}
    assert q["shared_xmitq"]["maxmsgl"] == 64_512 and q["igq_max_message"] == 64_512 - MQXQH == 64_084
    formats = {x["name"]: x["config_format"] for x in truth["estate"]["qmgrs"]}
    assert {n for n, f in formats.items() if f == "zos"} == set(q["members"])
    enabled = _igq_at(truth)
    seen_igq = Counter()
    for day in sorted(p for p in root.iterdir() if p.is_dir()):
        for qm_dir in sorted(p for p in day.iterdir()):
            qm = qm_dir.name
            for f in sorted(qm_dir.glob("config_*")):
                if qm not in q["members"]:
                    assert f.suffix in (".mqsc", ".json")
                    continue
                assert f.suffix == ".txt"
                cap = parse_capture_file(f)
                if not any(r.kind == "QMGR" for r in cap.records):
                    continue  # a capture that failed on purpose (broken_records)
                assert cap.fmt == "zos" and cap.problems == []
                qmgr = next(r for r in cap.records if r.kind == "QMGR")
                assert qmgr.attrs["QSGNAME"] == "QSG1" and qmgr.attrs["PLATFORM"] == "MVS"
                t = _capture_time(day.name, f.name)
                assert qmgr.attrs["IGQ"] == ("ENABLED" if enabled(qm, t) else "DISABLED"), (f, t)
                seen_igq[(qm, qmgr.attrs["IGQ"])] += 1
                assert sorted(r.attrs["QSGMEMBER"] for r in cap.records if r.kind == "QSGMEMBER") == q["members"]
                assert {r.attrs["QSGNAME"] for r in cap.records if r.kind == "QSGMEMBER"} == {"QSG1"}
                shared = next(r for r in cap.records if r.kind == "QLOCAL" and r.attrs["QUEUE"] == QSG_XMITQ)
                assert (shared.attrs["QSGDISP"], shared.attrs["CFSTRUCT"], shared.attrs["USAGE"],
                        shared.attrs["MAXMSGL"]) == ("SHARED", "CSQSYSAPPL", "XMITQ", "64512")
                structs = {r.attrs["CFSTRUCT"]: r.attrs for r in cap.records if r.kind == "CFSTRUCT"}
                assert structs["CSQSYSAPPL"]["CFLEVEL"] == "3" and structs["APPL1"]["CFLEVEL"] == "5"
                chstatus = parse_capture_file(f.with_name(f.name.replace("config_", "chstatus_")))
                view, problems = build_view(cap.records + chstatus.records, qm)
                assert problems == []
                assert view.qmgr.qsgname == "QSG1" and view.qmgr.igq == enabled(qm, t)
                assert view.qsg_members == set(q["members"]) - {qm}
                assert view.igq_max_message == 64_084 and "CFLEVEL(3)" in view.igq_limit_why
    # the settings and the mid-day switches are all in the captures: both senders show both settings
    assert {k for k in seen_igq if k[0] in ("QM01", "QM02")} == {(s, v) for s in ("QM01", "QM02")
                                                                  for v in ("ENABLED", "DISABLED")}
    assert {e["qmgr"] for e in truth["events"] if e["kind"] == "igq_change"} == {"QM01", "QM02"}


def test_every_queue_manager_of_a_date_names_the_group_as_display_group_does(estate):
    """The pipeline builds a sender's group from every queue manager of the date whose DISPLAY QMGR shows the same
    QSGNAME: in every date folder that is exactly the group DISPLAY GROUP lists."""
    root, truth = estate
    for day in sorted(p for p in root.iterdir() if p.is_dir()):
        names: dict[str, set[str]] = {}
        for f in sorted(day.glob("*/config_*")):
            try:
                recs = parse_capture_file(f).records
            except InputError:  # the capture that failed on purpose (broken_records)
                continue
            for r in recs:
                if r.kind == "QMGR":
                    names.setdefault(r.attrs.get("QSGNAME") or "", set()).add(r.attrs["QMNAME"])
        assert names["QSG1"] == set(truth["qsg"]["members"])


def test_every_file_parses_with_exactly_the_injected_problems(estate, parsed):
    """The z/OS captures add no problem: the parsers find exactly the injected broken records (here the truncated
    channel status capture is a member's, QM02's, in z/OS form) and nothing else."""
    root, truth = estate
    puts, accounting, _browses, _captures, found, rejected = parsed
    broken = truth["broken_records"]
    assert sorted((f, line) for f, line, _ in found) == sorted((b["file"], b["line"]) for b in broken
                                                               if b["kind"] != "not_mqsc")
    truncated = next(b for b in broken if b["kind"] == "truncated")
    assert truncated["file"].endswith(".txt") and truncated["file"].split("/")[1] in truth["qsg"]["members"]
    for f, line, reason in found:
        b = next(b for b in broken if (b["file"], b["line"]) == (f, line))
        assert reason.startswith(b["expected_reason"])
    assert [f for f, _ in rejected] == [b["file"] for b in broken if b["kind"] == "not_mqsc"]
    assert len(puts) == truth["totals"]["puts"]


# --------------------------------------------------------------------------------------------------
# the put records follow the rule; the replay agrees with all of them


def test_observed_xmitq_follows_the_igq_rule(estate, parsed):
    """Every row of this estate carries MQ's answer (--observed-every 1). The expected path of each row is the
    rule applied to the row alone: ``local`` when it arrived on its sender; ``igq`` when its sender is QM01 or
    QM02 with IGQ(ENABLED) at the put time (QM01 from the start until 10:00 on the second day, QM02 from 21:30 on
    the first day: the two igq_change events), it arrived on another of QM01, QM02, QM03, QM05 and it is at most 64,084 bytes long;
    ``cluster`` otherwise. Counting the rows so: 12,000 puts, of which 2,762 igq, 8,565 cluster and 673 local,
    and 475 rows that met the first two conditions but were too large (64,085 bytes or more) - exactly the
    ground truth's by_path and igq_too_large. An igq row names SYSTEM.QSG.TRANSMIT.QUEUE and no channel; no other
    row names it. The lengths straddle the limit: rows of exactly 64,084 bytes go igq, rows of 64,085 do not."""
    root, truth = estate
    puts = parsed[0]
    switches = [(e["qmgr"], e["start"], e["new"]) for e in truth["events"] if e["kind"] == "igq_change"]
    assert switches == [("QM02", "2026-11-19T21:30:00.000Z", "ENABLED"), ("QM01", "2026-11-20T10:00:00.000Z",
                                                                            "DISABLED")]
    enabled = _igq_at(truth)
    limit = truth["qsg"]["igq_max_message"]
    members = set(truth["qsg"]["members"])
    paths, too_large, at_limit = Counter(), 0, Counter()
    for r in puts:
        path = _expected_path(truth, enabled, r)
        paths[path] += 1
        if path == "igq":
            assert (r.observed_xmitq, r.observed_channel) == (QSG_XMITQ, None), r
        else:
            assert r.observed_xmitq != QSG_XMITQ, r
            if path == "cluster":
                assert r.observed_xmitq and r.observed_channel, r
        if (r.sending_qmgr in members and enabled(r.sending_qmgr, r.put_time) and r.observed_qmgr in members
                and r.observed_qmgr != r.sending_qmgr and r.length > limit):
            too_large += 1
        if r.length in (limit, limit + 1):
            at_limit[(r.length - limit, path)] += 1
    assert dict(paths) == {"igq": 2762, "cluster": 8565, "local": 673}
    assert dict(paths) == truth["qsg"]["by_path"]
    assert too_large == truth["qsg"]["igq_too_large"] == 475
    assert at_limit[(0, "igq")] > 0 and at_limit[(1, "cluster")] > 0
    assert not at_limit[(1, "igq")]
    # the mix: most under the limit, some just over, a few far over (at most 4 MB less the MQXQH)
    lengths = [r.length for r in puts]
    assert sum(n <= limit for n in lengths) > 0.8 * len(lengths)
    assert sum(limit < n <= limit + 2048 for n in lengths) > 0.05 * len(lengths)
    assert 0 < sum(n >= 2 * limit for n in lengths) < 0.1 * len(lengths)
    assert max(lengths) <= 4_194_304 - MQXQH


def test_the_replay_agrees_with_every_observed_transmission_queue(estate, parsed):
    """clwl/engine/replay.py, each sender replayed against its own captures (its DISPLAY GROUP gives the group, its
    DISPLAY QLOCAL and CFSTRUCT the limit), chooses the same destination and the same transmission queue as the
    generator for every one of the 12,000 rows (100 % agreement), with path ``igq`` exactly on the rows the rule
    picks, per sender as the ground truth counts them."""
    root, truth = estate
    puts = parsed[0]
    enabled = _igq_at(truth)
    want = {r.msg_id: _expected_path(truth, enabled, r) for r in puts}
    rows = _replay_all(root, truth)
    assert len(rows) == 12_000 and all(r.error is None for _, r in rows)
    assert [r.msg_id for _, r in rows if r.agrees is not True] == []
    assert {r.msg_id: r.path for _, r in rows} == want
    got = Counter((qm, r.path) for qm, r in rows)
    for qm in truth["estate"]["senders"]:
        by_path = Counter()
        for d in truth["traffic"]:
            if d["sender"] == qm:
                by_path.update(d["by_path"])
        assert {p: got[(qm, p)] for p in ("local", "cluster", "igq")} == dict(by_path)


def _history_rows(root: Path) -> tuple[list[dict], list[dict]]:
    """silver.config_history and silver.channel_status as the ingest would hold them for this landing, simplified:
    every record of a queue manager's configuration capture is in force from its capture time until its next
    configuration capture (a capture that failed is skipped), every cluster-sender status of a status capture until
    its next status capture. DISPLAY GROUP's records are left out: the group must come from the queue managers'
    own DISPLAY QMGR, as the pipeline builds it."""
    hist, status = [], []
    for qm in sorted({p.name for p in root.glob("*/*") if p.is_dir()}):
        for prefix in ("config_", "chstatus_"):
            caps = []
            for f in sorted(root.glob(f"*/{qm}/{prefix}*")):
                try:
                    caps.append((_capture_time(f.parent.parent.name, f.name), f, parse_capture_file(f).records))
                except InputError:  # the capture that failed on purpose
                    continue
            for i, (t, f, recs) in enumerate(caps):
                until = caps[i + 1][0] if i + 1 < len(caps) else None
                src = str(f.relative_to(root))
                for r in recs:
                    if r.kind == "CHSTATUS":
                        if r.attrs.get("CHLTYPE") == "CLUSSDR":
                            status.append({"observing_qmgr": qm, "channel": r.attrs["CHANNEL"], "chltype": "CLUSSDR",
                                           "status": r.attrs["STATUS"], "xmitq": r.attrs.get("XMITQ") or "",
                                           "substate": r.attrs.get("SUBSTATE") or "", "valid_from": t,
                                           "valid_to": until, "source_file": src})
                    elif r.kind != "QSGMEMBER":
                        hist.append({"observing_qmgr": qm, "kind": r.kind, "attrs": dict(r.attrs), "valid_from": t,
                                     "valid_to": until, "source_file": src})
    return hist, status


def test_the_pipeline_replay_knows_the_group_from_every_queue_managers_qsgname(estate, parsed):
    """The pipeline's own timelines (clwl.lake.silver.timelines_from_rows: the group of each sender from every queue
    manager of the date whose DISPLAY QMGR shows QSGNAME(QSG1), clwl.engine.qsg), fed this landing's captures without
    DISPLAY GROUP, give every sender QM01, QM02, QM03 and QM05 as its group, and the replay of each day agrees with
    every observed transmission queue: the same 2,762 igq rows as the rule."""
    from clwl.days import day_bounds
    from clwl.lake.silver import timelines_from_rows

    root, truth = estate
    puts = parsed[0]
    enabled = _igq_at(truth)
    want = {r.msg_id: _expected_path(truth, enabled, r) for r in puts}
    hist, status = _history_rows(root)
    got: dict[str, str] = {}
    for day in sorted(p for p in root.iterdir() if p.is_dir()):
        start, end = day_bounds(day.name)
        timelines = timelines_from_rows(hist, status, start, end)
        for qm in truth["estate"]["senders"]:
            tl = timelines[qm]
            assert {frozenset(s.view.qsg_members) for s in tl} == {frozenset(set(truth["qsg"]["members"]) - {qm})}
            recs, _problems = parse_puts_file(day / qm / "puts.csv")
            events = sorted((PutEvent(r.msg_id, r.put_time, r.queue, r.target_qmgr, r.bind, r.open_handle or "",
                                      r.group_id or "", r.logical_order, r.from_cluster_channel, r.pcf, r.length,
                                      r.observed_qmgr, r.observed_xmitq) for r in recs), key=lambda e: e.put_time)
            for r in replay(qm, tl, events):
                assert r.agrees is True, r
                got[r.msg_id] = r.path
    assert got == want and Counter(got.values())["igq"] == 2762


def test_accounting_of_the_distributed_receivers_reconciles_and_members_write_none(estate, parsed):
    """z/OS accounts in SMF records, not amqsmon: the members write no accounting.amqsmon; the distributed
    receivers account for every message routed to them (less those still held at the end, plus the injected
    skew), none of which came over IGQ."""
    root, truth = estate
    puts, accounting = parsed[0], parsed[1]
    members = set(truth["qsg"]["members"])
    assert not [p for p in root.rglob("accounting.amqsmon") if p.parent.name in members]
    routed = Counter((r.observed_qmgr, r.queue) for r in puts if r.observed_qmgr not in members)
    undelivered = undelivered_by_receiver(truth)
    skews = Counter()
    for s in truth["skews"]:
        skews[(s["receiver"], s["queue"])] += s["delta"]
    assert {s["receiver"] for s in truth["skews"]} <= set(routed_qm for routed_qm, _ in routed)
    assert +accounted(accounting) == +Counter({k: routed[k] - undelivered[k] + skews[k]
                                              for k in set(routed) | set(skews)})


# --------------------------------------------------------------------------------------------------
# the structure level and MAXMSGL


@pytest.mark.parametrize("maxmsgl, limit", [(None, 104_857_600 - MQXQH), (1_048_576, 1_048_576 - MQXQH)])
def test_a_cflevel5_structure_with_offload_takes_large_messages(tmp_path, maxmsgl, limit):
    """CFLEVEL(5) with OFFLOAD(SMDS): the structure takes 100 MB, so with the default MAXMSGL (104,857,600) the limit
    is 104,857,172 bytes and every message of a sending member with IGQ(ENABLED) to another member goes over IGQ,
    1 MB and larger ones too (the lengths then mix in large messages, L / 2 to L with L capped at 4 MB less the
    MQXQH). With MAXMSGL(1048576) on the queue the queue decides: 1,048,148 bytes, and longer ones take the cluster
    path. Either way the replay agrees with every row and takes the limit from the captures."""
    root = tmp_path / "landing"
    truth = _generate(root, seed=2, days=1, messages_per_day=3000, observed_every=1, qsg=3, qsg_cflevel=5,
                      qsg_maxmsgl=maxmsgl, broken_records=0, skew=0)
    q = truth["qsg"]
    assert q["structure"]["offload"] == "SMDS" and q["igq_max_message"] == limit
    cap = parse_capture_file(next((root / "2026-11-19" / q["sending_members"][0]).glob("config_*.txt")))
    structs = {r.attrs["CFSTRUCT"]: r.attrs for r in cap.records if r.kind == "CFSTRUCT"}
    assert (structs["CSQSYSAPPL"]["CFLEVEL"], structs["CSQSYSAPPL"]["OFFLOAD"]) == ("5", "SMDS")
    rows = _replay_all(root, truth)
    assert [r.msg_id for _, r in rows if r.agrees is not True] == []
    assert {r.msg_id for _, r in rows if r.path == "igq"} == {
        r.msg_id for _, r in rows if r.observed_xmitq == QSG_XMITQ}
    sender = q["sending_members"][0]  # IGQ(ENABLED) all day (no --qsg-igq-changes)
    big = [r for qm, r in rows if qm == sender and r.length >= 1_048_576 and r.qmgr in q["members"]
           and r.qmgr != sender]
    assert big
    if maxmsgl is None:
        assert {(r.path, r.xmitq) for r in big} == {("igq", QSG_XMITQ)}
    else:
        assert {r.path for r in big if r.length > limit} == {"cluster"}
        assert {r.path for r in big if r.length <= limit} <= {"igq"}


# --------------------------------------------------------------------------------------------------
# the command line, and estates without a group


def test_command_line_options_and_refusals(tmp_path, capsys):
    p = argparse.ArgumentParser(prog="clwl")
    add_generate_command(p.add_subparsers(dest="command"))
    with pytest.raises(SystemExit):
        p.parse_args(["generate", "--help"])
    help_text = capsys.readouterr().out
    for opt in ("--qsg N", "--qsg-cflevel 1-5", "--qsg-maxmsgl BYTES", "--qsg-igq-changes RATE"):
        assert opt in help_text
    base = ["generate", "--out", str(tmp_path / "x"), "--quiet", "--messages-per-day", "200", "--days", "1"]
    for extra, says in ((["--qsg", "1"], "at least 2"), (["--qsg-cflevel", "5"], "need --qsg"),
                        (["--qsg", "3", "--channel-trace"], "--puts-format csv"),
                        (["--qsg", "3", "--puts-format", "activity-trace"], "--puts-format csv"),
                        (["--qsg", "9"], "--qsg 6 or fewer"), (["--qsg", "3", "--qmgrs", "120"], "4 characters")):
        args = p.parse_args(base + extra)
        assert args.func(args) == 2, extra
        assert says in capsys.readouterr().err, extra
    args = p.parse_args(base + ["--qsg", "2", "--qsg-maxmsgl", "32768"])
    assert args.func(args) == 0
    truth = json.loads((tmp_path / "x" / "_generate.json").read_text())
    assert truth["args"]["qsg"] == 2 and truth["qsg"]["igq_max_message"] == 32_768 - MQXQH
    assert truth["qsg"]["limit_from"].startswith("MAXMSGL(32768)")


def test_without_the_option_nothing_says_qsg(tmp_path):
    """--qsg 0 (the default) leaves the estate as before (tests/unit/test_generate_trace.py holds its digest):
    no z/OS capture, no qsg key in the ground truth or its arguments."""
    root = tmp_path / "landing"
    truth = _generate(root, seed=4, days=1, messages_per_day=500)
    assert GenerateOptions(out="x").qsg == 0
    assert "qsg" not in truth and not any(k.startswith("qsg") for k in truth["args"])
    assert not list(root.rglob("*.txt"))
    assert all("by_path" not in d for d in truth["traffic"])
