"""Put CSV files read by Spark's own CSV reader (the fast path), every other put file by the Python parser (the
exact path), with the same rows either way. Off unless ``$CLWL_PUT_CSV_READER`` is ``spark`` (``PipelineConfig.put_csv_reader``).

A put CSV file is read by Spark when everything in it is what the Python parser (:mod:`clwl.parse.puts`) would
accept unchanged; any file in which something is not goes, whole, to the Python parse tasks, whose rows and
quarantine rows are by construction today's. So the fast path never quarantines anything and never needs a
reason: it only has to be sure a file is clean. It is sure when:

1. the driver (:func:`inspect_put_csv`, one pass over the bytes at memory speed) finds: the header on the first
   line (after an optional UTF-8 byte order mark) laid out by the parser's own :func:`clwl.parse.puts.csv_header`;
   only ASCII text after the mark, no NUL, no double quote (so every line is split on commas, the way the
   parser splits a line without a quote, and Spark's reader is run with quoting off), no carriage return but in
   CRLF; and the number of physical lines;
2. Spark's CSV reader (an explicit schema of strings, one per header field, ``mode=PERMISSIVE`` and the
   corrupt-record column) gives each line its fields, and column expressions built from the parser's rules
   (:mod:`clwl.parse.put_rows`: the MQ name characters and lengths, hex sizes, booleans, binds, the application
   limit) check every value (:data:`_READERS`): no row is corrupt (a field count other than the header's), every
   value passes, and the file's records are as many as its physical lines less the header (Spark's reader skips
   blank lines; the parser skips them too but counts them, so a file with one goes to the parser to keep its
   line numbers);
3. no msg_id is repeated within the file (compared as 64-bit hashes: a collision only sends the file to the
   parser).

Some values the parser accepts are outside the fast path on purpose (the file goes to the parser, which gives
the same result, only slower): put times other than ``YYYY-MM-DDTHH:MM:SS[.f..ffffff][Z|+HH:MM|-HH:MM]`` in the
years 1900-2999, lengths of more than 18 digits, a value with a blank at either end (the parser strips it) or
non-ASCII text anywhere. The rules themselves are the parser's; only this domain is the fast path's own.

Line numbers: Spark splits a large file into blocks read by separate tasks. Each row carries its file, the start
of its block (``input_file_block_start``) and ``monotonically_increasing_id`` (consecutive within a task's
block); per (file, block) the rows' count and first id give every row's line: the header is line 1, a block's
rows follow the rows of the blocks before it. The rows are written once to the scratch folder
(``<scratch>/_put_csv``), so those ids are fixed before they are counted.
"""

from __future__ import annotations

import codecs
import functools
import os
import re
import time
from dataclasses import dataclass, field
from typing import Callable, NamedTuple
from urllib.parse import unquote, urlparse

from clwl.landing import formats
from clwl.landing.discovery import LandingFile
from clwl.parse.common import InputError
from clwl.parse.put_record import APPLICATION_MAX, BINDS, PUT_COLUMNS, PutColumn
from clwl.parse.put_rows import BOOL_WORDS, HEX_BYTES, HEX_DIGITS, MQ_NAME_CHARS, NAME_MAX
from clwl.parse.puts import CsvHeader, csv_header
from spark.tables import TABLES

