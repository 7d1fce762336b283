"""What `clwl explain` reads of the lake (clwl/analyses/explain.py find_rows, find_stuck) on tiny tables written by
deltalake, no JVM: a message's published rows in either case of its id, on a run date or every one, and its
stuck_messages row; the version read is the published one."""

from __future__ import annotations

import datetime as dt

import deltalake
import pyarrow as pa
import pytest

from clwl.analyses.explain import ExplainError, find_rows, find_stuck
from clwl.lake.published import write_published

D1, D2 = dt.date(2026, 11, 20), dt.date(2026, 11, 21)


def _write(path, rows: list[tuple], mode: str = "append") -> None:
    run_date, sender, msg_id = (list(c) for c in zip(*rows))
    deltalake.write_deltalake(str(path), pa.table({"run_date": pa.array(run_date, pa.date32()),
                                                   "sending_qmgr": sender, "msg_id": msg_id}),
                              mode=mode, partition_by=["run_date"])


def test_a_messages_published_rows_and_its_stuck_row(tmp_path):
    lake = tmp_path / "lake"
    replay, stuck = lake / "gold" / "routing_replay", lake / "gold" / "stuck_messages"
    with pytest.raises(ExplainError, match="no published gold.routing_replay"):
        find_rows(lake, "ab")
    _write(replay, [(D2, "QM2", "AB"), (D1, "QM1", "ab"), (D1, "QM3", "cd")])
    _write(replay, [(D1, "QM9", "AB")])  # version 1, not published below
    _write(stuck, [(D1, "QM1", "ab"), (D2, "QM1", "ab")])
    rows, version = find_rows(lake, "ab")
    assert version == 1 and [(r["run_date"], r["sending_qmgr"]) for r in rows] == [(D1, "QM1"), (D1, "QM9"),
                                                                                    (D2, "QM2")]
    write_published(lake / "gold", {"routing_replay": 0, "stuck_messages": 0})
    rows, version = find_rows(lake, "ab", "2026-11-20")
    assert version == 0 and [(r["run_date"], r["sending_qmgr"], r["msg_id"]) for r in rows] == [(D1, "QM1", "ab")]
    assert find_stuck(lake, rows[0]) == {"run_date": D1, "sending_qmgr": "QM1", "msg_id": "ab"}
    assert find_stuck(lake, {"run_date": D2, "sending_qmgr": "QM2", "msg_id": "AB"}) is None
    write_published(lake / "gold", {"routing_replay": 0})
    assert find_stuck(lake, rows[0]) is None  # stuck_messages not published
