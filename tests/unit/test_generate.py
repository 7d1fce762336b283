"""``clwl generate``: determinism, every file readable by the project's parsers with exactly the injected
problems, accounting that reconciles with the routed puts, zero tokens exactly for the cases of
docs/algorithm.md (re-allocation), and the independent simulation against hand-derived round-robin / weight cases."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from collections import Counter
from datetime import date, datetime, timezone
from pathlib import Path

import pytest

from clwl.cli.generate import add_generate_command
from clwl.engine.view import build_view, parse_capture_file
from clwl.generate import GenerateOptions, generate
from clwl.generate.estate import App, ConfigState, Estate, Instance, QMgr, Queue
from clwl.generate.routing import SenderRouter
from clwl.parse.amqsmon import parse_amqsmon_file
from clwl.parse.common import InputError
from clwl.parse.puts import parse_puts_file
from clwl.parse.xmitq import parse_xmitq_file

ROOT = Path(__file__).resolve().parents[2]

SMALL = dict(seed=3, days=2, messages_per_day=6000, observed_every=1, bind_open_share=0.05,
             bind_group_share=0.05, named_qmgr_share=0.03, outages=1.0, suspends=1.0, weight_changes=1.0,
             priority_changes=1.0, put_disabled=1.0, skew=2, broken_records=5)


def _generate(out: Path, **kw) -> dict:
    return generate(GenerateOptions(out=str(out), quiet=True, **kw))


@pytest.fixture(scope="module")
def estate(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("gen") / "landing"
    return out, _generate(out, **SMALL)


@pytest.fixture(scope="module")
def single_instance(tmp_path_factory) -> tuple[Path, dict]:
    """Every queue has one instance: messages behind a retrying channel stay because it is still the most
    favourable destination, with their normal AccountingToken."""
    out = tmp_path_factory.mktemp("gen1") / "landing"
    return out, _generate(out, seed=9, days=1, messages_per_day=4000, instances=1, qmgrs=8, senders=3, queues=3,
                          outages=1.0, observed_every=1, broken_records=0, skew=0)


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _parse_all(root: Path):
    """Every file through the parser its name calls for: (records per kind, problems, whole-file rejections)."""
    found: list[tuple[str, int, str]] = []
    rejected: list[tuple[str, str]] = []
    puts, accounting, browses, captures = [], [], {}, {}
    for p in sorted(root.rglob("*")):
        if not p.is_file() or p.name.startswith("_"):
            continue
        rel = str(p.relative_to(root))
        try:
            if p.name.startswith(("config_", "chstatus_")):
                cap = parse_capture_file(p)
                problems = cap.problems
                captures[rel] = cap.records
            elif p.suffix == ".csv":
                recs, problems = parse_puts_file(p)
                puts += recs
            elif p.suffix == ".amqsmon":
                recs, problems, skipped = parse_amqsmon_file(p)
                assert skipped == 0
                accounting += recs
            elif p.suffix in (".amqsbcg", ".dmpmqmsg"):
                recs, problems = parse_xmitq_file(p)
                browses[rel] = recs
            else:
                raise AssertionError(f"a file of no known kind: {rel}")
        except InputError as e:
            rejected.append((rel, e.reason))
            continue
        found += [(rel, pr.line, pr.reason) for pr in problems]
    return puts, accounting, browses, captures, found, rejected


# --------------------------------------------------------------------------------------------------
# determinism


def _run_subprocess(out: Path, hashseed: str, *extra: str) -> None:
    env = dict(os.environ, PYTHONHASHSEED=hashseed, PYTHONPATH=str(ROOT))
    subprocess.run([sys.executable, "-m", "clwl", "generate", "--out", str(out), "--quiet",
                    "--messages-per-day", "3000", "--days", "2", *extra], check=True, env=env, cwd=ROOT)


def test_same_seed_gives_identical_bytes_whatever_the_hash_seed(tmp_path):
    _run_subprocess(tmp_path / "a", "0", "--seed", "4")
    _run_subprocess(tmp_path / "b", "4242", "--seed", "4")
    a, b = _files(tmp_path / "a"), _files(tmp_path / "b")
    assert a.keys() == b.keys() and len(a) > 50
    assert [k for k in a if a[k] != b[k]] == []
    _generate(tmp_path / "c", seed=5, messages_per_day=3000, days=2)
    c = _files(tmp_path / "c")
    assert sum(1 for k in a if k in c and a[k] == c[k]) < len(a) // 2
    assert a["_generate.json"] != c["_generate.json"]


def test_command_refuses_a_non_empty_folder_without_force(tmp_path, capsys):
    import argparse
    p = argparse.ArgumentParser()
    add_generate_command(p.add_subparsers(dest="command"))
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "keep.txt").write_text("mine")
    args = p.parse_args(["generate", "--out", str(tmp_path / "x"), "--quiet", "--messages-per-day", "100",
                         "--days", "1"])
    assert args.func(args) == 2
    assert "not empty" in capsys.readouterr().err
    args = p.parse_args(["generate", "--out", str(tmp_path / "x"), "--quiet", "--messages-per-day", "100",
                         "--days", "1", "--force"])
    assert args.func(args) == 0
    assert (tmp_path / "x" / "keep.txt").read_text() == "mine"  # --force removes only what generate writes
    assert (tmp_path / "x" / "_generate.json").exists()
    args = p.parse_args(["generate", "--out", str(tmp_path / "y"), "--qmgrs", "5", "--quiet"])
    assert args.func(args) == 2


# --------------------------------------------------------------------------------------------------
# the files parse, with exactly the injected problems


def test_every_file_parses_with_exactly_the_injected_problems(estate):
    root, truth = estate
    puts, accounting, browses, captures, found, rejected = _parse_all(root)
    broken = truth["broken_records"]
    assert Counter(b["kind"] for b in broken) == Counter(
        {"truncated": 1, "unbalanced": 1, "bad_hex": 1, "not_mqsc": 1, "short_token": 1})
    expected_rows = sorted((b["file"], b["line"]) for b in broken if b["kind"] != "not_mqsc")
    assert sorted((f, line) for f, line, _ in found) == expected_rows
    for b in broken:
        if b["kind"] == "not_mqsc":
            assert [(f, r) for f, r in rejected if f == b["file"]] and b["expected_reason"] in dict(rejected)[b["file"]]
        else:
            reason = next(r for f, line, r in found if (f, line) == (b["file"], b["line"]))
            assert reason.startswith(b["expected_reason"]), (b, reason)
    assert len(rejected) == 1
    # every put row is accounted for: rows = records + the broken rows
    assert len(puts) == truth["totals"]["puts"]
    assert len(puts) + sum(1 for b in broken if b["file"].endswith("puts.csv")) == truth["totals"]["rows_in_puts_csv"]
    # each sending queue manager's captures build a view without problems, one capture time at a time
    senders = set(truth["estate"]["senders"])
    for rel, records in captures.items():
        day, qm, name = rel.split("/")
        if qm in senders and name.startswith("config_"):
            records = records + captures.get(f"{day}/{qm}/{name.replace('config_', 'chstatus_')}", [])
            view, problems = build_view(records, qm)
            assert problems == [], rel
            assert view.channels and view.instances
    assert accounting and browses


# --------------------------------------------------------------------------------------------------
# accounting against the routed puts


def accounted(accounting) -> Counter:
    """Puts the receivers' amqsmon accounting counts, per (receiving queue manager, queue)."""
    observed = Counter()
    for rec in accounting:
        observed[(rec.qmgr, rec.queue)] += rec.put_count_nonpersistent + rec.put_count_persistent
    return observed


