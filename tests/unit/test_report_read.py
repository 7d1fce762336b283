"""The report's lake reads (clwl/report/read.py) on tiny tables written by deltalake, no JVM: a run date's rows at
a version, a count cube taken batch by batch, the folds with their pushed-down conditions, the rows of some
senders, the destination counts."""

from __future__ import annotations

import datetime as dt

import deltalake
import pandas as pd
import pyarrow as pa

from clwl.lake.silver import table_path
from clwl.report import read

D1, D2 = dt.date(2026, 11, 20), dt.date(2026, 11, 21)
T = dt.datetime(2026, 11, 20, 9, 0, tzinfo=dt.timezone.utc)


def _replay(rows: list[tuple]) -> pa.Table:
    """routing_replay rows as (run_date, sender, msg_id, queue, final_qmgr, agrees, held_from)."""
    cols = list(zip(*rows))
    return pa.table({
        "run_date": pa.array(cols[0], pa.date32()), "sending_qmgr": list(cols[1]), "msg_id": list(cols[2]),
        "put_time": pa.array([T + dt.timedelta(seconds=i) for i in range(len(rows))], pa.timestamp("us", "UTC")),
        "queue": list(cols[3]), "final_qmgr": pa.array(cols[4], pa.string()), "agrees": pa.array(cols[5], pa.bool_()),
        "held_from": pa.array(cols[6], pa.timestamp("us", "UTC")), "qmgr": list(cols[4]), "path": ["cluster"] * len(rows),
        "length": pa.array([100] * len(rows), pa.int64()),
        "config_time": pa.array([T] * len(rows), pa.timestamp("us", "UTC")),
    })


def _lake(tmp_path):
    lake = tmp_path / "lake"
    path = table_path(lake, "gold.routing_replay")
    deltalake.write_deltalake(path, _replay([
        (D1, "QM1", "a", "Q1", "QM2", True, None), (D1, "QM1", "b", "Q1", None, False, T),
        (D1, "QM3", "c", "Q2", "QM4", False, None), (D2, "QM1", "d", "Q1", "QM2", True, None)]),
        partition_by=["run_date"])
    deltalake.write_deltalake(path, _replay([(D1, "QM3", "e", "Q1", "QM2", None, T)]), mode="append",
                              partition_by=["run_date"])
    return lake, path


def test_a_run_dates_rows_at_a_version(tmp_path):
    lake, path = _lake(tmp_path)
    t = read.read_table(path, D1, "gold.routing_replay", columns=["msg_id", "queue", "nope"], version=0)
    assert t.version == 0 and list(t.frame.columns) == ["msg_id", "queue"] and sorted(t.frame["msg_id"]) == ["a", "b", "c"]
    assert read.read_table(path, D1, "gold.routing_replay", load=False).version == 1
    every = read.read_table(path, D1, "gold.routing_replay", by_date=False)
    assert len(every.frame) == 5 and every.version == 1
    cube = read.read_table(path, D1, "gold.routing_replay", columns=read.REPLAY_CUBE_COLS, reduce=read.arrow_cube)
    assert cube.version == 1 and int(cube.frame["messages"].sum()) == 4
    assert int(cube.frame.loc[cube.frame["final_qmgr"] == "", "messages"].sum()) == 1  # no error column: no "(error)"
    assert read.read_table(str(tmp_path / "none"), D1, "x").note == "not published"


def test_folds_push_their_conditions_down(tmp_path):
    lake, path = _lake(tmp_path)

    def count(where, version=None):
        return read.fold(path, D1, ["msg_id"], where, lambda ids, b: ids | set(b["msg_id"]), set(), version=version)

    assert count([]) == ({"a", "b", "c", "e"}, 1)
    assert count([], version=0) == ({"a", "b", "c"}, 0)
    assert count([("sending_qmgr", "=", "QM3")]) == ({"c", "e"}, 1)
    assert count([("queue", "in", ["Q2"])]) == ({"c"}, 1)
    assert count([("held_from", "is not null", None)]) == ({"b", "e"}, 1)
    assert count([("agrees", "is distinct from", True)]) == ({"b", "c", "e"}, 1)
    assert count([("nope", "=", 1)]) == (None, 1)
    assert read.fold(str(tmp_path / "none"), D1, ["msg_id"], [], lambda s, b: s, 0) == (None, None)
    kept, n = read.read_disagreements(lake, D1, version=1, limit=1)
    assert n == 2 and list(kept["msg_id"]) == ["b"]
    delayed = read.read_delayed(lake, D1, version=None)
    assert sorted(delayed["msg_id"]) == ["b", "e"]


def test_the_rows_of_some_senders_and_the_destinations(tmp_path):
    lake, _ = _lake(tmp_path)
    igq = read.read_igq_rows(lake, D1, ["QM3"], 0)
    assert list(igq.columns) == ["sending_qmgr", "qmgr", "path", "length", "config_time"]
    assert list(igq["qmgr"]) == ["QM4"]  # version 0: not yet the later row of QM3
    counts = read.destination_counts(lake, D1)
    assert isinstance(counts, pd.DataFrame) and list(counts.columns) == ["queue", "qmgr", "messages"]
    assert sorted(map(tuple, counts.itertuples(index=False))) == [("Q1", "(error)", 1), ("Q1", "QM2", 2),
                                                                  ("Q2", "QM4", 1)]


