"""The report's configured shares are the engine's: for the same captures, the share the report shows for each
destination is what ``clwl route --count N`` gives (run here in-process, ``--json``), N a multiple of the sum of
the weights step 12 chooses among. Three estates where the copy of the steps the report had before
(``_snapshot_shares`` / ``_keep_best``: the best-ranked channel to a queue manager stood for it, clusters and
CLWLMRUC ignored) gave 50/50, derived from docs/algorithm.md:

(a) QM1 is in clusters CL1 and CL2; QM2 hosts APP.Q in both and advertises a CLUSRCVR in each (TO.QM2.CL1,
    TO.QM2.CL2, CLWLWGHT 50 each); QM3 hosts it in CL1 only (TO.QM3, CLWLWGHT 50). The candidates are one per
    channel: QM2/TO.QM2.CL1, QM2/TO.QM2.CL2, QM3/TO.QM3. Step 1 keeps all three (each channel is in a cluster of
    the queue), step 11 keeps both of QM2's (equal NETPRTY), 11c keeps everything (CLWLMRUC 999999999). Step 12:
    each choice adds 1000/50 = 20 to the chosen channel's DestSeqFactor, the lowest goes next, so the three
    channels take turns: 2 of every 3 messages go to QM2. The engine gives 66.7 / 33.3; the old copy took
    TO.QM2.CL1 alone for QM2 and gave 50 / 50.
(b) CLWLMRUC(1), QM2 and QM3 one channel each at CLWLWGHT 50. Message 1: all DestSeqFactors and DestSeqNumbers
    are 0, the tie goes to the queue manager name: QM2. From message 2 on, step 11c keeps only the one most
    recently used channel (highest DestSeqNumber), TO.QM2: every message goes to QM2. The engine gives 100 / 0;
    the old copy ignored 11c and gave 50 / 50.
(c) QM1 is in CL1 only; QM2 hosts APP.Q in CL1, QM3 in CL2 (its CLUSQMGR record, TO.QM3 in CL2, is in QM1's
    view). Step 1 eliminates "remote instances of queues that do not share a cluster with the local queue
    manager": QM3's. The engine gives 100 / 0; the old copy ignored clusters and gave 50 / 50.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from clwl.cli import main
from clwl.engine.replay import Snapshot
from clwl.engine.shares import engine_shares
from clwl.engine.view import build_view, local_qmgr_name, parse_capture_moment, read_captures
from clwl.report.shares import configured_shares
from tests.handmade import _record, _runmqsc

DAY = dt.date(2026, 11, 20)
SIX = dt.datetime(2026, 11, 20, 6, tzinfo=dt.timezone.utc)
QUEUE = "APP.Q"


def _clusqmgr(qmgr: str, channel: str, cluster: str, deftype: str, weight: int) -> str:
    return _record("AMQ8441I: Display Cluster Queue Manager details.", {
        "CLUSQMGR": qmgr, "CHANNEL": channel, "CLUSTER": cluster, "CLWLPRTY": "0", "CLWLRANK": "0",
        "CLWLWGHT": str(weight), "DEFTYPE": deftype, "NETPRTY": "0", "QMID": f"{qmgr}_2024-01-01_00.00.00",
        "QMTYPE": "NORMAL", "STATUS": "RUNNING", "SUSPEND": "NO",
        "XMITQ": " " if deftype == "CLUSRCVR" else "SYSTEM.CLUSTER.TRANSMIT.QUEUE"})


def write_capture(folder: Path, *, clusters: tuple[str, ...], remotes: list[tuple[str, str, str, int]],
                  instances: list[tuple[str, str]], mruc: int = 999_999_999, name: str = "config_060000.mqsc",
                  disabled: tuple[str, ...] = ()) -> Path:
    """QM1's config capture: its CLUSRCVR in each of ``clusters``; ``remotes`` (qmgr, channel, cluster, CLWLWGHT)
    as auto-defined CLUSSDRs; ``instances`` (host, cluster) of APP.Q, PUT(DISABLED) on the hosts ``disabled``."""
    qm = _record("AMQ8408I: Display Queue Manager details.", {
        "QMNAME": "QM1", "CLWLMRUC": str(mruc), "CLWLUSEQ": "LOCAL", "DEFCLXQ": "SCTQ",
        "QMID": "QM1_2024-01-01_00.00.00"})
    clusqmgrs = [_clusqmgr("QM1", f"TO.QM1.{c}", c, "CLUSRCVR", 50) for c in clusters]
    clusqmgrs += [_clusqmgr(q, ch, c, "CLUSSDRA", w) for q, ch, c, w in remotes]
    queues = [_record("AMQ8409I: Display Queue details.", {
        "QUEUE": QUEUE, "TYPE": "QCLUSTER", "CLUSQMGR": host, "CLUSQT": "QLOCAL", "CLUSTER": cluster,
        "CLWLPRTY": "0", "CLWLRANK": "0", "DEFBIND": "NOTFIXED", "PUT": "DISABLED" if host in disabled else "ENABLED",
        "QMID": f"{host}_2024-01-01_00.00.00"}) for host, cluster in instances]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(_runmqsc("QM1", [
        ("DISPLAY QMGR ALL", [qm]), ("DISPLAY CLUSQMGR(*) ALL", clusqmgrs), ("DISPLAY QCLUSTER(*) ALL", queues)]))
    return folder


def report_shares(folder: Path) -> dict[str, float]:
    """The report's configured share per destination of APP.Q, from the view `clwl route` builds of the captures."""
    caps = read_captures([folder])
    view, problems = build_view(caps.records, local_qmgr_name(caps))
    assert problems == [] and caps.problems == []
    frame = configured_shares({"QM1": [Snapshot(SIX, view)]}, DAY)
    mine = frame[frame["queue"] == QUEUE]
    return dict(zip(mine["qmgr"], mine["configured_share"]))


