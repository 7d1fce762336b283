"""``clwl generate --puts-format activity-trace``: the simulation's puts printed as amqsact output.

What is checked: the trace parses through clwl.parse.activity_trace with no problem and no note; it holds
every put of the simulation exactly once, with the same input fields as the puts.csv of the same estate and,
as MQ's answer (Resolved_Q_mgr / Resolved_local_Q_name), the simulation's destination and transmission queue,
except exactly the injected disagreements listed in _generate.json; its shape is that of a real trace (several
SeqNumbers per connection, two threads, connections interleaved, one MQOPEN and one MQCLOSE per handle, bind
from the open options); and the puts.csv estate is byte-identical to the one written before this output existed.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest

from clwl.cli.generate import add_generate_command, cmd_generate
from clwl.generate import GenerateOptions, generate
from clwl.parse.activity_trace import (
    ACTIVITY_TRACE_NAME_PATTERNS,
    is_activity_trace_name,
    looks_like_amqsact,
    parse_activity_trace_file,
)
from clwl.parse.puts import parse_puts_file

# partitions and outages: re-allocated and held messages (their destination changes after the put, or they
# wait); shares large enough for many bound handles, groups and named targets
ESTATE = dict(seed=3, days=2, messages_per_day=5000, bind_open_share=0.06, bind_group_share=0.06,
              named_qmgr_share=0.03, outages=1.0, put_disabled=1.0, partitions=1.0, skew=0)
N_DISAGREEMENTS = 4


def _generate(out: Path, **kw) -> dict:
    return generate(GenerateOptions(out=str(out), quiet=True, **{**ESTATE, **kw}))


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    """The trace estate, parsed, and the puts.csv of the same simulation (every row observed, no broken rows)."""
    base = tmp_path_factory.mktemp("trace")
    truth = _generate(base / "trace", puts_format="activity-trace", trace_disagreements=N_DISAGREEMENTS)
    csv_truth = _generate(base / "csv", observed_every=1, broken_records=0)
    results = {p: parse_activity_trace_file(p) for p in sorted((base / "trace").rglob("*.amqsact"))}
    csv_puts = []
    for p in sorted((base / "csv").rglob("puts.csv")):
        recs, problems = parse_puts_file(p)
        assert problems == []
        csv_puts += recs
    return base / "trace", truth, results, csv_truth, csv_puts


def test_the_trace_parses_without_a_problem(traced):
    root, truth, results, _, _ = traced
    assert not list(root.rglob("puts.csv"))
    # one file per sending queue manager and day, named as the landing folder expects it
    assert sorted(str(p.relative_to(root)) for p in results) == sorted(
        f"{d['day']}/{d['sender']}/{d['sender']}.{d['day']}.amqsact" for d in truth["traffic"])
    assert ACTIVITY_TRACE_NAME_PATTERNS == ("*.amqsact", "*.amqsact.txt")
    for path, r in results.items():
        assert is_activity_trace_name(path.name)
        assert looks_like_amqsact(path.read_text()[:200])
        assert r.problems == [] and r.notes == [] and r.failed_puts == 0
        assert r.forms == {"verbose"}
        # amqsact's count line matches the trace messages (no note above says otherwise)
        assert path.read_text().endswith(f"\n{r.trace_messages} Records Processed.\n")
        assert r.counts["MQPUT"] == len(r.puts)
    assert sum(len(r.puts) for r in results.values()) == truth["totals"]["puts"] == truth["totals"]["traced_puts"]


def test_every_put_once_with_the_simulations_destination_but_the_injected(traced):
    _, truth, results, csv_truth, csv_puts = traced
    puts = [tp for r in results.values() for tp in r.puts]
    assert Counter(tp.put.msg_id for tp in puts).most_common(1)[0][1] == 1
    by_id = {tp.put.msg_id: tp for tp in puts}
    sim = {p.msg_id: p for p in csv_puts}
    assert by_id.keys() == sim.keys()
    # the same simulation: the routing ground truth is the CSV estate's
    assert truth["traffic"] == [{**d, "rows_in_puts_csv": 0, "traced_puts": d["puts"]} for d in csv_truth["traffic"]]
    # A message the simulation re-allocated after its put arrived elsewhere (the CSV's observed columns), but
    # the traced MQPUT records where MQ sent it at the put: its first destination.
    realloc = {r["msg_id"]: r for r in truth.get("reallocated", ())}
    assert any(m in by_id for m in realloc), "the estate re-allocates no traced message"
    disagree = set()
    for mid, tp in by_id.items():
        p, c = tp.put, sim[mid]
        # the replay's input, as the CSV carries it
        assert (p.sending_qmgr, p.queue, p.target_qmgr, p.bind, p.group_id, p.logical_order, p.length,
                p.persistent, p.accounting_token_zero) == \
               (c.sending_qmgr, c.queue, c.target_qmgr, c.bind, c.group_id, c.logical_order, c.length,
                c.persistent, c.accounting_token_zero), mid
        # High Res Time: the row's millisecond (each call a microsecond after the one before)
        assert p.put_time.replace(microsecond=p.put_time.microsecond // 1000 * 1000) == c.put_time, mid
        assert tp.observed_basis == ("mqpmo" if tp.trace_level == "high" else "put_record")
        if mid in realloc:
            r = realloc[mid]
            assert c.observed_qmgr == r["final_qmgr"], mid
            if p.observed_qmgr != r["first_qmgr"]:
                disagree.add(mid)
        elif (p.observed_qmgr, p.observed_xmitq) != (c.observed_qmgr, c.observed_xmitq):
            disagree.add(mid)
    injected = {x["msg_id"]: x for x in truth["trace_disagreements"]}
    assert len(injected) == N_DISAGREEMENTS
    assert disagree == injected.keys()
    for mid, x in injected.items():
        p, c = by_id[mid].put, sim[mid]
        assert (x["simulated_qmgr"], x["simulated_xmitq"]) == (c.observed_qmgr, c.observed_xmitq)
        assert (x["traced_qmgr"], x["traced_xmitq"]) == (p.observed_qmgr, p.observed_xmitq)
        assert x["traced_qmgr"] != x["simulated_qmgr"]
        assert x["file"].endswith(f"/{x['sender']}/{x['sender']}.{x['day']}.amqsact")
    assert truth["args"]["puts_format"] == "activity-trace"
    assert truth["args"]["trace_disagreements"] == N_DISAGREEMENTS


def test_the_trace_has_the_shape_of_a_real_one(traced):
    _, _, results, _, csv_puts = traced
    for r in results.values():
        ops = r.operations
        by_conn: dict[str, list] = {}
        for op in ops:
            by_conn.setdefault(op.connection, []).append(op)
        assert len(by_conn) == 3  # the svc, batch and recon applications
        order = [op.connection for op in ops]
        changes = sum(1 for a, b in zip(order, order[1:]) if a != b)
        assert changes > len(by_conn)  # trace messages of the connections interleave
        for cops in by_conn.values():
            assert len({op.seq_number for op in cops}) > 1  # ActivityCount splits the connection
            assert {op.seq_number for op in cops} == set(range(max(op.seq_number for op in cops) + 1))
            assert {op.thread_id for op in cops if op.operation == "MQPUT"} == {1, 2}
            names = [op.operation for op in cops]
            assert names[0] == "MQCONNX" and names[-1] == "MQDISC"
            assert names.count("MQOPEN") == names.count("MQCLOSE") >= 1
            # every Hobj is closed before it is opened again (MQ reuses them), and never used closed
            open_now: set[int] = set()
            for op in cops:
                if op.operation == "MQOPEN":
                    assert op.hobj not in open_now
                    open_now.add(op.hobj)
                elif op.operation == "MQCLOSE":
                    open_now.remove(op.hobj)
                elif op.operation == "MQPUT":
                    assert op.hobj in open_now
            assert not open_now
        # the batch application's bound handles end when it is done with them: Hobj numbers come back
        assert max(Counter(op.hobj for op in ops if op.operation == "MQOPEN").values()) > 1
        # High Res Time (MQOPEN, MQPUT): one clock, a call a microsecond at least after the one before, in each
        # connection's order (SeqNumber, operation), whichever order the messages are printed in
        times = [op.high_res_time for op in ops if op.high_res_time is not None]
        assert len(set(times)) == len(times)
        for cops in by_conn.values():
            conn_times = [op.high_res_time for op in sorted(cops, key=lambda o: (o.seq_number, o.index))
                          if op.high_res_time is not None]
            assert conn_times == sorted(conn_times)
    puts = [tp for r in results.values() for tp in r.puts]
    assert Counter(tp.put.bind for tp in puts).keys() == {"notfixed", "open", "group"}
    assert {tp.bind_source for tp in puts} == {"open_options"}
    # a named target queue manager comes from the MQOPEN's Object_Q_mgr_name
    assert sum(1 for tp in puts if tp.put.target_qmgr) == sum(1 for p in csv_puts if p.target_qmgr) > 0
    # groups (HIGH: the MQMD dump, MsgFlags at offset 356): only a group's last message is flagged
    # MQMF_LAST_MSG_IN_GROUP (0x10); a group cut short (its bound instance PUT(DISABLED), the end of the day) has none
    op_of = {(op.source, op.line): op for r in results.values() for op in r.operations}
    groups: dict[str, list[tuple]] = {}
    for tp in puts:
        if tp.put.group_id:
            md = bytes.fromhex(op_of[(tp.put.source, tp.put.line)].fields["MQMD Structure"])
            groups.setdefault(tp.put.group_id, []).append((tp.put.put_time, int.from_bytes(md[356:360], "little")))
    assert len(groups) > 10
    for members in groups.values():
        flags = [f for _, f in sorted(members)]
        assert all(f & 0x08 for f in flags) and not any(f & 0x10 for f in flags[:-1])
    assert sum(1 for m in groups.values() if max(m)[1] & 0x10) >= 0.8 * len(groups)


def test_the_csv_estate_is_byte_identical_to_before(tmp_path):
    """The digest of this estate as the generator wrote it before activity-trace output existed (same options,
    computed with that version), with one change since: the put files' optional `application` column, which
    every second sender's puts.csv carries (c938cac8... before it; the column switched off gave that digest
    again). The default puts format, the channel agents' and the JSON traces change no byte of any file or of
    _generate.json."""
    out = tmp_path / "landing"
    truth = generate(GenerateOptions(out=str(out), quiet=True, messages_per_day=3000, partitions=1.0,
                                     bind_open_share=0.05, bind_group_share=0.05, named_qmgr_share=0.03))
    h = hashlib.sha256()
    for p in sorted(out.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(out)).encode() + b"\0" + p.read_bytes() + b"\0")
    assert h.hexdigest() == "5da90a6aa37281f95b614a05dcd6538d0762250a6eaeb44aefa5eb35e46eeea2"
    assert "puts_format" not in truth and "trace_disagreements" not in truth["args"]
    assert not list(out.rglob("*.amqsact"))


def test_command_line(tmp_path, capsys):
    import argparse

    parser = argparse.ArgumentParser()
    add_generate_command(parser.add_subparsers())
    out = tmp_path / "t"
    args = parser.parse_args(["generate", "--out", str(out), "--quiet", "--days", "1", "--messages-per-day", "300",
                              "--puts-format", "activity-trace"])
    assert cmd_generate(args) == 0
    truth = json.loads((out / "_generate.json").read_text())
    assert truth["args"]["trace_disagreements"] == 3 == len(truth["trace_disagreements"])  # the default
    assert len(list(out.rglob("*.amqsact"))) == 2 and not list(out.rglob("puts.csv"))
    args = parser.parse_args(["generate", "--out", str(tmp_path / "c"), "--quiet", "--trace-disagreements", "2"])
    assert cmd_generate(args) == 2
    assert "--trace-disagreements needs --puts-format activity-trace" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parser.parse_args(["generate", "--out", "x", "--puts-format", "json"])