def undelivered_by_receiver(truth: dict) -> Counter:
    return Counter({tuple(k.split("/")): n for k, n in truth["undelivered_by_receiver"].items()})


def assert_accounting_reconciles(routed: Counter, accounting, truth: dict) -> None:
    """The receivers account for every routed message except those the ground truth says never arrived."""
    undelivered = undelivered_by_receiver(truth)
    assert +accounted(accounting) == +Counter({k: routed[k] - undelivered[k] for k in routed})


def test_accounting_equals_routed_puts_minus_held_except_skews(estate):
    root, truth = estate
    puts, accounting, _browses, _captures, _found, _rejected = _parse_all(root)
    routed = Counter((r.observed_qmgr, r.queue) for r in puts)  # --observed-every 1: every row says where
    assert None not in {qm for qm, _ in routed}
    expected = Counter({(qm, q): n for qm, qs in truth["expected_by_receiver"].items() for q, n in qs.items()})
    assert routed == expected
    observed, undelivered = accounted(accounting), undelivered_by_receiver(truth)
    skews = Counter()
    for s in truth["skews"]:
        skews[(s["receiver"], s["queue"])] += s["delta"]
    assert len(truth["skews"]) == 2 and all(s["delta"] != 0 for s in truth["skews"])
    assert sum(undelivered.values()) > 0  # the last outage is still going at the end
    want = Counter()
    for k in set(routed) | set(skews):
        want[k] = routed[k] - undelivered[k] + skews[k]
    assert +observed == +want
    # the skew sits in the one interval it names, and only there
    for s in truth["skews"]:
        end = datetime.fromisoformat(s["interval_end"].replace("Z", ""))
        cell = sum(r.put_count_nonpersistent + r.put_count_persistent for r in accounting
                   if (r.qmgr, r.queue, r.interval_end) == (s["receiver"], s["queue"], end))
        assert cell == s["written_count"]
        assert abs(s["written_count"] - s["true_count"] * float(eval(s["factor"]))) <= 2


