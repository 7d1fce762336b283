"""Intra-group queuing end to end (issue 38): a landing with two queue-sharing groups publishes the ``igq`` path
exactly where MQ takes it, ``cluster`` everywhere else, agrees with MQ's observed transmission queue on every
message, and ``clwl route`` on the date folder gives the same path and transmission queue message by message.

The estate is tests/handmade.py ``igq_landing``; the rules come from IBM's "Clustering with intra-group queuing"
(docs/algorithm.md, intra-group queuing):

- a message to a cluster queue goes over SYSTEM.QSG.TRANSMIT.QUEUE when the sending and the destination queue
  managers are in the same queue-sharing group, the sender has IGQ(ENABLED) (the receiver's own setting does not
  matter) and the message fits the shared queue; otherwise SYSTEM.CLUSTER.TRANSMIT.QUEUE; a destination outside
  the group (another group, a distributed queue manager) always gets the cluster path;
- the message fits when its length <= the shared queue's largest message less the 428-byte MQXQH; the largest
  message is the smaller of the queue's MAXMSGL and its structure's limit: 63 KB (64,512) below CFLEVEL(4), 100 MB
  (104,857,600) at CFLEVEL(4)/(5) with offload;
- the destination is chosen as for clustering, whatever the path (the path never changes the round robin).

QSG1 (MQ1A, MQ2A, MQ3A): APPL1 at CFLEVEL(3) and MAXMSGL(64512): limit min(64,512, 64,512) - 428 = 64,084.
QSG2 (MQ4B, MQ5B): APPL2 at CFLEVEL(5) OFFLOAD(SMDS), MAXMSGL 104,857,600: limit 104,857,600 - 428 = 104,857,172.
MQ1A's members come from its DISPLAY GROUP and from MQ2A's and MQ3A's DISPLAY QMGR QSGNAME(QSG1); MQ2A has no
DISPLAY GROUP: its members come from the others' DISPLAY QMGR alone. No channel status is captured: every channel
is INACTIVE, so every not-fixed choice of APP.Q (instances MQ3A, MQ4B, QMD, weight 50 each) is step 12's least
recently used, ties broken by name: MQ3A, MQ4B, QMD, MQ3A, ... (each choice adds 1000/50 = 20 to its factor).

MQ1A (IGQ(ENABLED)), APP.Q:
  A01 100 B     -> MQ3A (all 0: name)   same group, 100 <= 64,084                   igq
  A02 100 B     -> MQ4B                 QSG2, not MQ1A's group                      cluster
  A03 100 B     -> QMD                  distributed, no group                      cluster
  A04 64,084 B  -> MQ3A (DSN 1 lowest)  64,084 <= 64,084: just fits                igq
  A05 100 B     -> MQ4B                                                              cluster
  A06 1 MB      -> QMD                                                               cluster
  A07 64,085 B  -> MQ3A                 64,085 > 64,084: just over                  cluster
  A08, A09      -> MQ4B, QMD                                                         cluster
  A10 500 B names MQ3A (step 2)         same group, fits: a named target takes IGQ  igq
  A11 APP.L     -> MQ1A's own instance (step 3, CLWLUSEQ(LOCAL))                    local, no xmitq
MQ2A (IGQ(DISABLED) at 06:00, IGQ(ENABLED) from its 12:00 capture), APP.Q:
  B01-B03 06:01-06:03 -> MQ3A, MQ4B, QMD: IGQ disabled                             cluster
  B04 12:01 100 B -> MQ3A (DSN lowest)   IGQ enabled from 12:00                      igq
  B05, B06 -> MQ4B, QMD                                                              cluster
  B07 12:04 70,000 B -> MQ3A             70,000 > 64,084                             cluster
MQ4B (IGQ(ENABLED), QSG2), APP.B (only on MQ5B):
  C01 1 MB (1,048,576 <= 104,857,172: CFLEVEL(5) with offload)                       igq
  C02 100 MB (104,857,600 > 104,857,172)                                             cluster
QMD (distributed), D01 names MQ3A: no queue-sharing group                           cluster

So 5 igq rows (A01 A04 A10 B04 C01), 1 local, the rest cluster over SYSTEM.CLUSTER.TRANSMIT.QUEUE, and every put
record's observed transmission queue (written as MQ would) agrees: 21 of 21.
"""

from __future__ import annotations

import json

import pytest

from tests.handmade import IGQ_DAY, IGQ_MESSAGES, igq_expected_xmitq, igq_landing, igq_msg_id

pytestmark = [pytest.mark.spark, pytest.mark.slow]


@pytest.fixture(scope="module")
def igq_lake(spark, tmp_path_factory):
    from spark.config import PipelineConfig
    from spark.pipeline import run_pipeline

    root = tmp_path_factory.mktemp("igq")
    config = PipelineConfig(lake=root / "lake", landing=igq_landing(root / "landing"))
    outcome = run_pipeline(config, [IGQ_DAY], spark=spark, progress=lambda m: None)
    assert outcome.published, [d.failures for d in outcome.dates]
    return config


def _replay(config):
    from deltalake import DeltaTable

    return DeltaTable(str(config.lake / "gold" / "routing_replay")).to_pandas().set_index("msg_id")


def test_igq_path_exactly_where_mq_takes_it(igq_lake):
    replay = _replay(igq_lake)
    assert len(replay) == len(IGQ_MESSAGES)
    assert [p for *_, p in IGQ_MESSAGES].count("igq") == 5
    for sender, label, _t, _q, _target, length, qmgr, path in IGQ_MESSAGES:
        row = replay.loc[igq_msg_id(sender, label)]
        got = (row.qmgr, row.path, row.xmitq or "")
        assert got == (qmgr, path, igq_expected_xmitq(path)), (label, length, got)
        assert row.agrees, (label, row.observed_xmitq, row.xmitq)
    # The too-large messages say which limit decided, in the trace the explain reads.
    summary = _summary(igq_lake)
    assert (summary["traced"], summary["agreed"], summary["disagreed"]) == (21, 21, 0)


def _summary(config) -> dict:
    from deltalake import DeltaTable

    rows = DeltaTable(str(config.lake / "gold" / "run_summary")).to_pandas()
    return rows.iloc[0].to_dict()


def test_clwl_route_on_the_date_folder_agrees_message_by_message(igq_lake, capsys):
    """For each message, `clwl route` on its sender's folder of the date, at its put time, with its length and
    the destination the pipeline replayed (``--qmgr``: the path depends on the destination and the size, not on
    how the destination was chosen), gives the pipeline's path and transmission queue; the sender's group comes
    from the other queue manager folders of the date, as in the pipeline."""
    from clwl.cli import main

    replay = _replay(igq_lake)
    day = igq_lake.landing / IGQ_DAY
    for sender, label, t, queue, _target, length, _qmgr, _path in IGQ_MESSAGES:
        row = replay.loc[igq_msg_id(sender, label)]
        args = ["route", "--mqsc", str(day / sender), "--queue", queue, "--size", str(length), "--at",
                t.strftime("%H:%M:%S"), "--json"]
        if row.path != "local":
            args += ["--qmgr", row.qmgr]
        assert main(args) == 0
        line = json.loads(capsys.readouterr().out.splitlines()[0])
        assert (line["qmgr"], line["path"], line["xmitq"] or None) == (row.qmgr, row.path, row.xmitq or None), label
