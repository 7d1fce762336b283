"""The one table registry, pure Python: every Delta table of the lake (bronze, silver and gold), its columns
(name, type, nullability, in order), partitioning, keys and Delta statistics columns.

Which tables exist and where they live is clwl/lake/door.py's (the map of the lake); this module says what they hold.
The Spark side builds its schemas from it (spark/tables.py: one ``StructType`` per table, nothing spelled
twice), and every reader that runs without Spark takes its column names and positions from here: ``clwl check``
(no pyspark at all), the report, ``clwl explain``. Importing it loads nothing beyond the standard library.

A column's type is the Spark SQL name of its type: ``string``, ``int``, ``bigint``, ``boolean``, ``double``,
``date``, ``timestamp`` (UTC), ``timestamp_ntz``; and three compound types, each with its null rule:
``array<string>`` (:data:`NAMES`: elements never null), ``map<string,string>`` (:data:`ATTRS`: a bare keyword
such as CURRENT has a null value) and ``map<string,bigint>`` (:data:`VERSIONS`: values may be null).

Conventions:

* Every timestamp column is UTC (``timestamp``), except the amqsmon interval times in bronze, which are kept
  exactly as printed (``timestamp_ntz``: amqsmon prints the queue manager's local time and no zone).
* ``run_date`` is the landing folder's date (``<landing>/<YYYY-MM-DD>/<QM>/<file>``); ``observing_qmgr`` is the
  queue manager folder's name: the queue manager whose view (captures, puts, browses) the file holds.
* ``source_file`` is the file's path relative to the landing root (``2026-11-20/QM1/config_060000.mqsc``);
  ``position`` the 1-based line where the record starts in it (0 when the format has no lines, e.g. one REST JSON
  document, or for a whole file); ``seq`` the record's 0-based ordinal within its file where ``position`` is not
  unique.
* ``keys`` are the columns that identify a row (unique within the table); tests check them.
* ``silver.ingest_files`` is the ingest run log: one row per input file per run, appended. Every other table is
  replaced by what the ingested files say (idempotent).
* ``checks`` are the table's Delta CHECK constraints (name -> SQL expression, Spark SQL), declared here only: a
  table is created with them and a lake made by an earlier version gains them at the next run
  (spark/tables.py ``ensure_properties``), and Delta refuses a write with a row that breaks one. A column's NOT
  NULL is its ``nullable`` (Delta's NOT NULL constraint). The gold tables carry checks; the quality suites
  (expectations/) check the same and more before a publish, so a wrong row is normally blocked by the gate with
  its reasons; the constraints refuse one that reaches a gold table any other way.
* ``change_data_feed``: Delta's change data feed (``delta.enableChangeDataFeed``) is on, so a reader can ask what
  changed between two versions (docs/tables.md, "What changed between two versions").
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter
from typing import Callable, Iterable

from clwl.lake.door import TABLE_KEYS

__all__ = ["SPECS", "Column", "TableSpec", "check_partitioning", "columns_of", "constraints_in", "same_expression",
           "spec"]

S, I, L, B, TS, NTZ, D, DBL = ("string", "int", "bigint", "boolean", "timestamp", "timestamp_ntz",  # noqa: E741
                               "date", "double")
NAMES = "array<string>"  # elements never null
ATTRS = "map<string,string>"  # bare keyword (CURRENT) -> null value
VERSIONS = "map<string,bigint>"  # values may be null
#: Every type a column may have.
TYPES = frozenset({S, I, L, B, TS, NTZ, D, DBL, NAMES, ATTRS, VERSIONS})


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # one of TYPES
    nullable: bool = True


@dataclass(frozen=True)
class TableSpec:
    layer: str  # bronze | silver | gold
    name: str
    fields: tuple[Column, ...]
    partition_by: tuple[str, ...]
    keys: tuple[str, ...]
    description: str
    # Columns Delta keeps min/max statistics of (delta.dataSkippingStatsColumns); empty: Delta's default, the
    # first 32 columns. On the message-sized tables the statistics of 32 columns were a third of a write.
    stats_columns: tuple[str, ...] = ()
    # Delta CHECK constraints, (name, Spark SQL expression) pairs: Delta stores each as the table property
    # ``delta.constraints.<name>`` (names lower case). An expression that may be null says what null means.
    checks: tuple[tuple[str, str], ...] = ()
    change_data_feed: bool = False  # delta.enableChangeDataFeed

    @property
    def key(self) -> str:
        return f"{self.layer}.{self.name}"

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.fields)

    @property
    def constraints(self) -> dict[str, str]:
        """The CHECK constraints, name -> expression, as Delta keeps them (``delta.constraints.<name>``)."""
        return dict(self.checks)

    @property
    def properties(self) -> dict[str, str]:
        """The Delta table properties the registry sets on the table (constraints aside): statistics columns and
        the change data feed."""
        props = {}
        if self.stats_columns:
            props["delta.dataSkippingStatsColumns"] = ",".join(self.stats_columns)
        if self.change_data_feed:
            props["delta.enableChangeDataFeed"] = "true"
        return props

    def index(self, column: str) -> int:
        """The 0-based position of ``column`` in a row of the table (KeyError naming the table if none)."""
        try:
            return self.columns.index(column)
        except ValueError:
            raise KeyError(f"{self.key} has no column {column!r}") from None

    def value_checks(self) -> tuple[tuple[int, str, str, int, int], ...]:
        """(index, column, what, lo, hi) of the columns whose values Arrow may refuse: "int" for integers beyond
        the column's range [lo, hi] (int: 32 bits, bigint: 64), "text" (lo = hi = 0) for text that may hold a lone
        surrogate (strings, string maps and string arrays). What the ingest's parse body checks each row against,
        from the registry alone (no pyspark)."""
        bounds = {"int": (-(1 << 31), (1 << 31) - 1), "bigint": (-(1 << 63), (1 << 63) - 1)}
        texts = {"string", "array<string>", "map<string,string>", "map<string,bigint>"}
        return tuple((i, c.name, "int", *bounds[c.type]) if c.type in bounds else (i, c.name, "text", 0, 0)
                     for i, c in enumerate(self.fields) if c.type in bounds or c.type in texts)

    def row(self, **values: object) -> tuple:
        """A tuple in schema order from keyword values; every column must be given (None for null)."""
        cols = self.columns
        if len(values) != len(cols) or any(c not in values for c in cols):
            missing = [c for c in cols if c not in values]
            extra = [k for k in values if k not in cols]
            raise ValueError(f"{self.key}: row missing {missing}, unknown {extra}")
        return tuple(values[c] for c in cols)

    def row_from(self, **constants: object) -> Callable[[object], tuple]:
        """A function ``obj -> tuple in schema order``: each column is ``constants[column]`` when given, else the
        attribute of ``obj`` of the same name. Rows are built by column name, so a column added, removed or moved
        in the schema can never shift the values of the others."""
        cols = self.columns
        from_obj = [c for c in cols if c not in constants]
        unknown = sorted(set(constants) - set(cols))
        if unknown:
            raise ValueError(f"{self.key}: no column {unknown}")
        get = attrgetter(*from_obj) if len(from_obj) > 1 else (lambda o, g=attrgetter(*from_obj): (g(o),))
        if not constants:
            return get
        template = [constants.get(c) for c in cols]
        slots = [i for i, c in enumerate(cols) if c not in constants]

        def build(obj: object) -> tuple:
            out = template.copy()
            for i, v in zip(slots, get(obj)):
                out[i] = v
            return tuple(out)

        return build


def _f(name: str, dtype: str, nullable: bool = True) -> Column:
    return Column(name, dtype, nullable)


def _t(layer: str, name: str, fields: list[Column], partition_by: Iterable[str], keys: Iterable[str],
       description: str, stats_columns: Iterable[str] = (), checks: dict[str, str] | None = None,
       change_data_feed: bool = False) -> TableSpec:
    return TableSpec(layer, name, tuple(fields), tuple(partition_by), tuple(keys), description, tuple(stats_columns),
                     tuple((checks or {}).items()), change_data_feed)


def constraints_in(configuration: dict[str, str] | None) -> dict[str, str]:
    """The CHECK constraints a Delta table has, name -> expression, from its properties (its metadata's
    configuration: ``delta.constraints.<name>``)."""
    prefix = "delta.constraints."
    return {k[len(prefix):]: v for k, v in (configuration or {}).items() if k.startswith(prefix)}


def same_expression(a: str, b: str) -> bool:
    """Whether two texts of a constraint are the same expression: Spark keeps the text of ALTER TABLE ADD
    CONSTRAINT re-spaced (``p_value IS NULL OR ( p_value >= 0 AND p_value <= 1 )``), so spaces do not count."""
    return "".join(a.split()) == "".join(b.split())


# A message that waited left its transmission queue no earlier than it began waiting there (gold's CHECKs).
_RELEASE_NOT_BEFORE_HOLD = "released_at IS NULL OR held_from IS NULL OR released_at >= held_from"


# Lineage columns, first in every bronze table.
_RUN = [_f("ingest_run_id", S, False), _f("run_date", D, False), _f("observing_qmgr", S)]

# The typed put record (clwl.parse.puts.PutRecord without source/line), shared by bronze and silver.
_PUT_FIELDS = [
    _f("put_time", TS, False),
    _f("sending_qmgr", S, False),
    _f("queue", S, False),
    _f("target_qmgr", S),
    _f("bind", S, False),
    _f("open_handle", S),
    _f("group_id", S),
    _f("logical_order", B, False),
    _f("from_cluster_channel", B, False),
    _f("pcf", B, False),
    _f("length", L, False),
    _f("persistent", B, False),
    _f("accounting_token", S, False),
    _f("accounting_token_zero", B, False),
    _f("msg_id", S, False),
    _f("observed_qmgr", S),
    _f("observed_channel", S),
    _f("observed_xmitq", S),
    # Nullable, after the others: a lake made before it existed gains it (ensure_tables), its old rows null.
    # bronze: the put file's optional column as given; silver: the application by clwl.analyses.incidents.application_of.
    _f("application", S),
]

# One message on a transmission queue (clwl.parse.xmitq.XmitqMessage), renamed where it would clash.
_XMITQ_FIELDS = [
    _f("message_number", I),  # XmitqMessage.position: 1-based number of the message in the browse
    _f("xmitq", S),  # the browsed queue, when the output names it
    _f("msg_id", S, False),
    _f("correl_id", S, False),
    _f("accounting_token", S, False),
    _f("accounting_token_zero", B, False),
    _f("put_time", TS, False),  # outer MD PutDate + PutTime
    _f("md_format", S),  # outer MD Format ("MQXMIT")
    _f("persistence", I),
    _f("priority", I),
    _f("group_id", S),
    _f("msg_seq_number", I),
    _f("length", L, False),
    _f("remote_q_name", S),  # MQXQH
    _f("remote_qmgr_name", S),
    _f("inner_accounting_token", S),  # the embedded MQMD's
    _f("inner_put_time", TS),
]

# Puts to one queue in one amqsmon interval (clwl.parse.amqsmon.QueueAccountingRecord), minus the times.
_ACCOUNTING_FIELDS = [
    _f("queue", S, False),
    _f("queue_type", S),
    _f("put_count_nonpersistent", L),
    _f("put_count_persistent", L),
    _f("put1_count_nonpersistent", L),
    _f("put1_count_persistent", L),
    _f("put_fail_count", L),
    _f("put_bytes_nonpersistent", L),
    _f("put_bytes_persistent", L),
    _f("application_name", S),
    _f("connection_id", S),
]

# What one channel moved in one amqsmon statistics interval (clwl.parse.amqsmon.ChannelStatisticsRecord), minus
# the times.
_CHANNEL_STATISTICS_FIELDS = [
    _f("channel", S, False),
    _f("channel_type", S),
    _f("remote_qmgr", S),
    _f("connection_name", S),
    _f("msg_count", L),
    _f("total_bytes", L),
    _f("net_time_min", L),
    _f("net_time_avg", L),
    _f("net_time_max", L),
    _f("exit_time_min", L),
    _f("exit_time_avg", L),
    _f("exit_time_max", L),
    _f("full_batch_count", L),
    _f("incomplete_batch_count", L),
    _f("average_batch_size", L),
    _f("put_retry_count", L),
]



# Per-message tables: statistics only where they skip files. Ingest replaces a file's rows by source_file;
# readers look a message up by sender or msg_id (MQ-made message ids begin with "AMQ" and the queue manager's
# name). Position, put time and queue skip nothing: every file spans a day and every queue.
_MESSAGE_STATS = ("observing_qmgr", "source_file", "sending_qmgr", "msg_id")


_ALL = [
    # ---------------------------------------------------------------------------------------------- bronze
    _t("bronze", "capture_files", _RUN + [
        _f("capture_time", TS, False),
        _f("source_file", S, False),
        _f("format", S, False),  # mqsc | rest | zos
        _f("capture_type", S, False),  # config | chstatus (from the file name)
        _f("kinds_covered", NAMES, False),  # kinds asked for in full: DISPLAY <kind>(*) (or inferred)
        _f("kinds_present", NAMES, False),  # kinds with at least one record in the file
        _f("complete", B, False),  # no record of the file was quarantined
        _f("banner_qmgr", S),
        _f("records", I, False),
        _f("problems", I, False),
    ], ["run_date"], ["source_file"],
       "One row per accepted runmqsc/REST capture file: what it covers, for the silver history rebuild."),
    _t("bronze", "mqsc_objects", _RUN + [
        _f("capture_time", TS, False),
        _f("source_file", S, False),
        _f("seq", I, False),
        _f("position", I, False),
        _f("format", S, False),  # mqsc | rest | zos
        _f("message_id", S),  # AMQnnnnX header ("" for REST)
        _f("kind", S, False),
        _f("object_key", S, False),  # "|".join(clwl.engine.view.record_identity(record)) for every kind but OTHER
        _f("attrs", ATTRS, False),
        _f("attrs_hash", S, False),  # sha256 of the attributes that describe configuration (ingest.attrs_hash)
    ], ["run_date"], ["source_file", "seq"],
       "One row per runmqsc / MQ REST record (DISPLAY CLUSQMGR, QCLUSTER, QMGR, QLOCAL, ..., CHSTATUS)."),
    _t("bronze", "put_records", _RUN + [
        _f("source_file", S, False),
        _f("position", I, False),
        _f("format", S, False),  # csv | jsonl | json | amqsact
    ] + _PUT_FIELDS, ["run_date"], ["source_file", "position"],
       # Each put row is stored once: this table's files hold only the rows silver.message_events does not (those
       # held back); every read of bronze.put_records goes through the view of clwl.lake.put_records, which adds
       # silver's rows back as bronze has them (format, application as given).
       "One row per accepted put record (the documented CSV/JSONL schema, clwl.parse.puts.PUT_COLUMNS): a view "
       "of silver.message_events' rows and the put rows held back from it (stored here).",
       _MESSAGE_STATS),
    _t("bronze", "xmitq_messages", _RUN + [
        _f("capture_time", TS, False),
        _f("source_file", S, False),
        _f("position", I, False),
        _f("format", S, False),  # amqsbcg | dmpmqmsg
    ] + _XMITQ_FIELDS, ["run_date"], ["source_file", "position"],
       "One row per message of a transmission queue browse (amqsbcg, dmpmqmsg)."),
    _t("bronze", "queue_accounting", _RUN + [
        _f("source_file", S, False),
        _f("position", I, False),
        _f("format", S, False),  # amqsmon
        _f("monitoring_type", S, False),  # QueueAccounting | QueueStatistics
        _f("qmgr", S, False),
        _f("interval_start", NTZ, False),  # as printed (queue manager local time, no zone)
        _f("interval_end", NTZ, False),
    ] + _ACCOUNTING_FIELDS, ["run_date"], ["source_file", "position"],
       "One row per queue per amqsmon accounting/statistics interval."),
    _t("bronze", "activity_operations", _RUN + [
        _f("source_file", S, False),
        _f("position", I, False),  # line of "MQI Operation: n" (verbose) or of the summary line
        _f("format", S, False),  # amqsact
        _f("form", S, False),  # verbose | summary
        _f("trace_message", I, False),  # 1-based ordinal of the trace message in the file
        _f("connection", S, False),  # the trace message's Correl_id (hex): the traced connection
        _f("seq_number", I),  # SeqNumber of the trace message
        _f("operation_index", I, False),  # n of "MQI Operation: n"
        _f("operation", S, False),  # MQPUT, MQOPEN, ... ; unknown:<id>
        _f("operation_id", S, False),  # as printed: MQXF_PUT, or a number
        _f("qmgr", S),  # header QueueManager
        _f("application_name", S),
        _f("application_pid", L),
        _f("thread_id", L),  # ApplicationTid
        _f("user_id", S),
        _f("channel_name", S),
        _f("channel_type", S),
        _f("conn_name", S),
        _f("api_environment", S),  # header API Environment: MQXE_MCA for a channel agent, MQXE_OTHER for an application
        _f("operation_time", TS),
        _f("time_basis", S),  # high_res | local
        _f("high_res_time", L),  # microseconds since 1970-01-01 UTC
        _f("comp_code", S),
        _f("reason_code", L),
        _f("hobj", L),
        _f("object_name", S),
        _f("object_qmgr_name", S),
        _f("msg_id", S),  # the call's MQMD MsgId (Msg_id, or the MQMD dump at HIGH), hex; on a transmission queue
        # the MQMD the queue manager made for it, not the application's
        _f("xmitq_msg_id", S),  # Transmit Header Msg_id: the MsgId in the transmission queue header (the message's)
        _f("xmitq_remote_qmgr", S),  # Transmit Header RemoteQMgr: the queue manager the message is addressed to
        _f("xmitq_remote_queue", S),  # Transmit Header RemoteQName: the queue it is addressed to there
        _f("options", L),  # the raw put / open / close / get / connect options value
        _f("trace_level", S, False),  # low | medium | high
        _f("fields", ATTRS, False),  # every printed field: label -> value (hex dumps as hex)
    ], ["run_date"], ["source_file", "position"],
       "One row per MQI operation of an application activity trace (amqsact output), puts or not.",
       ("observing_qmgr", "source_file", "qmgr", "operation")),
    _t("bronze", "channel_statistics", _RUN + [
        _f("source_file", S, False),
        _f("position", I, False),
        _f("format", S, False),  # amqsmon
        _f("qmgr", S, False),
        _f("interval_start", NTZ, False),  # as printed (queue manager local time, no zone)
        _f("interval_end", NTZ, False),
    ] + _CHANNEL_STATISTICS_FIELDS, ["run_date"], ["source_file", "position"],
       "One row per channel per amqsmon ChannelStatistics interval."),
    # ---------------------------------------------------------------------------------------------- silver
    _t("silver", "config_history", [
        _f("observing_qmgr", S, False),
        _f("kind", S, False),
        _f("object_key", S, False),
        _f("attrs", ATTRS, False),
        _f("attrs_hash", S, False),
        _f("valid_from", TS, False),  # capture time of the capture that showed this version first
        _f("valid_to", TS),  # capture time of the first later capture that changed or dropped it; null = current
        _f("source_file", S, False),  # the capture that opened the version
        _f("run_date", D, False),
    ], [], ["observing_qmgr", "kind", "object_key", "valid_from"],
       "Configuration objects as each queue manager saw them, as history (rebuilt from all bronze captures).",
       change_data_feed=True),
    _t("silver", "channel_status", [
        _f("observing_qmgr", S, False),
        _f("channel", S, False),
        _f("chltype", S),
        _f("status", S, False),  # INACTIVE when a full CHSTATUS capture has no record of the channel
        _f("xmitq", S),
        _f("substate", S),
        _f("valid_from", TS, False),
        _f("valid_to", TS),  # null = current
        _f("source_file", S, False),
        _f("run_date", D, False),
    ], [], ["observing_qmgr", "channel", "valid_from"],
       "Channel status timeline per observing queue manager and channel (from DISPLAY CHSTATUS captures).",
       change_data_feed=True),
    _t("silver", "message_events", [
        _f("run_date", D, False),
        _f("observing_qmgr", S),
        _f("source_file", S, False),
        _f("position", I, False),
    ] + _PUT_FIELDS + [
        # Last, and nullable: a lake made before the column existed gains it (ensure_tables), its old rows null.
        _f("source", S),  # csv | jsonl | json | activity_trace: the put file's format
        # The put file's application as given (bronze's ``application``, before application_of): what the
        # bronze.put_records view shows of the row, so that bronze need not store it again (clwl.lake.put_records).
        _f("application_given", S),
        _f("ingest_run_id", S),  # the ingest run that read the put file (bronze's lineage)
    ], ["run_date", "sending_qmgr"], ["source_file", "position"],
       # Partitioned by sender too: the replay's task for one sending queue manager reads that sender's files
       # and no others (spark/replay.py), so no shuffle brings a sender's messages together.
       "Typed message put events (natural key: sending_qmgr, msg_id).",
       tuple(c for c in _MESSAGE_STATS if c != "sending_qmgr")),  # Delta keeps no statistics of a partition column
    _t("silver", "xmitq_contents", [
        _f("run_date", D, False),
        _f("observing_qmgr", S),
        _f("capture_time", TS, False),  # when the browse was taken: the messages sat there then
        _f("source_file", S, False),
        _f("position", I, False),
        _f("format", S, False),
    ] + _XMITQ_FIELDS, ["run_date"], ["source_file", "position"],
       "Messages sitting on transmission queues at browse time."),
    _t("silver", "queue_accounting", [
        _f("run_date", D, False),
        _f("observing_qmgr", S),
        _f("qmgr", S, False),
        _f("monitoring_type", S, False),
        _f("interval_start", TS, False),  # the printed time read as UTC
        _f("interval_end", TS, False),
        _f("put_count", L),  # PutCount + Put1Count, non-persistent + persistent (null if none printed)
    ] + _ACCOUNTING_FIELDS + [
        _f("source_file", S, False),
        _f("position", I, False),
    ], ["run_date"], ["source_file", "position"],
       "Queue accounting/statistics intervals: puts per queue per interval on the receiving queue managers."),
    _t("silver", "channel_statistics", [
        _f("run_date", D, False),
        _f("observing_qmgr", S),
        _f("qmgr", S, False),
        _f("interval_start", TS, False),  # the printed time read as UTC
        _f("interval_end", TS, False),
    ] + _CHANNEL_STATISTICS_FIELDS + [
        _f("source_file", S, False),
        _f("position", I, False),
    ], ["run_date"], ["source_file", "position"],
       "Channel statistics intervals: messages per channel per interval, the sending side's observed count."),
    _t("silver", "quarantine", [
        _f("ingest_run_id", S, False),
        _f("run_date", D, False),
        _f("observing_qmgr", S),
        _f("source_file", S, False),
        _f("seq", I, False),  # 0-based ordinal of the problem within its file
        _f("position", I, False),  # line where the bad record starts; 0 for a whole file
        _f("format", S, False),
        _f("level", S, False),  # record | file | message (a put held out of silver: a repeat, or another date)
        _f("reason", S, False),
        _f("raw", S),
    ], [], ["source_file", "seq"],
       "Every record (or whole file) that could not be accepted, with its source, position, reason and raw text."),
    _t("silver", "ingest_files", [
        _f("ingest_run_id", S, False),
        _f("ingested_at", TS, False),
        _f("run_date", D, False),
        _f("observing_qmgr", S),
        _f("source_file", S, False),
        _f("format", S, False),
        _f("capture_time", TS),
        _f("size_bytes", L),
        _f("content_sha256", S),
        _f("code_version", S, False),  # fingerprint of the parsers and the ingest code that read the file
        _f("status", S, False),  # ingested | rejected | unchanged | removed
        _f("reason", S),  # why a file was rejected (whole file quarantined)
        _f("records_read", L, False),
        _f("records_accepted", L, False),
        _f("records_quarantined", L, False),
        _f("records_skipped", L, False),  # part of accepted: recognised and left out by design (amqsmon MQI records)
    ], [], ["ingest_run_id", "source_file"],
       "Ingest run log: per input file per run, records read = accepted + quarantined."),
    # ---------------------------------------------------------------------------------------------- gold
    # Written per run date (replaceWhere run_date, spark/publish.write_run_date) to <lake>/staging/ first, then,
    # once the quality gate passed, to <lake>/gold/.
    _t("gold", "routing_replay", [
        _f("run_date", D, False),
        _f("sending_qmgr", S, False),
        _f("msg_id", S, False),
        _f("put_time", TS, False),
        _f("queue", S, False),
        _f("target_qmgr", S),
        _f("bind", S, False),
        _f("length", L, False),
        _f("qmgr", S),
        _f("channel", S),
        _f("xmitq", S),
        _f("path", S),
        _f("decided_by", S),
        _f("reallocatable", B),  # null when the put failed
        _f("not_reallocatable_reason", S),
        _f("trace", S),
        _f("error", S),
        _f("reason_code", I),
        _f("config_time", TS),
        _f("reallocations", I, False),
        _f("final_qmgr", S),
        _f("final_channel", S),
        _f("final_xmitq", S),
        _f("held", B, False),
        _f("held_from", TS),
        _f("released_at", TS),
        _f("delivered_at", TS),
        _f("hold_state", S),
        _f("stay_reason", S),
        _f("stay_detail", S),
        _f("observed_qmgr", S),
        _f("observed_xmitq", S),
        _f("agrees", B),
        _f("profile", S, False),
        # The channel agents' activity trace (clwl.analyses.observed; issue 29): when the message left the sender's
        # transmission queue and arrived where, and whether the replay's wait agrees (null: not traced).
        _f("observed_left_at", TS),
        _f("observed_arrived_at", TS),
        _f("observed_arrived_qmgr", S),
        _f("timing_agrees", B),
        _f("timing_cause", S),  # a clwl.analyses.observed.TIMING_CAUSES key when timing_agrees is false
        _f("timing_note", S),
    ], ["run_date"], ["run_date", "sending_qmgr", "msg_id"],
       "Everything the replay knows about each message: first destination, re-allocations, waits, final "
       "destination, the algorithm's trace (stuck_messages and distribution are computed from it).",
       # A run date's files are one per sender task and each holds that sender's whole day, every queue and
       # destination: min/max of put_time, queue or destination never exclude a file, those of the sender and
       # of msg_id (MQ-made ids begin with "AMQ" and the sender's name) do, and error's null count finds the
       # failures. The default (the first 32 columns) made the statistics a third of the write.
       ("sending_qmgr", "msg_id", "error"),
       {"keys_not_null": "run_date IS NOT NULL AND sending_qmgr IS NOT NULL AND msg_id IS NOT NULL",
        "length_not_negative": "length >= 0",
        "reallocations_not_negative": "reallocations >= 0",
        "release_not_before_hold": _RELEASE_NOT_BEFORE_HOLD}),
    _t("gold", "stuck_messages", [
        _f("run_date", D),
        _f("sending_qmgr", S),
        _f("msg_id", S),
        _f("queue", S),
        _f("qmgr", S),
        _f("channel", S),
        _f("xmitq", S),
        _f("channel_state", S),
        _f("held_from", TS),
        _f("released_at", TS),
        _f("age_seconds", L),
        _f("why", S),
        _f("detail", S),
        _f("observed_on_xmitq", B),
        # When the channel agents' trace has it leave the transmission queue (null: not traced), and what says
        # when it waited: channel status (the replay's captures), xmitq browse, or channel agent trace.
        _f("observed_left_at", TS),
        _f("timing_source", S),
        # When a transmission queue browse saw it waiting (the first browse that day; null: no browse saw it): each
        # piece of evidence keeps its own time, so a traced release never hides the browse, nor a browse the trace.
        _f("seen_at", TS),
    ], ["run_date"], ["run_date", "sending_qmgr", "msg_id"],
       "Messages that waited on a transmission queue behind a channel that moved nothing and stayed there, "
       "with why; and messages a browse saw on a transmission queue although the replay had them delivered.",
       checks={"keys_not_null": "run_date IS NOT NULL AND sending_qmgr IS NOT NULL AND msg_id IS NOT NULL",
               "age_not_negative": "age_seconds IS NULL OR age_seconds >= 0",
               "release_not_before_hold": _RELEASE_NOT_BEFORE_HOLD}),
    _t("gold", "distribution", [
        _f("run_date", D, False),
        _f("sending_qmgr", S, False),  # "*" for receiver accounting (all senders together)
        _f("queue", S, False),
        _f("interval_start", TS, False),
        _f("interval_end", TS, False),
        _f("qmgr", S, False),
        _f("expected", L, False),
        _f("observed", L, False),
        _f("deviation", DBL, False),
        _f("p_value", DBL),
        _f("verdict", S, False),  # expected | unexpected | insufficient data
        _f("explanation", S, False),
        _f("source", S, False),  # observed_destination | accounting | channel_statistics
        # The sending channel of a channel_statistics row (queue "*": every queue it carried); null otherwise. In
        # the key: two cluster sender channels of one sender can lead to one queue manager (overlapping clusters).
        _f("channel", S),
    ], ["run_date"], ["run_date", "sending_qmgr", "queue", "interval_start", "qmgr", "source", "channel"],
       "Per sender, queue, interval and destination: the replay's count against the observed one, and a verdict.",
       # channel, in the key, is null for every source but channel_statistics (the suite checks which)
       checks={"keys_not_null": "run_date IS NOT NULL AND sending_qmgr IS NOT NULL AND queue IS NOT NULL AND "
                                "interval_start IS NOT NULL AND qmgr IS NOT NULL AND source IS NOT NULL",
               "counts_not_negative": "expected >= 0 AND observed >= 0",
               "p_value_within_0_and_1": "p_value IS NULL OR (p_value >= 0 AND p_value <= 1)",
               "interval_end_after_start": "interval_end > interval_start"}),
    _t("gold", "trend_facts", [
        _f("run_date", D, False),
        _f("metric", S, False),  # a clwl.analyses.trend_facts.METRICS name
        # The subject, as clwl metrics labels it; null where it does not apply (a finding's rule has no queue).
        _f("mq_cluster", S),
        _f("queue", S),
        _f("qmgr", S),
        _f("sending_qmgr", S),  # "*" for receiver accounting (every sender together), as gold.distribution
        _f("channel", S),
        _f("facet", S),  # what the value is counted by besides the subject: a rule, a side, a gap's kind, an
                         # application, a share's source
        _f("value", DBL, False),
        _f("messages", L),  # the messages behind a ratio (a share: the sender's messages to the queue)
        _f("detail", S),  # JSON: what a cause needs (the changes, the incidents, how an application opened)
    ], ["run_date"], ["run_date", "metric", "mq_cluster", "queue", "qmgr", "sending_qmgr", "channel", "facet"],
       "One row per day, metric and subject: the numbers the trends across days compare (docs/trends.md), "
       "computed from the day's staged tables and written by the same publish.",
       checks={"keys_not_null": "run_date IS NOT NULL AND metric IS NOT NULL",
               "value_not_negative": "value >= 0",
               "messages_not_negative": "messages IS NULL OR messages >= 0"}),
    # issue 44: every queue's depth rebuilt from the activity trace (clwl/analyses/depth.py; docs/depth.md)
    _t("gold", "queue_depth", [
        _f("run_date", D, False),
        _f("qmgr", S, False),
        _f("queue", S, False),  # a queue instance or a transmission queue
        _f("seq", L, False),  # the change's place in its queue's day, from 1
        _f("at", TS, False),  # the traced call's time (High Res Time)
        _f("depth", L, False),  # after the change
        _f("delta", I, False),  # +1 an arrival, -1 a removal
        _f("operation", S, False),  # put | get | agent_put | agent_get
        _f("msg_id", S),  # the message added or removed (null: traced without its MsgId)
        _f("application", S),  # the connection's ApplName, or the channel agent's channel
        _f("oldest_msg_id", S),  # the oldest message on the queue after the change (null: empty, or unknown id)
        _f("oldest_arrived_at", TS),  # when it arrived on this queue (null: before the day, or empty)
        _f("oldest_age_seconds", DBL),  # at this change (null: it arrived before the day, or the queue is empty)
        _f("oldest_put_by", S),  # the application whose traced MQPUT made it
        _f("basis", S),  # exact | fifo_assumed | start_depth; null when the queue is empty
    ], ["run_date"], ["run_date", "qmgr", "queue", "seq"],
       "One row per change of a queue's depth (not per second), rebuilt from the day's activity trace, with the "
       "oldest message after it; computed from bronze at detect time and written by the same publish.",
       checks={"keys_not_null": "run_date IS NOT NULL AND qmgr IS NOT NULL AND queue IS NOT NULL AND seq IS NOT NULL",
               "depth_not_negative": "depth >= 0",
               "delta_is_one_message": "delta = 1 OR delta = -1",
               "age_not_negative": "oldest_age_seconds IS NULL OR oldest_age_seconds >= 0"}),
    _t("gold", "run_summary", [
        _f("run_id", S),
        _f("run_date", D),
        _f("started_at", TS),
        _f("finished_at", TS),
        _f("rows_read", L),
        _f("rows_accepted", L),
        _f("rows_quarantined", L),
        _f("messages_replayed", L),
        _f("messages_stuck", L),
        _f("distribution_unexpected", L),
        _f("traced", L),  # messages with an observed destination (observed_qmgr)
        _f("agreed", L),  # of those, agrees = true
        _f("disagreed", L),  # agrees = false
        _f("timing_observed", L),  # routing_replay rows with timing_agrees not null (the trace saw them leave)
        _f("timing_agreed", L),  # timing_agrees = true
        _f("timing_disagreed", L),  # timing_agrees = false
        _f("table_versions", VERSIONS),
        _f("status", S),
        _f("validation_result", S),
        _f("warnings", S),
    ], ["run_date"], ["run_date"],
       "One row per published run date: the run, its input counts, the table versions it read and wrote.",
       checks={"keys_not_null": "run_date IS NOT NULL",
               # least() skips nulls (a column published before it existed is null): the smallest count given
               "counts_not_negative": "coalesce(least(rows_read, rows_accepted, rows_quarantined, "
                                      "messages_replayed, messages_stuck, distribution_unexpected, traced, agreed, "
                                      "disagreed, timing_observed, timing_agreed, timing_disagreed), 0) >= 0"},
       change_data_feed=True),
]


SPECS: dict[str, TableSpec] = {t.key: t for t in _ALL}

#: Columns whose values differ between two runs of the same input by design (the run's identity, its times and the
#: versions and code it ran with), by exact name: two lakes built from one landing are compared without them
#: (tests/lake_compare.py, bench/lake_digest.py). A result column (gold.stuck_messages.age_seconds) is never one.
VOLATILE_COLUMNS = frozenset({"ingest_run_id", "ingested_at", "code_version", "run_id", "started_at", "finished_at",
                              "table_versions"})
if tuple(SPECS) != TABLE_KEYS:  # the lake's map (clwl/lake/door.py) and the registry name the same tables
    raise RuntimeError(f"clwl/lake/registry.py registers {sorted(set(SPECS) ^ set(TABLE_KEYS))} differently from "
                       "clwl/lake/door.py")
if any(c.type not in TYPES for t in _ALL for c in t.fields):
    raise RuntimeError("clwl/lake/registry.py: a column of a type it does not know")
if any(n != n.lower() or not n.replace("_", "").isalnum() for t in _ALL for n, _ in t.checks):
    raise RuntimeError("clwl/lake/registry.py: a constraint name that is not lower case letters, digits and _ "
                       "(Delta keeps the names lower case)")


def spec(key: str) -> TableSpec:
    """The table ``key`` (``"silver.quarantine"``); KeyError naming the known ones."""
    try:
        return SPECS[key]
    except KeyError:
        raise KeyError(f"no table {key!r}; known: {', '.join(sorted(SPECS))}") from None


def columns_of(key: str, *names: str) -> tuple[str, ...]:
    """``names``, each checked to be a column of table ``key`` (KeyError otherwise); all its columns when none
    are named. How a reader spells the columns it reads: from the registry, never guessed."""
    t = spec(key)
    for n in names:
        t.index(n)
    return names or t.columns


def check_partitioning(t: TableSpec, location: str) -> None:
    """A lake made by an earlier version may partition a table differently; writing to it would fail deep
    inside Delta, so say so plainly (deltalake reads the table's metadata, through clwl.lake.door.snapshot)."""
    from clwl.lake.door import snapshot

    have = snapshot(location).partition_columns
    if have != t.partition_by:
        raise RuntimeError(f"{location}: this Delta table is partitioned by ({', '.join(have)}) but this version of "
                           f"clwl-analytics partitions {t.key} by ({', '.join(t.partition_by)}); move the table "
                           f"away (or delete it) and run `clwl ingest` again to rebuild it from the landing folder")