def test_held_messages_are_the_ones_in_the_browses(estate):
    root, truth = estate
    _puts, _acct, browses, _captures, _found, _rejected = _parse_all(root)
    assert truth["browses"]
    for b in truth["browses"]:
        msgs = browses[b["file"]]
        assert len(msgs) == b["messages"] == b["on_xmitq"]
        assert all(m.format == "MQXMIT" for m in msgs)
        assert sum(m.accounting_token_zero for m in msgs) == b["zero_token"]
        held = next(h for h in truth["held"] if h["outage"] == b["outage"] and h["xmitq"] == b["xmitq"]
                    and b["file"].split("/")[1] == h["sender"])
        assert [m.msg_id for m in msgs][:50] == held["browse_msg_ids"]
        assert {m.remote_qmgr_name for m in msgs} <= {held["dest"], *truth["estate"]["senders"],
                                                      *[q["name"] for q in truth["estate"]["qmgrs"]]}


def test_still_most_favourable_messages_keep_their_token_and_follow_the_retries(single_instance):
    root, truth = single_instance
    puts, accounting, browses, _captures, found, rejected = _parse_all(root)
    assert found == [] and rejected == []
    reasons = Counter()
    for h in truth["held"]:
        reasons.update(h["by_reason"])
    assert reasons["still most favourable"] > 0
    by_id = {r.msg_id: r for r in puts}
    normal = [m for msgs in browses.values() for m in msgs if not m.accounting_token_zero]
    assert normal
    for m in normal:
        put = by_id[m.msg_id]
        assert put.accounting_token == m.accounting_token == m.inner_accounting_token
        assert m.put_datetime.replace(tzinfo=None) >= put.put_time.replace(tzinfo=None, microsecond=0)
    for m in (m for msgs in browses.values() for m in msgs if m.accounting_token_zero):
        put = by_id[m.msg_id]
        assert put.accounting_token_zero and m.inner_accounting_token != "0" * 64
    # accounting still reconciles
    routed = Counter((r.observed_qmgr, r.queue) for r in puts)
    assert_accounting_reconciles(routed, accounting, truth)


# --------------------------------------------------------------------------------------------------
# zero AccountingToken exactly for the cases of docs/algorithm.md (re-allocation)


def test_zero_tokens_exactly_for_bind_on_open_managed_groups_and_named_targets(estate):
    root, truth = estate
    puts, *_ = _parse_all(root)
    kinds = Counter()
    for r in puts:
        case = ("open" if r.bind == "open" else "group_logical" if r.bind == "group" and r.logical_order
                else "named" if r.target_qmgr else "group_unmanaged" if r.bind == "group" else "notfixed")
        kinds[case] += 1
        assert r.accounting_token_zero == (case in ("open", "group_logical", "named")), r
        if r.bind == "group":
            assert r.group_id and len(r.group_id) == 48
        if case == "named":
            assert r.observed_qmgr == r.target_qmgr
    assert all(kinds[k] > 0 for k in ("open", "group_logical", "named", "group_unmanaged", "notfixed")), kinds
    by_kind = Counter()
    for d in truth["traffic"]:
        by_kind.update(d["by_kind"])
    assert +by_kind == +kinds
    assert sum(d["zero_token"] for d in truth["traffic"]) == sum(r.accounting_token_zero for r in puts)
    # one destination per bind-on-open handle and per logically ordered group
    for attr, cond in (("open_handle", lambda r: r.bind == "open"),
                       ("group_id", lambda r: r.bind == "group" and r.logical_order)):
        dests: dict[str, set] = {}
        for r in puts:
            if cond(r):
                dests.setdefault(getattr(r, attr), set()).add(r.observed_qmgr)
        assert dests and all(len(v) == 1 for v in dests.values())


