"""The traffic of a day for the blast radius (clwl/analyses/blast.py): the busiest hour (:func:`busiest_hour`), each
sender's messages in put order as the replay takes them (:class:`Chunk`), cut at that hour (:class:`SenderDay`:
before it, in it, after it), from PutEvents in memory (:func:`split_events`) or from the lake's
silver.message_events, read one sender at a time (:class:`LakeDays`), and the trace's application names."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

from clwl.days import RunDate, as_utc, day_bounds
from clwl.engine.replay import PutEvent, micros

HOUR = timedelta(hours=1)
#: Messages per piece of the traffic after the window: the replays go on only until the window's messages are
#: delivered (usually at the window's end), so they read after it in small pieces.
POST_PIECE = 4096


class BlastError(Exception):
    """The day cannot be examined (no lake, no such date): one line for stderr."""


# -- the window -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Window:
    """The hour the cases stop their channels: [start, end), and the puts of the day in it."""

    start: datetime
    end: datetime
    messages: int

    @property
    def label(self) -> str:
        return f"{self.start:%H:%M}-{self.end:%H:%M}" if self.end.hour else f"{self.start:%H:%M}-24:00"


def busiest_hour(run_date: str, hour_counts: Mapping[int, int]) -> Window:
    """The clock hour (0-23, UTC) of ``run_date`` with the most puts (the earliest of equals); ``hour_counts``: puts
    per hour of the day, every sender together. BlastError when there are none."""
    counts = {h: n for h, n in hour_counts.items() if n > 0}
    if not counts:
        raise BlastError(f"no messages put on {run_date}: no busiest hour to stop anything in")
    hour = min(counts, key=lambda h: (-counts[h], h))
    start = day_bounds(RunDate(run_date))[0] + hour * HOUR
    return Window(start, start + HOUR, counts[hour])


def hour_counts(times: Iterable[datetime]) -> Counter:
    """Puts per clock hour (UTC) of the given put times."""
    return Counter(as_utc(t).hour for t in times)


# -- the traffic ----------------------------------------------------------------------------------------------
@dataclass
class Chunk:
    """Messages of one sender in put order, as SenderReplay.put_batch takes them: ``columns`` (times_us, queues,
    targets, binds, handles, groups, logical, from_channel, pcf, lengths), their ids, and ``event(i)``, the
    PutEvent of message i (built only for messages that wait)."""

    msg_ids: list[str]
    columns: tuple[list, ...]
    event: Callable[[int], PutEvent]

    def __len__(self) -> int:
        return len(self.msg_ids)

    @property
    def times_us(self) -> list[int]:
        return self.columns[0]

    @property
    def queues(self) -> list[str]:
        return self.columns[1]

    @property
    def handles(self) -> list[str]:
        return self.columns[4]


def chunk_of_events(events: Sequence[PutEvent]) -> Chunk:
    """A chunk of PutEvents (in put order)."""
    events = list(events)
    cols = ([micros(e.put_time) for e in events], [e.queue for e in events], [e.target_qmgr or None for e in events],
            [e.bind for e in events], [e.open_handle or "" for e in events], [e.group_id or "" for e in events],
            [e.logical_order for e in events], [e.from_cluster_channel for e in events], [e.pcf for e in events],
            [e.length for e in events])
    return Chunk([e.msg_id for e in events], cols, events.__getitem__)


def chunk_of_batch(batch) -> Chunk:
    """A chunk of an Arrow batch of clwl.lake.silver.INPUT_COLUMNS (as clwl/lake/silver.py's sender_batches gives them)."""
    from clwl.lake.silver import batch_event, put_columns

    return Chunk(batch.column("msg_id").to_pylist(), put_columns(batch), batch_event(batch))


@dataclass
class SenderDay:
    """One sender's day cut at the window: the messages before it (read once, by the baseline), those in it,
    and those after it (read as far as the replays need, kept for the next case)."""

    sender: str
    before: Iterable[Chunk]
    window: list[Chunk]
    after: Iterable[Chunk]


class _Kept:
    """An iterable read once from its source and replayed from memory afterwards, only as far as it was read."""

    def __init__(self, source: Iterable[Chunk]):
        self._source = iter(source)
        self._kept: list[Chunk] = []

    def __iter__(self) -> Iterator[Chunk]:
        i = 0
        while True:
            if i == len(self._kept):
                nxt = next(self._source, None)
                if nxt is None:
                    return
                self._kept.append(nxt)
            yield self._kept[i]
            i += 1


def split_events(sender: str, events: Sequence[PutEvent], window: Window) -> SenderDay:
    """A sender's PutEvents (in put order) cut at the window."""
    before = [e for e in events if e.put_time < window.start]
    inside = [e for e in events if window.start <= e.put_time < window.end]
    after = [e for e in events if e.put_time >= window.end]
    return SenderDay(sender, [chunk_of_events(before)] if before else [],
                     [chunk_of_events(inside)] if inside else [],
                     [chunk_of_events(after[i:i + POST_PIECE]) for i in range(0, len(after), POST_PIECE)])


def split_table(sender: str, table, window: Window, batch_rows: int) -> SenderDay:
    """A sender's day as one Arrow table of INPUT_COLUMNS in put order (its put_time UTC microseconds), cut at the
    window; each part turned into Python lists only when the replays reach it."""
    import pyarrow as pa
    import pyarrow.compute as pc

    t = table.column("put_time")
    start = int(pc.sum(pc.less(t, pa.scalar(window.start, t.type))).as_py() or 0)
    end = int(pc.sum(pc.less(t, pa.scalar(window.end, t.type))).as_py() or 0)

    def pieces(lo: int, hi: int, size: int) -> Iterator[Chunk]:
        for a in range(lo, hi, size):
            yield from (chunk_of_batch(b) for b in table.slice(a, min(size, hi - a)).to_batches())

    return SenderDay(sender, pieces(0, start, batch_rows), list(pieces(start, end, batch_rows)),
                     _Kept(pieces(end, table.num_rows, POST_PIECE)))


# -- from the lake --------------------------------------------------------------------------------------------
def run_dates(lake: Path | str) -> list[str]:
    """The run dates silver.message_events holds messages of, from its Delta log (no data read)."""
    from clwl.lake.door import snapshot
    from clwl.lake.silver import table_path

    files = snapshot(table_path(lake, "silver.message_events")).files()
    return sorted({str(d) for f in files if (d := f.partition["run_date"]) is not None})


def hours_of(files: Sequence[str]) -> Counter:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.dataset as ds

    from clwl.lake.storage import arrow_paths

    filesystem, paths = arrow_paths(list(files))  # local files, or keys on the lake's object store
    col = ds.dataset(paths, format="parquet", filesystem=filesystem).to_table(columns=["put_time"]).column("put_time")
    # Spark's Parquet timestamps read as naive UTC (clwl/lake/silver.py): the hour of the naive value is the UTC hour.
    counts = pc.value_counts(pc.hour(col.cast(pa.timestamp("us"))))
    return Counter({int(v["values"].as_py()): int(v["counts"].as_py()) for v in counts})


class LakeDays(Mapping):
    """Each sender's day, read from silver.message_events when asked for (one sender in memory at a time)."""

    def __init__(self, inputs, window: Window, batch_rows: int):
        self._inputs = {i.sending_qmgr: i for i in inputs}
        self._window, self._batch_rows = window, batch_rows

    def __getitem__(self, sender: str) -> SenderDay:
        import pyarrow as pa

        from clwl.lake.silver import sender_batches

        batches = list(sender_batches(self._inputs[sender]))
        table = pa.Table.from_batches(batches) if batches else None
        if table is None:
            return SenderDay(sender, [], [], [])
        return split_table(sender, table, self._window, self._batch_rows)

    def __iter__(self) -> Iterator[str]:
        return iter(self._inputs)

    def __len__(self) -> int:
        return len(self._inputs)
