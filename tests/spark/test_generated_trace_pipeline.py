"""The whole pipeline against a generated estate whose puts are an application activity trace (issue 16 item 4).

`clwl generate --puts-format activity-trace` prints the puts of its own, independently written CLWL simulation as
amqsact -v output, with MQ's answer (Resolved_Q_mgr / Resolved_local_Q_name) set to the simulation's destination
and transmission queue, except for the injected disagreements it lists in _generate.json `trace_disagreements`
(there the traced queue manager is another one). There is no puts.csv. So the pipeline, reading only the trace
and the captures, must replay every traced put, reach the simulation's destination for each, and therefore
disagree with MQ exactly on the injected messages: any other disagreement is a difference between the replay and
the simulation, and fails the test. A disagreement is a finding: the day still publishes.

The estate has what can move a message after its put or pin it: an outage (held messages), a partition (waiting
messages re-allocated to the channel that comes back), bind-on-open handles, logically ordered groups and named
target queue managers, so "agrees" is checked where the replay is hardest. For a re-allocated message the
generator's trace carries the destination it finally went to (the one puts.csv's observed columns carry), and
`agrees` compares with the replay's final destination (docs/activity-trace.md), so the two match. MQ itself
records the put-time choice in the MQPUT (re-allocation comes later, from the queue manager, not from a traced
call): if the generator is changed to print that, the replay's comparison for traced puts must change with it,
or this test fails on the re-allocated messages, as it should. It is kept small (one day, two
senders, 3000 puts): Spark on a shared 2-core machine is slow.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from clwl.generate import GenerateOptions, generate
from spark.config import PipelineConfig
from spark.pipeline import run_pipeline

pytestmark = [pytest.mark.spark, pytest.mark.slow]

DAY = "2026-11-19"  # GenerateOptions' default start date; one day
N_DISAGREEMENTS = 5
ESTATE = dict(seed=3, days=1, senders=2, messages_per_day=3000, outages=1.0, partitions=1.0,
              bind_open_share=0.06, bind_group_share=0.06, named_qmgr_share=0.03, skew=0, broken_records=0,
              puts_format="activity-trace", trace_disagreements=N_DISAGREEMENTS)


@pytest.fixture(scope="module")
def traced_run(tmp_path_factory, spark):
    root = tmp_path_factory.mktemp("generated-trace")
    landing, lake = root / "landing", root / "lake"
    truth = generate(GenerateOptions(out=str(landing), quiet=True, **ESTATE))
    config = PipelineConfig.from_env(lake=lake, landing=landing)
    outcome = run_pipeline(config, [DAY], spark=spark, progress=lambda m: None)
    return truth, lake, outcome


def _table(lake: Path, layer: str, name: str):
    from deltalake import DeltaTable

    return DeltaTable(str(lake / layer / name)).to_pandas()


def _injected(truth: dict) -> dict[str, dict]:
    return {x["msg_id"]: x for x in truth["trace_disagreements"] if x["day"] == DAY}


def test_the_estate_is_a_trace_with_the_injected_disagreements(traced_run):
    truth, _, _ = traced_run
    assert truth["puts_format"] == "activity-trace" and truth["totals"]["rows_in_puts_csv"] == 0
    assert truth["totals"]["traced_puts"] == truth["totals"]["puts"] == 3000
    assert len(_injected(truth)) == N_DISAGREEMENTS
    # the estate has what the docstring promises: re-allocated and held messages
    assert truth["reallocated"] and truth["held"]


def test_the_day_publishes(traced_run):
    _, lake, outcome = traced_run
    (day,) = outcome.dates
    assert outcome.published and day.published, day.failures  # the disagreements never block the gate
    assert list(_table(lake, "gold", "run_summary").status) == ["published"]


def test_every_traced_put_is_read_from_the_trace_and_replayed(traced_run):
    truth, lake, _ = traced_run
    log = _table(lake, "silver", "ingest_files")
    traces = log[log.format == "amqsact"]
    assert sorted(traces.source_file) == sorted(f"{d['day']}/{d['sender']}/{d['sender']}.{d['day']}.amqsact"
                                                for d in truth["traffic"])
    assert (traces.status == "ingested").all() and (traces.records_quarantined == 0).all()
    events = _table(lake, "silver", "message_events")
    assert set(events.source) == {"activity_trace"}
    rr = _table(lake, "gold", "routing_replay")
    assert rr.msg_id.is_unique
    assert len(rr) == len(events) == truth["totals"]["traced_puts"]
    assert rr.groupby("sending_qmgr").size().to_dict() == {
        d["sender"]: d["traced_puts"] for d in truth["traffic"] if d["day"] == DAY}
    # the trace level (MEDIUM, HIGH for the batch application) gives MQ's answer for every put
    assert rr.observed_qmgr.notna().all() and rr.agrees.notna().all()


def test_the_replay_reaches_the_simulations_destinations(traced_run):
    truth, lake, _ = traced_run
    rr = _table(lake, "gold", "routing_replay")
    got = Counter(zip(rr.sending_qmgr, rr.queue, rr.final_qmgr))
    want = Counter({(t["sender"], q, d): n for t in truth["traffic"] if t["day"] == DAY
                    for q, per in t["by_queue_and_destination"].items() for d, n in per.items()})
    assert got == want


def test_the_replay_re_allocates_as_the_simulation_did(traced_run):
    """The partition's waiting messages that the simulation moved to the channel that came back: the replay moves
    each of them too, from the same first destination to the same final one."""
    truth, lake, _ = traced_run
    rr = _table(lake, "gold", "routing_replay").set_index("msg_id")
    moved = [x for x in truth["reallocated"] if x["put_time"].startswith(DAY)]
    assert moved
    got = {x["msg_id"]: (rr.loc[x["msg_id"], "qmgr"], rr.loc[x["msg_id"], "final_qmgr"]) for x in moved}
    assert got == {x["msg_id"]: (x["first_qmgr"], x["final_qmgr"]) for x in moved}
    assert (rr.loc[list(got), "reallocations"] > 0).all()


def test_the_replay_disagrees_with_mq_exactly_on_the_injected_puts(traced_run):
    truth, lake, _ = traced_run
    injected = _injected(truth)
    rr = _table(lake, "gold", "routing_replay").set_index("msg_id")
    disagreeing = set(rr.index[rr.agrees == False])  # noqa: E712 (a pandas column, not a truth test)
    assert disagreeing == injected.keys()
    for mid, x in injected.items():
        row = rr.loc[mid]
        # MQ's (injected) answer is what the trace said; the replay's is the simulation's
        assert (row.observed_qmgr, row.observed_xmitq) == (x["traced_qmgr"], x["traced_xmitq"]), mid
        assert row.final_qmgr == x["simulated_qmgr"] != row.observed_qmgr, mid
        assert row.final_xmitq == x["simulated_xmitq"], mid


def test_run_summary_counts_the_traced_puts(traced_run):
    truth, lake, _ = traced_run
    summary = _table(lake, "gold", "run_summary").iloc[0]
    traced = truth["totals"]["traced_puts"]
    assert (summary.messages_replayed, summary.traced, summary.agreed, summary.disagreed) == (
        traced, traced, traced - N_DISAGREEMENTS, N_DISAGREEMENTS)