# --------------------------------------------------------------------------------------------------
# the independent simulation, on cases derived by hand


def _tiny(weights: dict[str, int], queues: dict[str, list[str]], local: dict[str, str] | None = None) -> Estate:
    """A one-cluster estate seen from the sending queue manager QS: back ends with the given CLWLWGHT,
    queues with the given hosts ("QS" = an instance on the sender itself, with CLWLUSEQ ``local[queue]``)."""
    t = datetime(2024, 1, 1)
    names = ["FR1", "FR2", "QS", *sorted(weights)]
    qm = {n: QMgr(n, "repos" if n.startswith("FR") else "sender" if n == "QS" else "backend", i, ("CL1",),
                  "09040200", "SCTQ", n.lower(), f"10.0.0.{i}", t, "") for i, n in enumerate(names)}
    qs = [Queue(q, j, "CL1", tuple(sorted(h)), "", t, 1.0, 200, 300) for j, (q, h) in enumerate(sorted(queues.items()))]
    insts = [Instance(q.name, h, "CL1", (local or {}).get(q.name, "QMGR") if h == "QS" else "QMGR", t)
             for q in qs for h in q.hosts]
    app = App("a", "u", "1", 6, 1)
    return Estate(1, [date(2024, 1, 2)], qm, ["CL1"], qs, insts, ["QS"], sorted(weights), [],
                  {n: names if n == "QS" else [n] for n in names}, {**{n: 50 for n in names}, **weights},
                  {"QS": {"svc": app, "batch": app, "recon": app}}, {"QS": [1] * len(qs)}, {"QS": 1})


def _route(router: SenderRouter, queue_index: int, n: int, plainly: bool = False) -> list[str]:
    out = []
    for _ in range(n):
        keys = router.queue_cache[queue_index] or router.eligible_queue(queue_index)
        k = router.choose_plainly(keys) if plainly else router.choose(keys)
        out.append(router.dests[k].qmgr if not router.dests[k].local else "local")
    return out


def test_round_robin_by_weight_derived_by_hand():
    # APP.Q on QMA (CLWLWGHT 50: +20 a choice), QMB (25: +40) and QMC (50: +20); state from zero.
    #  1 all 0                         -> QMA (name)          QMA 20/#1
    #  2 QMB 0, QMC 0                  -> QMB (name)          QMB 40/#2
    #  3 QMC 0                         -> QMC                 QMC 20/#3
    #  4 QMA 20/#1, QMC 20/#3          -> QMA (lower #)       QMA 40/#4
    #  5 QMC 20                        -> QMC                 QMC 40/#5
    #  6 QMA 40/#4 QMB 40/#2 QMC 40/#5 -> QMB (lowest #)      QMB 80/#6
    #  7 QMA 40/#4, QMC 40/#5          -> QMA                 QMA 60/#7
    #  8 QMC 40                        -> QMC                 QMC 60/#8
    #  9 QMA 60/#7, QMC 60/#8          -> QMA                 QMA 80/#9
    # 10 QMC 60                        -> QMC                 QMC 80/#10   (4:2:4 = 50:25:50)
    est = _tiny({"QMA": 50, "QMB": 25, "QMC": 50}, {"APP.Q": ["QMA", "QMB", "QMC"]})
    expected = ["QMA", "QMB", "QMC", "QMA", "QMC", "QMB", "QMA", "QMC", "QMA", "QMC"]
    assert _route(SenderRouter(est, ConfigState(est), "QS"), 0, 10) == expected
    assert _route(SenderRouter(est, ConfigState(est), "QS"), 0, 10, plainly=True) == expected
    r = SenderRouter(est, ConfigState(est), "QS")
    _route(r, 0, 10)
    assert r.state() == {"QMA/TO.QMA": (80.0, 9), "QMB/TO.QMB": (80.0, 6), "QMC/TO.QMC": (80.0, 10)}