# On only when asked (``CLWL_PUT_CSV_READER=spark``, spark.config.PipelineConfig.put_csv_reader): by default every
# put file is read by the Python parser. Measured on the 2-core target (BENCHMARKS.md, bench/put_csv.py): Spark's
# reader with the parser's checks costs about 1.7 times the parser's CPU per record (its tokenizer and Parquet
# writer alone cost about what the whole Python parse does), so it is not the default there.
PUT_RECORDS = "bronze.put_records"
#: The name the put CSV format logs (``clwl.landing.formats``), and the only one read here.
CSV = formats.PUT_CSV_FORMAT
#: The scratch sub-folder the fast path's rows are written to (not one of the parsed tables).
SCRATCH_FOLDER = "_put_csv"
CORRUPT = "_corrupt_record"
#: Spark's CSV reader as the parser reads a line without a quote: split on commas, nothing trimmed, quoting off
#: (the driver has made sure there is no quote), an empty field is null (read back as ""), and a row whose field
#: count is not the header's goes to the corrupt-record column.
READ_OPTIONS = {
    "header": "false", "sep": ",", "quote": "", "escape": "", "mode": "PERMISSIVE",
    "columnNameOfCorruptRecord": CORRUPT, "ignoreLeadingWhiteSpace": "false", "ignoreTrailingWhiteSpace": "false",
    "nullValue": "", "encoding": "UTF-8", "multiLine": "false", "enforceSchema": "true",
}
#: With column pruning Spark's CSV reader tokenizes only the columns a query uses and no longer compares a row's
#: field count with the schema; the fast path needs that comparison, so pruning is off while it reads.
_PRUNING = "spark.sql.csv.parser.columnPruning.enabled"
#: Paths handed to Spark as they are: no glob characters, colons, percent signs or blanks, which Hadoop would read
#: as patterns or URI syntax (any other file goes to the parser).
_PLAIN_PATH = re.compile(r"\A/[A-Za-z0-9._/=@+-]*\Z")
#: A header wider than this goes to the parser (Spark would plan a column per field).
MAX_WIDTH = 256
_CHUNK = 8 << 20


# ------------------------------------------------------------------------------------------------------------
# The driver's look at a file


class PutCsvShape(NamedTuple):
    """What the driver found in a put CSV file the fast path may read."""

    layout: CsvHeader  # the parser's reading of its header
    lines: int  # physical lines, the header's included


def inspect_put_csv(path: str) -> PutCsvShape | str:
    """The shape of a put CSV file Spark's reader may take, or why the file goes to the Python parser."""
    if not _PLAIN_PATH.match(path):
        return "its path has characters Spark would read as a pattern"
    lines = crs = crlfs = 0
    header: bytes | None = None
    last = b""
    try:
        with open(path, "rb") as fh:
            for chunk in iter(functools.partial(fh.read, _CHUNK), b""):
                if header is None:
                    if chunk.startswith(codecs.BOM_UTF8):
                        chunk = chunk[len(codecs.BOM_UTF8):]
                    end = chunk.find(b"\n")
                    if end < 0:
                        return "no complete header line in its first 8 MiB"
                    header = chunk[:end]
                reason = _odd_bytes(chunk)
                if reason:
                    return reason
                lines += chunk.count(b"\n")
                crs += chunk.count(b"\r")
                crlfs += chunk.count(b"\r\n") + (last == b"\r" and chunk[:1] == b"\n")
                last = chunk[-1:]
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc}"
    if header is None:
        return "empty file"
    if crs != crlfs:
        return "a line ends in a lone carriage return"
    if last != b"\n":
        lines += 1
    fields = header.decode("ascii").removesuffix("\r").split(",")
    if len(fields) > MAX_WIDTH:
        return f"its header has more than {MAX_WIDTH} fields"
    try:
        layout = csv_header(fields, path)
    except InputError as exc:
        return exc.reason
    return PutCsvShape(layout, lines)


def _odd_bytes(chunk: bytes) -> str | None:
    """Why a chunk of the file is not for Spark's reader: each test is one scan at memory speed."""
    if not chunk.isascii():
        return "non-ASCII text"
    if b"\x00" in chunk:
        return "a NUL character"
    if b'"' in chunk:
        return "a quoted field"
    return None


# ------------------------------------------------------------------------------------------------------------
# The checks of each value, as Spark columns, from the parser's rules


def _F():
    from pyspark.sql import functions as F

    return F


def _plain(F, v):
    """Printable ASCII without a blank at either end: what the parser keeps as it is (it strips blanks). A comma
    cannot be in a field, and the driver has made sure there is no quote."""
    return v.rlike(r"^[\x20-\x7e]*$") & ~v.startswith(" ") & ~v.endswith(" ")


