"""The pipeline on a generated queue-sharing group (`clwl generate --qsg`, issue 38): the generator routes every
message with its own simulation and writes, per put, where MQ put it (observed_qmgr, observed_xmitq: the shared
SYSTEM.QSG.TRANSMIT.QUEUE for a message to another member of an IGQ(ENABLED) sender's group that fits 64,084 bytes
(a CFLEVEL(3) structure, MAXMSGL 64,512, less the MQXQH), the cluster transmission queue otherwise). The pipeline,
from the exported z/OS captures and put files alone, must replay the same path for every message: its delivery
paths per sender equal the generator's by_path counts, and every observed transmission queue agrees. The size mix
straddles the limit (messages of exactly 64,084 and 64,085 bytes in every estate), and IGQ is switched on a sending
member during the day (--qsg-igq-changes 1)."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from clwl.cli import main as clwl_main

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.extended]
DAY = "2026-11-19"


def test_generated_queue_sharing_group_replays_every_path(tmp_path, spark):
    from deltalake import DeltaTable

    from spark.config import PipelineConfig
    from spark.pipeline import run_pipeline

    landing, lake = tmp_path / "landing", tmp_path / "lake"
    assert clwl_main(["generate", "--out", str(landing), "--qsg", "4", "--qsg-igq-changes", "1", "--observed-every",
                      "1", "--seed", "1", "--days", "1", "--messages-per-day", "2000", "--quiet"]) == 0
    truth = json.loads((landing / "_generate.json").read_text())
    outcome = run_pipeline(PipelineConfig(lake=lake, landing=landing), [DAY], spark=spark, progress=lambda m: None)
    assert outcome.published
    rr = DeltaTable(str(lake / "gold" / "routing_replay")).to_pandas()
    got = Counter(zip(rr.sending_qmgr, rr.path))
    want = Counter({(t["sender"], p): n for t in truth["traffic"] if t["day"] == DAY
                    for p, n in t["by_path"].items() if n})
    assert got == want
    assert truth["qsg"]["by_path"]["igq"] > 0 and truth["qsg"]["igq_too_large"] > 0
    assert rr.agrees.notna().all() and rr.agrees.all(), rr[rr.agrees != True][["msg_id", "xmitq", "observed_xmitq"]]  # noqa: E712
    assert set(rr[rr.path == "igq"].xmitq) == {"SYSTEM.QSG.TRANSMIT.QUEUE"}