def test_exact_thousand_over_weight_breaks_no_true_tie():
    # QMA CLWLWGHT 1 (+1000 a choice), QMB CLWLWGHT 6 (+1000/6). Choice 1: QMA (name), 1000/#1. Choices 2-7:
    # QMB six times, to exactly 1000/#7. Choice 8: a true tie at 1000, and QMA has the lower DestSeqNumber,
    # so QMA. (Adding 1000/6 six times in floating point gives 999.9999999999999, which would pick QMB.)
    est = _tiny({"QMA": 1, "QMB": 6}, {"APP.Q": ["QMA", "QMB"]})
    assert _route(SenderRouter(est, ConfigState(est), "QS"), 0, 8) == ["QMA"] + ["QMB"] * 6 + ["QMA"]
    assert sum([1000 / 6] * 6) < 1000  # the trap that exact arithmetic avoids


def test_state_is_per_channel_and_shared_by_queues_and_named_targets():
    # APP.X on QMA, QMB; APP.Y on QMB, QMC; all CLWLWGHT 50 (+20). Route X, Y, X, Y, then name QMC, then Y.
    #  X: QMA (name) QMA 20/#1;  Y: QMB (name) QMB 20/#2;  X: QMA 20/#1 vs QMB 20/#2 -> QMA 40/#3;
    #  Y: QMB 20/#2 vs QMC 0 -> QMC 20/#4;  named QMC: QMC 40/#5 (a choice advances the state);
    #  Y: QMB 20/#2 vs QMC 40/#5 -> QMB.
    est = _tiny({"QMA": 50, "QMB": 50, "QMC": 50}, {"APP.X": ["QMA", "QMB"], "APP.Y": ["QMB", "QMC"]})
    r = SenderRouter(est, ConfigState(est), "QS")
    got = [_route(r, 0, 1)[0], _route(r, 1, 1)[0], _route(r, 0, 1)[0], _route(r, 1, 1)[0]]
    got.append(r.dests[r.route_named("QMC")].qmgr)
    got.append(_route(r, 1, 1)[0])
    assert got == ["QMA", "QMB", "QMA", "QMC", "QMC", "QMB"]


def test_local_instance_steps_3_and_5_and_channel_state():
    est = _tiny({"QMA": 50, "QMB": 50}, {"APP.L": ["QS", "QMA"], "APP.A": ["QS", "QMB"], "APP.R": ["QMA", "QMB"]},
                local={"APP.L": "QMGR", "APP.A": "ANY"})
    cfg = ConfigState(est)
    r = SenderRouter(est, cfg, "QS")
    qi = {q.name: q.index for q in est.queues}
    # Step 3: CLWLUSEQ(QMGR) defers to the queue manager's CLWLUSEQ(LOCAL): always the local instance.
    assert _route(r, qi["APP.L"], 3) == ["local"] * 3
    # CLWLUSEQ(ANY): the local instance (own state, the sender's CLWLWGHT 50) competes in step 12. It has
    # been chosen three times (60/#3) and QMB never: QMB, then QMB again (20/#4 < 60), QMB (40/#5), then
    # QMB 60/#6 vs local 60/#3 -> local.
    assert _route(r, qi["APP.A"], 4) == ["QMB", "QMB", "QMB", "local"]
    # Step 5: with only remote instances, a suspended queue manager is avoided while another remains...
    cfg.suspended.add("QMA")
    cfg.epoch += 1
    r.sync()
    assert _route(r, qi["APP.R"], 3) == ["QMB"] * 3
    # ...but not when a local instance remains (reading 3): APP.L is decided by step 3 anyway; and
    # steps 6-9: a RETRYING channel loses to a running one even against the suspension.
    cfg.suspended.discard("QMA")
    cfg.retrying.add("QMB")
    cfg.epoch += 1
    r.sync()
    assert _route(r, qi["APP.R"], 2) == ["QMA", "QMA"]
    assert r.retrying[next(d.key for d in r.dests if d.qmgr == "QMB")]


def test_weight_change_resets_the_factors():
    # QMA, QMB at 50: QMA 20/#1, QMB 20/#2, QMA 40/#3. QMB's CLWLWGHT becomes 25: every factor goes back to
    # zero (DestSeqNumbers stay): QMA 0/#3, QMB 0/#2 -> QMB (lower #) 40/#4, then QMA 20/#5, QMA 40/#6,
    # then QMA 40/#6 vs QMB 40/#4 -> QMB.
    est = _tiny({"QMA": 50, "QMB": 50}, {"APP.Q": ["QMA", "QMB"]})
    cfg = ConfigState(est)
    r = SenderRouter(est, cfg, "QS")
    assert _route(r, 0, 3) == ["QMA", "QMB", "QMA"]
    cfg.weight["QMB"] = 25
    cfg.epoch += 1
    r.sync()
    assert r.resets == 1
    assert _route(r, 0, 4) == ["QMB", "QMA", "QMA", "QMB"]


