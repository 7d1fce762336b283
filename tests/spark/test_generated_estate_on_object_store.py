"""A generated estate with re-allocation and the channel agents' trace publishes the same tables to a lake on the
object store as to a local lake (issue 31: "the samples and a generated estate with re-allocation and a trace
publish identical tables to a local lake and to the object store"; the samples are
tests/spark/test_lake_on_object_store.py's).

The estate (`clwl generate`, one day, two senders, 3000 messages): a partition (one sender's channels to every
host of a queue retry together, one comes back first and the waiting messages are re-allocated to it, MQ's step
of re-driving the algorithm for messages on a transmission queue whose channel is not running), a channel outage,
a stop between two status captures, and the cluster-sender agents' trace at both ends (MQGET on the sending side,
MQPUT on the receiving side), so the store run reads and replays what only a traced day has: observed departures
and arrivals, timing agreement, re-allocations.

Local: in this process (the session's Spark). Store: `clwl run --lake s3://...` in a process of its own, as a user
runs it. Every silver and gold table is compared row by row, the columns that differ between two runs by design
(run ids, times) left out.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from clwl.generate import GenerateOptions, generate
from clwl.lake.door import GOLD_TABLES, SILVER_TABLES, Lake
from spark.config import REPO_ROOT, PipelineConfig
from spark.pipeline import run_pipeline
from tests.lake_compare import comparable_rows

pytestmark = [pytest.mark.objectstore, pytest.mark.spark, pytest.mark.slow, pytest.mark.extended]

DAY = "2026-11-19"
ESTATE = dict(seed=5, days=1, senders=2, messages_per_day=3000, outages=1.0, partitions=2.0, skew=0,
              broken_records=0, channel_trace=True, channel_trace_ends="both", channel_stops=1,
              unresolved_outage=False)


@pytest.fixture(scope="module")
def both_lakes(tmp_path_factory, spark, object_store):
    root = tmp_path_factory.mktemp("generated-on-store")
    landing, local = root / "landing", root / "lake"
    truth = generate(GenerateOptions(out=str(landing), quiet=True, **ESTATE))
    outcome = run_pipeline(PipelineConfig.from_env(lake=local, landing=landing), [DAY], spark=spark,
                           progress=lambda m: None)
    assert outcome.published, outcome.dates[0].failures
    remote = object_store.lake_uri("generated")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("AWS_") and k != "CLWL_LAKE"},
           **object_store.env()}
    done = subprocess.run([sys.executable, "-m", "clwl", "run", "--landing", str(landing), "--lake", remote],
                          env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=1500)
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    return truth, local, remote


def test_the_estate_has_reallocations_and_a_trace_at_both_ends(both_lakes, object_store, monkeypatch):
    """What makes this estate worth the comparison, read from the store: messages moved by the re-allocation
    step, and traced departures and arrivals."""
    truth, _, remote = both_lakes
    object_store.use(monkeypatch)
    assert truth["reallocated"], "the simulation re-allocated nothing"
    assert truth["channel_trace"]["departures"] > 0 and truth["channel_trace"]["arrivals"] > 0
    rr = Lake(remote).rows("gold.routing_replay").to_pandas()
    assert (rr.reallocations > 0).any(), "no message was re-allocated on the store"
    assert rr.observed_left_at.notna().sum() > 0 and rr.timing_agrees.notna().sum() > 0


def test_every_silver_and_gold_table_equals_the_local_lakes(both_lakes, object_store, monkeypatch):
    _, local, remote = both_lakes
    object_store.use(monkeypatch)
    here, there = Lake(local), Lake(remote)
    compared = []
    for key in [f"silver.{t}" for t in SILVER_TABLES] + [f"gold.{t}" for t in GOLD_TABLES]:
        assert here.exists(key) == there.exists(key), key
        if here.exists(key):
            assert comparable_rows(there, key) == comparable_rows(here, key), key
            compared.append(key)
    assert {f"gold.{t}" for t in GOLD_TABLES} <= set(compared)
    assert set(there.published().dates) == set(here.published().dates) == {DAY}