def routed_shares(capsys, folder: Path, count: int) -> dict[str, float]:
    """``clwl route --mqsc FOLDER --queue APP.Q --count N --json``: each destination's part of the N messages."""
    assert main(["route", "--mqsc", str(folder), "--queue", QUEUE, "--count", str(count), "--json"]) == 0
    got = Counter(json.loads(line)["qmgr"] for line in capsys.readouterr().out.splitlines())
    return {qmgr: 100.0 * n / count for qmgr, n in got.items()}


def assert_same(report: dict[str, float], routed: dict[str, float]) -> None:
    for qmgr in set(report) | set(routed):
        assert report.get(qmgr, 0.0) == pytest.approx(routed.get(qmgr, 0.0), abs=1e-9), (qmgr, report, routed)


def test_a_queue_manager_reached_over_two_channels_gets_both_weights(tmp_path, capsys):
    folder = write_capture(tmp_path / "QM1", clusters=("CL1", "CL2"),
                           remotes=[("QM2", "TO.QM2.CL1", "CL1", 50), ("QM2", "TO.QM2.CL2", "CL2", 50),
                                    ("QM3", "TO.QM3", "CL1", 50)],
                           instances=[("QM2", "CL1"), ("QM2", "CL2"), ("QM3", "CL1")])
    report = report_shares(folder)
    assert report == pytest.approx({"QM2": 200 / 3, "QM3": 100 / 3})
    for n in (150, 300, 1500):  # multiples of the weights' sum, 50 + 50 + 50
        assert_same(report, routed_shares(capsys, folder, n))
    # The report's row for QM2 names both channels and adds their weights.
    caps = read_captures([folder])
    frame = configured_shares({"QM1": [Snapshot(SIX, build_view(caps.records, "QM1")[0])]}, DAY)
    row = frame[frame["qmgr"] == "QM2"].iloc[0]
    assert row["channel"] == "TO.QM2.CL1, TO.QM2.CL2" and row["weight"] == 100


def test_clwlmruc_1_sends_everything_to_the_first_destination(tmp_path, capsys):
    folder = write_capture(tmp_path / "QM1", clusters=("CL1",), mruc=1,
                           remotes=[("QM2", "TO.QM2", "CL1", 50), ("QM3", "TO.QM3", "CL1", 50)],
                           instances=[("QM2", "CL1"), ("QM3", "CL1")])
    report = report_shares(folder)
    assert report == {"QM2": 100.0, "QM3": 0.0}
    for n in (100, 1000):
        assert_same(report, routed_shares(capsys, folder, n))