def test_the_timing_disagreements_at_the_published_version(tmp_path):
    from clwl.lake.published import write_published
    from clwl.report.timing import TIMING_READ, read_disagreements

    lake = tmp_path / "lake"
    assert read_disagreements(lake, D1) is None  # no table
    path = table_path(lake, "gold.routing_replay")
    deltalake.write_deltalake(path, _replay([(D1, "QM1", "a", "Q1", "QM2", True, None)]), partition_by=["run_date"])
    assert read_disagreements(lake, D1) is None  # published before the timing columns

    def timed(rows: list[tuple]) -> pa.Table:
        t = _replay([r[:-1] for r in rows])
        extra = {c: pa.nulls(len(rows), pa.string()) for c in TIMING_READ if c not in t.column_names}
        t = pa.table({**{c: t.column(c) for c in t.column_names}, **extra})
        return t.set_column(t.schema.get_field_index("timing_agrees"), "timing_agrees",
                            pa.array([r[-1] for r in rows], pa.bool_()))

    deltalake.write_deltalake(path, timed([(D1, "QM3", "b", "Q1", "QM2", True, None, False),
                                           (D1, "QM1", "c", "Q1", "QM2", True, None, False),
                                           (D2, "QM1", "d", "Q1", "QM2", True, None, False),
                                           (D1, "QM1", "e", "Q1", "QM2", True, None, True)]),
                              mode="overwrite", schema_mode="overwrite", partition_by=["run_date"])
    wrong = read_disagreements(lake, D1)
    assert list(wrong.columns) == list(TIMING_READ) and list(wrong["msg_id"]) == ["c", "b"]
    write_published(lake / "gold", {"routing_replay": 0})
    assert read_disagreements(lake, D1) is None  # the published version has no timing columns


def _puts(rows: list[tuple]) -> pa.Table:
    """silver.message_events rows as (run_date, sender, queue, seconds after T, bind, open_handle)."""
    cols = list(zip(*rows))
    n = len(rows)
    return pa.table({
        "run_date": pa.array(cols[0], pa.date32()), "sending_qmgr": list(cols[1]),
        "msg_id": [f"M{i}" for i in range(n)], "queue": list(cols[2]),
        "put_time": pa.array([T + dt.timedelta(seconds=s) for s in cols[3]], pa.timestamp("us", "UTC")),
        "bind": pa.array(cols[4], pa.string()), "target_qmgr": pa.nulls(n, pa.string()),
        "open_handle": pa.array(cols[5], pa.string()), "source": ["puts_csv"] * n,
    })


def test_the_skew_counts_each_intervals_puts_per_application_and_bind(tmp_path, monkeypatch):
    """read_skew counts, per unexpected interval [start, end), the puts of its queue (of its sender; "*": every
    sender) per application (the handle's first field) and bind, whatever the batch size. By hand, interval
    QM1 Q1 [T, T+60s): M0 (s 0, app-a, open), M1 (s 10, app-a, open), M2 (s 20, app-b, not-fixed); M3 is at
    T+60s (the end: out), M4 is QM2's, M5 is Q2's, M6 another date's; so app-a/open 2, app-b/not-fixed 1.
    Interval * Q1 [T, T+120s): every sender: M0, M1, M2, M3 (app-b, s 60), M4 (QM2, no handle: application
    None); so app-a/open 2, app-b/not-fixed 2, None/not-fixed 1."""
    lake = tmp_path / "lake"
    deltalake.write_deltalake(table_path(lake, "silver.message_events"), _puts([
        (D1, "QM1", "Q1", 0, "open", "app-a:1:1"), (D1, "QM1", "Q1", 10, "open", "app-a:1:1"),
        (D1, "QM1", "Q1", 20, "not-fixed", "app-b:2:1"), (D1, "QM1", "Q1", 60, "not-fixed", "app-b:2:1"),
        (D1, "QM2", "Q1", 30, "not-fixed", None), (D1, "QM1", "Q2", 5, "open", "app-a:1:1"),
        (D2, "QM1", "Q1", 5, "open", "app-a:1:1")]), partition_by=["run_date"])
    start = pd.Timestamp(T)
    unexpected = pd.DataFrame({"sending_qmgr": ["QM1", "*"], "queue": ["Q1", "Q1"],
                               "interval_start": [start, start],
                               "interval_end": [start + pd.Timedelta(seconds=60), start + pd.Timedelta(seconds=120)]})
    expected = {("QM1", "app-a", "open"): 2, ("QM1", "app-b", "not-fixed"): 1,
                ("*", "app-a", "open"): 2, ("*", "app-b", "not-fixed"): 2, ("*", None, "not-fixed"): 1}
    for batch in (1 << 18, 2):
        monkeypatch.setattr(read, "BATCH_ROWS", batch)
        skew = read.read_skew(lake, D1, unexpected)
        assert set(skew.columns) == {*read.SKEW_KEYS, "application", "bind", "messages"}
        got = {(s, a if isinstance(a, str) else None, b): int(n)
               for s, a, b, n in zip(skew["sending_qmgr"], skew["application"], skew["bind"], skew["messages"])}
        assert got == expected and (skew["interval_start"] == start).all()
    assert read.read_skew(lake, D1, unexpected.iloc[0:0]) is None


def test_the_senders_first_and_last_puts_whatever_the_batch(tmp_path, monkeypatch):
    """read_seen's puts: each sender's first and last put_time of the run date in gold.routing_replay (the latest
    version). _replay puts a write's row i at T + i s: the first write has QM1's a (T) and b (T+1s), QM3's c
    (T+2s) and D2's d (another date: not counted); the append QM3's e (T). So QM1 (T, T+1s), QM3 (T, T+2s)."""
    lake, _ = _lake(tmp_path)
    at = [T + dt.timedelta(seconds=i) for i in range(3)]
    for batch in (1 << 18, 1):
        monkeypatch.setattr(read, "BATCH_ROWS", batch)
        seen = read.read_seen(lake, lake, D1, replay_version=None)
        assert seen.puts == {"QM1": (at[0], at[1]), "QM3": (at[0], at[2])}