def _nullable(F, c: PutColumn, v, ok, value):
    """An empty optional value is None; an empty required one fails."""
    if c.nullable:
        return F.when(v == "", F.lit(True)).otherwise(ok), F.when(v != "", value)
    return ok, value


def _mq_name(F, c: PutColumn, v):
    ok = v.rlike(f"^[{MQ_NAME_CHARS}]{{1,{NAME_MAX[c.name]}}}$")
    return _nullable(F, c, v, ok, v)


def _hex(F, c: PutColumn, v):
    return v.rlike(f"^[{HEX_DIGITS}]{{{2 * HEX_BYTES[c.name]}}}$"), F.upper(v)


def _boolean(F, c: PutColumn, v):
    low, value = F.lower(v), F.lit(None).cast("boolean")
    for word, truth in BOOL_WORDS.items():
        value = F.when(low == word, F.lit(truth)).otherwise(value)
    return value.isNotNull(), value


def _bind(F, c: PutColumn, v):
    return F.lower(v).isin(*BINDS), F.lower(v)


# Digits a length may have in the fast path (the parser takes up to a long's 19; these always fit).
_LENGTH_DIGITS = 18


def _length(F, c: PutColumn, v):
    return v.rlike(f"^[0-9]{{1,{_LENGTH_DIGITS}}}$"), v.try_cast("long")


#: The put times the fast path reads (a subset of what the parser's datetime.fromisoformat reads): the year
#: 1900-2999, a fraction of 1-6 digits, ``Z``, an offset below 18 hours (Java's limit) or no zone (UTC).
_PUT_TIME = (r"^(?:19|2[0-9])[0-9]{2}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])"
             r"T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]{1,6})?(?:Z|[+-](?:0[0-9]|1[0-7]):[0-5][0-9])?$")


def _put_time(F, c: PutColumn, v):
    # In that shape Spark's cast reads the same instant (a time without a zone is given "Z": UTC, whatever the
    # session's zone), and no instant for a day the calendar does not have (2026-02-29).
    zoned = v.endswith("Z") | F.substring(v, -6, 1).isin("+", "-")
    ts = F.when(zoned, v).otherwise(F.concat(v, F.lit("Z"))).try_cast("timestamp")
    return v.rlike(_PUT_TIME) & ts.isNotNull(), ts


def _as_given(F, c: PutColumn, v):
    return _nullable(F, c, v, _plain(F, v), v)


def _application(F, c: PutColumn, v):
    return _nullable(F, c, v, _plain(F, v) & (F.length(v) <= APPLICATION_MAX), v)


#: How each put column is checked and read (:class:`clwl.parse.put_record.PutColumn` name -> reader).
_READERS: dict[str, Callable] = {
    "put_time": _put_time, "bind": _bind, "length": _length, "application": _application,
    "open_handle": _as_given, "group_id": _as_given,
    **dict.fromkeys(NAME_MAX, _mq_name), **dict.fromkeys(HEX_BYTES, _hex),
    **{c.name: _boolean for c in PUT_COLUMNS if c.type == "boolean"},
}
assert set(_READERS) == {c.name for c in PUT_COLUMNS}, "every put column needs a fast-path reader"


def _checked_rows(frame, F):
    """``frame`` (file, block, id, whole, one text column per put column) -> the rows every check passed, the put
    columns typed as bronze.put_records has them."""
    oks, values = [F.col("whole")], []
    for c in PUT_COLUMNS:
        ok, value = _READERS[c.name](F, c, F.col(c.name))
        oks.append(ok)
        values.append(value.alias(c.name))
    ok = functools.reduce(lambda a, b: a & b, oks)
    token = F.upper(F.col("accounting_token"))
    return frame.where(ok).select(
        "file", "block", "id", *values,
        (token == "0" * (2 * HEX_BYTES["accounting_token"])).alias("accounting_token_zero"))


# ------------------------------------------------------------------------------------------------------------
# Reading, deciding, the rows


