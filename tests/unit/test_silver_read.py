"""What the replay outside Spark reads of silver.message_events' Delta log (clwl/lake/silver.py sender_inputs): a run
date's data files per sending queue manager and their messages, from the log alone, on a tiny table written by
deltalake (no JVM)."""

from __future__ import annotations

import datetime as dt
import os

import deltalake
import pyarrow as pa
import pytest

from clwl.lake.silver import sender_inputs, table_path

D1, D2 = dt.date(2026, 11, 20), dt.date(2026, 11, 21)


def _write(path: str, rows: list[tuple], partition_by=("run_date", "sending_qmgr")) -> None:
    run_date, sender, msg_id = (list(c) for c in zip(*rows))
    deltalake.write_deltalake(path, pa.table({"run_date": pa.array(run_date, pa.date32()), "sending_qmgr": sender,
                                              "msg_id": msg_id}), mode="append", partition_by=list(partition_by))


def test_a_run_dates_files_per_sender_largest_first(tmp_path):
    lake = tmp_path / "lake"
    path = table_path(lake, "silver.message_events")
    _write(path, [(D1, "QM1", "a"), (D1, "QM.A%B", "b"), (D1, "QM.A%B", "c"), (D2, "QM1", "d")])
    _write(path, [(D1, "QM1", "e"), (D1, "QM1", "f"), (D1, "QM3", "g")])
    version, inputs = sender_inputs(lake, "2026-11-20")
    assert version == 1
    assert [(s.sending_qmgr, s.messages, len(s.files)) for s in inputs] == [("QM1", 3, 2), ("QM.A%B", 2, 1),
                                                                             ("QM3", 1, 1)]
    assert all(os.path.isfile(f) and f.startswith(path) for s in inputs for f in s.files)
    assert list(inputs[1].files) == sorted(inputs[1].files) and "sending_qmgr=QM.A" in inputs[1].files[0]
    version, inputs = sender_inputs(lake, "2026-11-20", ["QM3", "QM9"])
    assert version == 1 and [(s.sending_qmgr, s.messages) for s in inputs] == [("QM3", 1)]
    assert sender_inputs(lake, "2026-11-22") == (1, [])


def test_a_table_partitioned_otherwise_is_refused(tmp_path):
    lake = tmp_path / "lake"
    _write(table_path(lake, "silver.message_events"), [(D1, "QM1", "a")], partition_by=("run_date",))
    with pytest.raises(RuntimeError, match="partitioned by"):
        sender_inputs(lake, "2026-11-20")


def test_the_run_dates_blast_offers(tmp_path):
    """clwl.analyses.blast_traffic.run_dates: the run dates silver.message_events holds, from its log alone."""
    from clwl.analyses.blast_traffic import run_dates

    lake = tmp_path / "lake"
    path = table_path(lake, "silver.message_events")
    _write(path, [(D2, "QM1", "a"), (D1, "QM2", "b"), (D2, "QM3", "c")])
    assert run_dates(lake) == ["2026-11-20", "2026-11-21"]