def test_an_instance_in_a_cluster_the_sender_is_not_in_gets_nothing(tmp_path, capsys):
    folder = write_capture(tmp_path / "QM1", clusters=("CL1",),
                           remotes=[("QM2", "TO.QM2", "CL1", 50), ("QM3", "TO.QM3", "CL2", 50)],
                           instances=[("QM2", "CL1"), ("QM3", "CL2")])
    report = report_shares(folder)
    assert report == {"QM2": 100.0, "QM3": 0.0}
    for n in (50, 100):
        assert_same(report, routed_shares(capsys, folder, n))


def test_weights_give_exact_shares_that_routing_a_multiple_of_their_sum_reproduces(tmp_path, capsys):
    """Step 12 alone, unequal weights (80, 50, 37): shares 80/167, 50/167, 37/167, exactly what 167 or 334
    routed messages give (the module docstring of clwl/report/shares.py says why)."""
    folder = write_capture(tmp_path / "QM1", clusters=("CL1",),
                           remotes=[("QM2", "TO.QM2", "CL1", 80), ("QM3", "TO.QM3", "CL1", 50),
                                    ("QM4", "TO.QM4", "CL1", 37)],
                           instances=[("QM2", "CL1"), ("QM3", "CL1"), ("QM4", "CL1")])
    report = report_shares(folder)
    assert report == pytest.approx({"QM2": 8000 / 167, "QM3": 5000 / 167, "QM4": 3700 / 167})
    for n in (167, 334):
        assert_same(report, routed_shares(capsys, folder, n))


def test_a_put_that_fails_has_no_configured_share(tmp_path):
    """Every instance PUT(DISABLED) is 2268 for the engine: no destination has a share."""
    from clwl.engine.model import ClusterChannel, ClusterView, QmgrAttributes, QueueInstance

    view = ClusterView(QmgrAttributes("QM1"), channels=(ClusterChannel("TO.QM2", "QM2", frozenset({"CL1"})),),
                       instances=(QueueInstance(QUEUE, "QM2", frozenset({"CL1"}), put_enabled=False),),
                       local_receivers=(ClusterChannel("TO.QM1", "QM1", frozenset({"CL1"}), deftype="CLUSRCVR"),))
    assert engine_shares(view, QUEUE) == {}


# ------------------------------------------------------------------------------ split at configuration changes


def test_the_configured_share_splits_at_each_change_and_clwl_route_agrees_inside_each_interval(tmp_path, capsys):
    """Issue 27 item 8. QM1's landing folder has two captures: at 06:00 QM2, QM3 and QM4 host APP.Q PUT(ENABLED),
    CLWLWGHT 80, 50, 50; at 18:00 QM4's instance is PUT(DISABLED). Step 12 alone decides (equal rank and
    priority, CLWLMRUC 999999999), so the shares are the weights' parts: 80/180 = 44.4 %, 50/180 = 27.8 % each
    until 18:00; from 18:00 step 3 (PUT(DISABLED) instances are eliminated when an enabled one remains) leaves QM2
    and QM3: 80/130 = 61.5 %, 50/130 = 38.5 %, QM4 0. There is no configuration before the first capture, so the
    intervals are 06:00-18:00 and 18:00-24:00 (the end of the day). ``clwl route --at`` a time
    inside each interval, ``--count`` a multiple of the weights' sum (180, then 130), gives those counts."""
    folder = tmp_path / "landing" / DAY.isoformat() / "QM1"
    setup = dict(clusters=("CL1",), remotes=[("QM2", "TO.QM2", "CL1", 80), ("QM3", "TO.QM3", "CL1", 50),
                                             ("QM4", "TO.QM4", "CL1", 50)],
                 instances=[("QM2", "CL1"), ("QM3", "CL1"), ("QM4", "CL1")])
    write_capture(folder, **setup)
    write_capture(folder, name="config_180000.mqsc", disabled=("QM4",), **setup)
    # the same captures as route reads them: the view in force at 12:00 (the 06:00 capture), and at 20:00 (18:00)
    snaps = [Snapshot(t, build_view(read_captures([folder], parse_capture_moment(at)).records, "QM1")[0])
             for t, at in ((SIX, "12:00"), (SIX.replace(hour=18), "20:00"))]
    frame = configured_shares({"QM1": snaps}, DAY)
    got = {(i, q): v for i, q, v in zip(frame["interval"], frame["qmgr"], frame["configured_share"])}
    assert got == pytest.approx({("06:00\u201318:00", "QM2"): 8000 / 180, ("06:00\u201318:00", "QM3"): 5000 / 180,
                                 ("06:00\u201318:00", "QM4"): 5000 / 180, ("18:00\u201324:00", "QM2"): 8000 / 130,
                                 ("18:00\u201324:00", "QM3"): 5000 / 130, ("18:00\u201324:00", "QM4"): 0.0})
    for at, interval, count in (("12:00", "06:00\u201318:00", 360), ("20:00", "18:00\u201324:00", 260)):
        assert main(["route", "--mqsc", str(folder), "--at", at, "--queue", QUEUE, "--count", str(count),
                     "--json"]) == 0
        routed = Counter(json.loads(line)["qmgr"] for line in capsys.readouterr().out.splitlines())
        assert_same({q: v for (i, q), v in got.items() if i == interval},
                    {q: 100.0 * n / count for q, n in routed.items()})