@dataclass
class PutCsvRead:
    """What the fast path did with the put CSV files of a run."""

    results: list[dict] = field(default_factory=list)  # the summaries of the files it read (as a parse task's)
    frame: object = None  # bronze.put_records rows of those files (a DataFrame), None when it read none
    fallback: dict[str, str] = field(default_factory=dict)  # source_file -> why the Python parser reads it

    @property
    def done(self) -> set[str]:
        return {r["source_file"] for r in self.results}


def is_candidate(f: LandingFile) -> bool:
    """A put CSV file (by its name) that is to be read at all."""
    return not f.reject and not f.skipped and formats.logged_format(f.parser, f.source_file) == CSV


def _file_key(uri: str) -> str:
    """A file as Spark's input_file_name names it -> its local path."""
    return unquote(urlparse(uri).path)


def _read_layout(spark, F, paths: list[str], layout: CsvHeader):
    from pyspark.sql.types import StringType, StructField, StructType

    schema = StructType([StructField(f"c{i}", StringType()) for i in range(layout.width)]
                        + [StructField(CORRUPT, StringType())])
    raw = spark.read.schema(schema).options(**READ_OPTIONS).csv(["file://" + p for p in paths])
    texts = [(F.coalesce(F.col(f"c{i}"), F.lit("")) if i >= 0 else F.lit("")).alias(c.name)
             for c, i in zip(PUT_COLUMNS, layout.index)]
    return raw.select(F.input_file_name().alias("file"), F.input_file_block_start().alias("block"),
                      F.monotonically_increasing_id().alias("id"), F.col(CORRUPT).isNull().alias("whole"), *texts)


class BlockCount(NamedTuple):
    """The accepted rows of one block of a file, as Spark read them."""

    block: int  # the block's first byte
    rows: int
    first_id: int


def line_offsets(shape: PutCsvShape, blocks: list[BlockCount], repeated_id: bool) -> dict[int, int] | str:
    """``{block start: what to add to a row's id to get its line}`` for a clean file, or why it is not clean:
    every line but the header is an accepted record (Spark's reader skips blank lines: then the counts differ),
    and no two have the same msg_id."""
    accepted = sum(b.rows for b in blocks)
    if accepted + 1 != shape.lines:
        return f"{shape.lines - 1 - accepted} of its {shape.lines - 1} lines under the header are not clean records"
    if repeated_id:
        return "a repeated msg_id"
    offsets, before = {}, 1  # the header is line 1
    for b in sorted(blocks):
        offsets[b.block] = before + 1 - b.first_id
        before += b.rows
    return offsets


def _summary(f: LandingFile, rows: int) -> dict:
    """The file's summary as the parse task gives it for a file of ``rows`` records, all accepted."""
    return {"source_file": f.source_file, "run_date": f.run_date, "observing_qmgr": f.observing_qmgr,
            "format": CSV, "status": "ingested", "reason": None, "records_read": rows, "records_accepted": rows,
            "records_quarantined": 0, "records_skipped": 0, "rows": {PUT_RECORDS: rows} if rows else {},
            "notes": []}


