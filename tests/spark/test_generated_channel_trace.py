"""The whole pipeline against a generated estate with the channel agents' trace and injected channel stops
(issue 29 item 5: "the pipeline finds exactly those").

`clwl generate --channel-trace --channel-stops 2` writes, beside puts.csv and the captures, the cluster-sender
agents' MQGETs of every message the simulation sends over a channel, at the time it leaves: 2 ms after its put
over a running channel, one second before the capture that shows the channel back after an outage, and, for the
injected stops, at the restart of a channel that stopped after one status capture of its sending queue manager and
restarted before the next (both captures show it RUNNING, so the replay delivers those messages at once). The
replay's timing (clwl.analyses.observed.timing_agreement, docs/activity-trace.md) compares each message's traced departure
with the window the replay gives it, widened by TIMING_TOLERANCE (60 s). So gold.routing_replay must disagree on
timing exactly on the injected stops' messages that left more than the tolerance after their put, with the cause
"stopped-between-captures", and agree on every other traced message: the held ones too (they leave at the
release the captures show). Any other disagreement is a difference between the replay's waits and the
simulation's, and fails the test. Small (one day, two senders, 3000 messages): Spark on a shared 2-core machine.
"""

from __future__ import annotations

from datetime import datetime

import pytest

from clwl.analyses.observed import TIMING_TOLERANCE
from clwl.generate import GenerateOptions, generate
from spark.config import PipelineConfig
from spark.pipeline import run_pipeline

pytestmark = [pytest.mark.spark, pytest.mark.slow]

DAY = "2026-11-19"
ESTATE = dict(seed=11, days=1, senders=2, messages_per_day=3000, outages=1.0, skew=0, broken_records=0,
              channel_trace=True, channel_stops=2, unresolved_outage=False)


@pytest.fixture(scope="module")
def channel_run(tmp_path_factory, spark):
    root = tmp_path_factory.mktemp("generated-channel-trace")
    landing, lake = root / "landing", root / "lake"
    truth = generate(GenerateOptions(out=str(landing), quiet=True, **ESTATE))
    config = PipelineConfig.from_env(lake=lake, landing=landing)
    outcome = run_pipeline(config, [DAY], spark=spark, progress=lambda m: None)
    from deltalake import DeltaTable

    rr = DeltaTable(str(lake / "gold" / "routing_replay")).to_pandas()
    summary = DeltaTable(str(lake / "gold" / "run_summary")).to_pandas()
    return truth, outcome, rr, summary


def _utc(text: str):
    import pandas as pd

    return pd.Timestamp(datetime.fromisoformat(text.replace("Z", "+00:00")))


def test_the_estate_has_stops_and_held_messages(channel_run):
    truth, outcome, _, _ = channel_run
    assert outcome.published, outcome.dates[0].failures
    assert len(truth["channel_stops"]) == 2 and all(s["delayed"] for s in truth["channel_stops"])
    assert truth["held"], "no outage held a message"
    assert truth["channel_trace"]["departures"] > 0 and truth["channel_trace"]["arrivals"] == 0


def test_the_timing_disagreements_are_exactly_the_injected_stops(channel_run):
    truth, _, rr, summary = channel_run
    import pandas as pd

    traced = rr[rr.timing_agrees.notna()]
    assert len(traced) == truth["channel_trace"]["departures"]
    assert traced.observed_left_at.notna().all()
    stopped = {m: s for s in truth["channel_stops"] for m in s["msg_ids"]}
    left = pd.to_datetime(traced.set_index("msg_id").observed_left_at, utc=True)
    put = pd.to_datetime(traced.set_index("msg_id").put_time, utc=True)
    expected = {m for m in stopped if left[m] - put[m] > TIMING_TOLERANCE}
    assert expected, "no stop lasted longer than the tolerance"
    for m, s in stopped.items():  # every message of a stop left at its restart
        assert _utc(s["restarted_at"]) <= left[m] < _utc(s["restarted_at"]) + pd.Timedelta(seconds=1)
    disagreed = traced[traced.timing_agrees == False]  # noqa: E712 (a pandas column)
    assert set(disagreed.msg_id) == expected
    assert set(disagreed.timing_cause) == {"stopped-between-captures"}
    held = traced[traced.held_from.notna()]
    assert len(held) and held.timing_agrees.all()  # the outage's held messages agree
    (row,) = summary.itertuples()
    assert (row.timing_observed, row.timing_disagreed) == (len(traced), len(expected))