def test_the_replayed_share_is_counted_per_configuration_interval():
    """The cube's config_time puts each message in the interval of the configuration it was routed with: with
    intervals 00:00-18:00 and 18:00-24:00 (the test above), 40 messages routed with the 06:00 and 12:00
    captures (QM2 20, QM3 10, QM4 10) count in the first, 13 routed with the 18:00 capture (QM2 8, QM3 5) in the
    second, where QM4 shows configured 0.0 % beside replayed 0 (not the day's 10 of 53)."""
    from clwl.report.read import CUBE_KEYS
    from clwl.report.shares import share_table

    def conf(start, end, interval, shares):
        return [dict(sending_qmgr="QM1", queue=QUEUE, interval_start=pd.Timestamp(start, tz="UTC"),
                     interval_end=pd.Timestamp(end, tz="UTC"), interval=interval, qmgr=q, channel=f"TO.{q}",
                     ch_rank=0, q_rank=0, ch_prty=0, q_prty=0, weight=w, suspended=False, put=p, configured_share=v)
                for q, w, p, v in shares]

    configured = pd.DataFrame(
        conf("2026-11-20", "2026-11-20 18:00", "06:00\u201318:00",
             [("QM2", 80, "ENABLED", 44.4), ("QM3", 50, "ENABLED", 27.8), ("QM4", 50, "ENABLED", 27.8)])
        + conf("2026-11-20 18:00", "2026-11-21", "18:00\u201324:00",
               [("QM2", 80, "ENABLED", 61.5), ("QM3", 50, "ENABLED", 38.5), ("QM4", 50, "DISABLED", 0.0)]))
    base = {k: "" for k in CUBE_KEYS} | {"sending_qmgr": "QM1", "queue": QUEUE, "path": "cluster"}
    cube = pd.DataFrame([base | dict(final_qmgr=q, config_time=t, messages=n) for q, t, n in (
        ("QM2", "2026-11-20T06:00:00+00:00", 12), ("QM2", "2026-11-20T12:00:00+00:00", 8),
        ("QM3", "2026-11-20T06:00:00+00:00", 10), ("QM4", "2026-11-20T12:00:00+00:00", 10),
        ("QM2", "2026-11-20T18:00:00+00:00", 8), ("QM3", "2026-11-20T18:00:00+00:00", 5))])
    table = share_table(configured, cube, DAY)
    rows = {(i, q): (c, r, s) for i, q, c, r, s in zip(table["interval"], table["qmgr"], table["configured"],
                                                      table["replayed"], table["replayed_share"])}
    assert rows[("06:00\u201318:00", "QM2")] == ("44.4 %", 20, "50.0 %")
    assert rows[("06:00\u201318:00", "QM4")] == ("27.8 %", 10, "25.0 %")
    assert rows[("18:00\u201324:00", "QM2")] == ("61.5 %", 8, "61.5 %")
    assert rows[("18:00\u201324:00", "QM4")] == ("0.0 %", 0, "0.0 %")
    assert table["put"][(table["interval"] == "18:00\u201324:00") & (table["qmgr"] == "QM4")].item() == "DISABLED"