def read_put_csvs(spark, files: list[LandingFile], run_id: str, scratch, progress=None) -> PutCsvRead:
    """The fast path over the put CSV files among ``files``: what it read (summaries and rows) and which files
    the Python parser is to read, with why. ``scratch``: the run's scratch location (``scratch / name``)."""
    progress = progress or (lambda message: None)
    out = PutCsvRead()
    t0 = time.monotonic()
    shapes: dict[str, tuple[LandingFile, PutCsvShape]] = {}
    for f in files:
        if not is_candidate(f):
            continue
        shape = inspect_put_csv(os.path.abspath(f.path))
        if isinstance(shape, str):
            out.fallback[f.source_file] = shape
        else:
            shapes[os.path.abspath(f.path)] = (f, shape)
    if not shapes:
        return out
    t_inspect = time.monotonic() - t0
    F = _F()
    groups: dict[tuple, list[str]] = {}
    for path, (_, shape) in shapes.items():
        groups.setdefault((shape.layout.width, tuple(shape.layout.index)), []).append(path)
    read = [_read_layout(spark, F, paths, shapes[paths[0]][1].layout) for paths in groups.values()]
    rows = _checked_rows(functools.reduce(lambda a, b: a.unionByName(b), read), F)
    folder = str(scratch / SCRATCH_FOLDER)
    was = spark.conf.get(_PRUNING, None)
    spark.conf.set(_PRUNING, "false")
    try:
        rows.write.mode("overwrite").parquet(folder)
    finally:
        if was is None:
            spark.conf.unset(_PRUNING)
        else:
            spark.conf.set(_PRUNING, was)
    t_read = time.monotonic() - t0 - t_inspect
    written = spark.read.parquet(folder)
    counts = written.groupBy("file", "block").agg(F.count(F.lit(1)).alias("rows"), F.min("id").alias("first_id"))
    # msg_ids compared as 64-bit hashes: a collision only sends its file to the parser
    repeats = (written.groupBy("file", F.xxhash64("msg_id").alias("h")).count().where(F.col("count") > 1)
               .select("file").distinct())
    blocks: dict[str, list[BlockCount]] = {}
    uri: dict[str, str] = {}  # local path -> the file as Spark names it
    for r in counts.collect():
        uri[_file_key(r["file"])] = r["file"]
        blocks.setdefault(_file_key(r["file"]), []).append(BlockCount(r["block"], r["rows"], r["first_id"]))
    repeated = {_file_key(r["file"]) for r in repeats.collect()}
    unknown = (set(blocks) | repeated) - set(shapes)
    if unknown:  # never expected: Spark named a file otherwise than it was given
        raise RuntimeError(f"Spark's CSV reader named files it was not given: {sorted(unknown)[:3]}")
    kept: list[tuple] = []
    for path, (f, shape) in shapes.items():
        offsets = line_offsets(shape, blocks.get(path, []), path in repeated)
        if isinstance(offsets, str):
            out.fallback[f.source_file] = offsets
            continue
        out.results.append(_summary(f, shape.lines - 1))
        kept += [(uri.get(path), block, add, f.run_date, f.observing_qmgr, f.source_file)
                 for block, add in offsets.items()]
    if kept:
        out.frame = _bronze_rows(spark, F, written, kept, run_id)
    progress(f"put CSV reader: {len(out.results)} files read by Spark "
             f"({sum(r['records_read'] for r in out.results)} records), {len(out.fallback)} to the Python parser "
             f"({time.monotonic() - t0:.1f}s: files looked at {t_inspect:.1f}s, read and checked {t_read:.1f}s)")
    return out


def _bronze_rows(spark, F, written, kept: list[tuple], run_id: str):
    """The clean files' rows as bronze.put_records rows: each row's file and block give its line and its file's
    run date, observing queue manager and name."""
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    spec = StructType([StructField("spark_file", StringType()), StructField("spark_block", LongType()),
                       StructField("add", LongType()), StructField("run_date_text", StringType()),
                       StructField("observing_qmgr", StringType()), StructField("source_file", StringType())])
    where = spark.createDataFrame(kept, spec)
    t = TABLES[PUT_RECORDS]
    joined = written.join(F.broadcast(where), (written["file"] == where["spark_file"])
                          & (written["block"] == where["spark_block"]))
    made = {
        "ingest_run_id": F.lit(run_id),
        "run_date": F.to_date("run_date_text"),
        "position": (F.col("id") + F.col("add")).cast("int"),
        "format": F.lit(CSV),
    }
    return joined.select(*[(made[c] if c in made else F.col(c)).cast(f.dataType).alias(c)
                           for c, f in zip(t.columns, t.schema.fields)])


__all__ = ["PutCsvRead", "PutCsvShape", "inspect_put_csv", "is_candidate", "line_offsets", "read_put_csvs"]