def test_the_simulation_does_not_use_the_engine_under_test():
    banned = {"clwl.engine.algorithm", "clwl.engine.router", "clwl.engine.state", "clwl.engine.xmitq", "clwl.engine.model", "clwl.engine.view"}
    for path in (ROOT / "clwl" / "generate").glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for n in names:
                assert n not in banned and not n.startswith(("pyspark", "airflow")), (path.name, n)
    code = ("import sys, clwl.cli.generate, clwl.generate.landing; "
            "print(sorted(m for m in sys.modules if m.startswith(('clwl.engine.algorithm', 'clwl.engine.router', 'clwl.engine.state', "
            "'clwl.engine.xmitq', 'pyspark', 'airflow'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


def _generate_import_graph(folder: Path) -> dict[str, set[str]]:
    """Module of clwl.generate -> the modules of clwl.generate it imports, anywhere in it (in functions too).
    ``from clwl.generate import x`` imports the package (it reads x from the package's namespace) and, when x is
    a submodule, x too. The parent package that Python loads before any submodule is not counted."""
    mods = {"clwl.generate" if p.stem == "__init__" else f"clwl.generate.{p.stem}": p for p in folder.glob("*.py")}
    graph: dict[str, set[str]] = {}
    for mod, path in mods.items():
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                deps.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                assert node.level == 0, (mod, "relative import: make it absolute or resolve it here")
                deps.add(node.module or "")
                deps.update(f"{node.module}.{a.name}" for a in node.names)
        graph[mod] = {d for d in deps if d in mods and d != mod}
    return graph


def _import_cycles(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Pairs (a, b): a imports b, and b leads back to a."""
    def reach(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for d in graph[todo.pop()]:
                if d not in seen:
                    seen.add(d)
                    todo.append(d)
        return seen

    return sorted((a, b) for a in graph for b in graph[a] if a in reach(b))


def test_no_module_of_clwl_generate_imports_one_that_imports_it_back():
    graph = _generate_import_graph(ROOT / "clwl" / "generate")
    # the walk sees real edges (a vacuous graph would pass): the package runs landing lazily, landing writes the
    # captures through its part in captures, which renders
    assert "clwl.generate.landing" in graph["clwl.generate"]
    assert "clwl.generate.captures" in graph["clwl.generate.landing"]
    assert "clwl.generate.render" in graph["clwl.generate.captures"]
    assert _import_cycles(graph) == []


def test_the_cycle_check_finds_the_package_landing_cycle(tmp_path):
    # the shape issue 15 removed: the package imports landing (lazily), landing took render from the package
    (tmp_path / "__init__.py").write_text("def generate():\n    from clwl.generate.landing import Generator\n")
    (tmp_path / "landing.py").write_text("from clwl.generate import render as R\n")
    (tmp_path / "render.py").write_text("")
    graph = _generate_import_graph(tmp_path)
    assert _import_cycles(graph) == [("clwl.generate", "clwl.generate.landing"),
                                     ("clwl.generate.landing", "clwl.generate")]


def test_importing_the_package_loads_no_generator_module():
    code = ("import sys; from clwl.generate import GenerateOptions; import clwl.generate.options as o; "
            "print(GenerateOptions is o.GenerateOptions, "
            "sorted(m for m in sys.modules if m.startswith('clwl.generate.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.split() == ["True", "['clwl.generate.options']"]


def test_ground_truth_file_is_written_and_describes_the_run(estate):
    root, truth = estate
    assert json.loads((root / "_generate.json").read_text()) == json.loads(json.dumps(truth))
    assert truth["args"]["seed"] == 3 and truth["totals"]["puts"] == 12000
    kinds = Counter(e["kind"] for e in truth["events"])
    assert kinds["outage"] >= 1 and kinds["weight_change"] >= 1
    assert sum(1 for e in truth["events"] if e.get("unresolved")) == 1
    assert sum(d["puts"] for d in truth["traffic"]) == 12000


# --------------------------------------------------------------------------------------------------
# partitions: eligible messages that wait, and their re-allocation, against the project's replay


def _sender_timeline(root: Path, qm: str):
    from clwl.engine.replay import timeline_from_captures
    caps = []
    for day in sorted(p for p in root.iterdir() if p.is_dir()):
        for f in sorted((day / qm).glob("*")):
            if not f.name.startswith(("config_", "chstatus_")):
                continue
            t = datetime.strptime(day.name + f.stem.split("_")[1], "%Y-%m-%d%H%M%S").replace(tzinfo=timezone.utc)
            caps.append((t, {"CHSTATUS"} if f.name.startswith("chstatus") else set(), parse_capture_file(f).records))
    return timeline_from_captures(qm, caps)


def test_partition_reallocates_eligible_waiting_messages_as_the_replay_does(tmp_path):
    """--partitions: one sender's channels to every host of a queue retry together (messages wait, step 12
    still rotating among them); one comes back at a capture while the others still retry: the eligible waiting
    messages move to it, the bound / named ones stay until their channel runs again. The replay
    (clwl/engine/replay.py), fed the generated captures and puts, re-allocates exactly the messages the ground truth
    lists, to the same destinations; none of them stayed."""
    from clwl.engine.replay import PutEvent, replay

    root = tmp_path / "landing"
    truth = _generate(root, seed=11, days=2, messages_per_day=6000, partitions=2.0, observed_every=1,
                      broken_records=0, skew=0, bind_open_share=0.05, bind_group_share=0.05,
                      named_qmgr_share=0.03)
    assert truth["args"]["partitions"] == 2.0
    assert any(e["kind"] == "partition" for e in truth["events"])
    want = {x["msg_id"].upper(): (x["first_qmgr"], x["final_qmgr"]) for x in truth["reallocated"]}
    assert want and all(a != b for a, b in want.values())

    def ts(text: str) -> datetime:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))

    partitions = [(e["qmgr"], set(e["channels"]), ts(e["start"]), ts(e["end"]))
                  for e in truth["events"] if e["kind"] == "partition"]
    got: dict[str, tuple[str, str]] = {}
    stayed, waited_bound, all_rows = [], 0, []
    for qm in truth["estate"]["senders"]:
        tl = _sender_timeline(root, qm)
        for day in sorted(p for p in root.iterdir() if p.is_dir()):
            recs, problems = parse_puts_file(day / qm / "puts.csv")
            assert problems == []
            events = sorted((PutEvent(r.msg_id, r.put_time, r.queue, r.target_qmgr, r.bind, r.open_handle or "",
                                      r.group_id or "", r.logical_order, r.from_cluster_channel, r.pcf, r.length,
                                      r.observed_qmgr) for r in recs), key=lambda e: e.put_time)
            rows = list(replay(qm, tl, events))
            assert len(rows) == len(events)
            all_rows += rows
            for r in rows:
                if r.reallocations >= 1:
                    got[r.msg_id.upper()] = (r.qmgr, r.final_qmgr)
                    if r.stayed:
                        stayed.append(r.msg_id)
                elif r.held_from is not None and not r.reallocatable and any(
                        qm == p and r.channel in chls and a <= r.put_time < e for p, chls, a, e in partitions):
                    assert not r.held and r.final_qmgr == r.qmgr and r.stayed  # stayed until its channel ran
                    waited_bound += 1
    assert got == want
    assert stayed == []
    assert waited_bound > 0  # bound / named messages waited behind the partition and were not moved
    # observed destinations in puts.csv are the final ones: the replay agrees with every one
    assert all(r.agrees for r in all_rows if r.observed_qmgr)
    # accounting on the receivers reconciles with the final destinations
    puts, accounting, _browses, _captures, found, rejected = _parse_all(root)
    assert found == [] and rejected == []
    routed = Counter((r.observed_qmgr, r.queue) for r in puts)
    expected = Counter({(qm, q): n for qm, qs in truth["expected_by_receiver"].items() for q, n in qs.items()})
    assert routed == expected
    assert_accounting_reconciles(routed, accounting, truth)


def test_partitions_option_is_off_by_default_and_in_the_help(capsys):
    import argparse
    assert GenerateOptions(out="x").partitions == 0
    p = argparse.ArgumentParser(prog="clwl")
    add_generate_command(p.add_subparsers(dest="command"))
    with pytest.raises(SystemExit):
        p.parse_args(["generate", "--help"])
    assert "--partitions RATE" in capsys.readouterr().out
