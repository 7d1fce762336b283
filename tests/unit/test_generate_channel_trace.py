"""``clwl generate --channel-trace``: the channel agents' trace of a synthetic estate, with injected channel stops
(issue 29 item 5).

What is checked, on an estate with outages (held messages leave at the release) and partitions (waiting messages
leave, some re-allocated, when their channel or another runs): the agents' trace files parse through clwl.parse
with no problem; clwl.analyses.observed's timeline holds exactly the messages the simulation sent over a channel and
delivered (the puts.csv rows with an observed channel, less the ones still held at the end of the estate), each
leaving the sending queue manager over the row's channel for the row's queue manager and arriving there,
committed; a message leaves 2 ms after its put unless it waited. And the injected stops: what a reader of the
landing folder finds by itself — a message that left late although the sending queue manager's last status
capture before its put shows its channel running (not RETRYING) — is exactly the messages of the stops in
_generate.json, each put between the stop and the restart and leaving at the restart, the stop lying between two
status captures of the sender. The amqsevt JSON printing of the same estate gives the same timeline.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from clwl.analyses.observed import observed_timeline
from clwl.cli.generate import add_generate_command, cmd_generate
from clwl.generate import GenerateOptions, generate
from clwl.parse.activity_trace import parse_activity_trace_file
from clwl.parse.activity_trace_json import parse_amqsevt_json_file
from clwl.parse.mqsc import parse_mqsc_file
from clwl.parse.puts import parse_puts_file

ESTATE = dict(seed=11, days=2, messages_per_day=6000, outages=1.0, partitions=1.0, observed_every=1,
              broken_records=0, skew=0, channel_trace=True, channel_stops=3, channel_trace_ends="both")
LATE = timedelta(seconds=1)  # a message over a running channel leaves 2 ms after its put


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _timeline(root: Path, pattern: str, parse) -> tuple[dict, list]:
    operations, results = [], []
    for p in sorted(root.rglob(pattern)):
        r = parse(p)
        results.append((p, r))
        operations += r.operations
    return observed_timeline(operations), results


@pytest.fixture(scope="module")
def estate(tmp_path_factory):
    base = tmp_path_factory.mktemp("channel-trace")
    truth = generate(GenerateOptions(out=str(base / "amqsact"), quiet=True, **ESTATE))
    json_truth = generate(GenerateOptions(out=str(base / "json"), quiet=True, trace_format="json", **ESTATE))
    timeline, results = _timeline(base / "amqsact", "*.channels.amqsact", parse_activity_trace_file)
    json_timeline, json_results = _timeline(base / "json", "*.channels.amqsevt.jsonl", parse_amqsevt_json_file)
    puts = {}
    for p in sorted((base / "amqsact").rglob("puts.csv")):
        recs, problems = parse_puts_file(p)
        assert problems == []
        puts.update((r.msg_id, r) for r in recs)
    return base, truth, timeline, results, json_truth, json_timeline, json_results, puts


def test_the_agents_trace_parses_and_is_listed(estate):
    base, truth, _, results, json_truth, _, json_results, _ = estate
    ct = truth["channel_trace"]
    assert ct["format"] == "amqsact" and json_truth["channel_trace"]["format"] == "json"
    assert sorted(str(p.relative_to(base / "amqsact")) for p, _ in results) == ct["files"]
    assert len(ct["files"]) > len(truth["estate"]["senders"])  # the receivers' files too
    for _, r in results + json_results:
        assert r.problems == [] and r.notes == []
    gets = sum(1 for _, r in results for o in r.operations if o.operation == "MQGET" and o.xmitq_msg_id)
    assert gets == ct["departures"] == ct["arrivals"] > 0
    assert truth["args"]["channel_trace"] is True and truth["args"]["channel_stops"] == 3
    assert all(p.read_text().endswith(" Records Processed.\n") for p, _ in results)


def test_every_message_sent_over_a_channel_leaves_and_arrives_once(estate):
    _, truth, timeline, _, _, _, _, puts = estate
    remote = {m: p for m, p in puts.items() if p.observed_channel}
    still_held = sum(truth["undelivered_by_receiver"].values())
    assert still_held > 0, "the estate keeps no message held to its end"
    assert set(timeline) <= set(remote)
    assert len(timeline) == len(remote) - still_held
    for mid, m in timeline.items():
        p = remote[mid]
        assert (m.left_qmgr, m.channel, m.remote_qmgr, m.remote_queue) == \
               (p.sending_qmgr, p.observed_channel, p.observed_qmgr, p.queue), mid
        assert m.xmitq == p.observed_xmitq
        assert (m.arrived_qmgr, m.arrival_channel, m.target_queue) == (p.observed_qmgr, p.observed_channel, p.queue)
        assert m.left_committed and m.arrived_committed and (m.departures, m.arrivals) == (1, 1)
        assert timedelta(milliseconds=3) <= m.transit < LATE
        assert m.left_xmitq_at >= p.put_time + timedelta(milliseconds=2), mid
        if m.left_xmitq_at - p.put_time < LATE:
            assert m.left_xmitq_at - p.put_time < timedelta(milliseconds=50), mid  # the agent is quick


def _running_at_last_capture(root: Path) -> dict:
    """(day, sender) -> [(capture time, {channel: status})] from the senders' chstatus captures, as a reader of the
    landing folder sees them."""
    out: dict = {}
    for p in sorted(root.rglob("chstatus_*.mqsc")):
        day, qm = p.parent.parent.name, p.parent.name
        hhmmss = p.stem.split("_")[1]
        at = datetime.fromisoformat(f"{day}T{hhmmss[:2]}:{hhmmss[2:4]}:{hhmmss[4:]}+00:00")
        recs = parse_mqsc_file(p).records
        states = {r.get("CHANNEL"): r.get("STATUS") for r in recs
                  if r.kind == "CHSTATUS" and r.get("CHLTYPE") == "CLUSSDR"}
        out.setdefault((day, qm), []).append((at, states))
    return out


def test_the_late_departures_no_capture_explains_are_exactly_the_injected_stops(estate):
    base, truth, timeline, _, _, _, _, puts = estate
    captures = _running_at_last_capture(base / "amqsact")
    found: dict[str, datetime] = {}
    waited = 0
    for mid, m in timeline.items():
        p = puts[mid]
        if m.left_xmitq_at - p.put_time < LATE:
            continue
        day = p.put_time.date().isoformat()
        before = [states for at, states in captures[(day, p.sending_qmgr)] if at <= p.put_time]
        if before and before[-1].get(m.channel, "INACTIVE") in ("RUNNING", "INACTIVE"):
            found[mid] = m.left_xmitq_at  # late, and the capture before the put shows nothing wrong
        else:
            waited += 1  # RETRYING at the capture: held (outage) or waiting (partition), as the status says
    assert waited > 0, "no message waited behind a RETRYING channel"
    stops = truth["channel_stops"]
    assert len(stops) == 3 and all(s["delayed"] > 0 for s in stops)
    injected = {mid: s for s in stops for mid in s["msg_ids"]}
    assert sum(s["delayed"] for s in stops) == len(injected)
    assert found.keys() == injected.keys()
    for mid, s in injected.items():
        p, m = puts[mid], timeline[mid]
        stopped, restarted = _utc(s["stopped_at"]), _utc(s["restarted_at"])
        assert stopped <= p.put_time < restarted
        assert restarted <= m.left_xmitq_at < restarted + LATE
        assert (m.left_qmgr, m.channel, m.remote_qmgr, m.xmitq) == (s["sender"], s["channel"], s["dest"], s["xmitq"])
        assert _utc(s["capture_before"]) <= stopped < restarted <= _utc(s["capture_after"])
        assert s["file"] == f"{s['day']}/{s['sender']}/{s['sender']}.{s['day']}.channels.amqsact"
    # no status capture of the sender between the stop and the restart (the captures never show it)
    for s in stops:
        times = [at for at, _ in captures[(s["day"], s["sender"])]]
        assert not [t for t in times if _utc(s["stopped_at"]) < t < _utc(s["restarted_at"])]
        assert _utc(s["capture_before"]) in times and _utc(s["capture_after"]) in times


def test_the_json_printing_gives_the_same_timeline(estate):
    _, truth, timeline, _, json_truth, json_timeline, _, _ = estate
    assert json_timeline == {k: v for k, v in timeline.items()}
    assert json_truth["channel_stops"] == [
        {**s, "file": s["file"].replace(".channels.amqsact", ".channels.amqsevt.jsonl")}
        for s in truth["channel_stops"]]


def test_the_routing_truth_is_that_of_the_estate_without_the_agents_trace(tmp_path):
    kw = {k: v for k, v in ESTATE.items() if k not in ("channel_trace", "channel_stops", "channel_trace_ends")}
    kw.update(days=1, messages_per_day=1500)
    plain = generate(GenerateOptions(out=str(tmp_path / "plain"), quiet=True, **kw))
    traced = generate(GenerateOptions(out=str(tmp_path / "traced"), quiet=True, channel_trace=True, **kw))
    assert plain["traffic"] == traced["traffic"] and plain["held"] == traced["held"]
    for p in (tmp_path / "plain").rglob("*"):
        if p.is_file() and p.name != "_generate.json":
            assert p.read_bytes() == (tmp_path / "traced" / p.relative_to(tmp_path / "plain")).read_bytes(), p
    assert "channel_trace" not in plain and "channel_trace" not in plain["args"]


def _cli(tmp_path, *extra) -> int:
    import argparse
    ap = argparse.ArgumentParser()
    add_generate_command(ap.add_subparsers())
    args = ap.parse_args(["generate", "--out", str(tmp_path / "o"), "--quiet", "--days", "1",
                          "--messages-per-day", "300", *extra])
    return cmd_generate(args)


def test_the_command_line(tmp_path, capsys):
    assert _cli(tmp_path, "--channel-stops", "1") == 2
    assert "--channel-stops needs --channel-trace" in capsys.readouterr().err
    assert _cli(tmp_path, "--trace-format", "json") == 2
    assert "--trace-format needs" in capsys.readouterr().err
    assert _cli(tmp_path, "--channel-trace-ends", "both") == 2
    assert "--channel-trace-ends needs --channel-trace" in capsys.readouterr().err
    assert _cli(tmp_path, "--channel-trace", "--trace-format", "json", "--channel-stops", "1") == 0
    truth = json.loads((tmp_path / "o" / "_generate.json").read_text())
    names = {p.name for p in (tmp_path / "o").rglob("*.channels.amqsevt.jsonl")}
    assert names and not list((tmp_path / "o").rglob("*.amqsact"))
    # the default traces the sending side only: the senders' files, every departure, no arrival
    assert {n.split(".")[0] for n in names} == set(truth["estate"]["senders"])
    assert truth["channel_trace"]["arrivals"] == 0 < truth["channel_trace"]["departures"]
    assert truth["args"]["channel_trace_ends"] == "sending" and len(truth["channel_stops"]) == 1
