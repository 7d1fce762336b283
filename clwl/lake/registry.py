"""The one table registry, pure Python: every Delta table of the lake (bronze, silver and gold), its columns
(name, type, nullability, in order), partitioning, keys and Delta statistics columns.

Which tables exist and where they live is clwl/lake/door.py's (the map of the lake); this module says what they hold.
The Spark side builds its schemas from it (spark/tables.py: one ``StructType`` per table, nothing spelled
twice), and every reader that runs without Spark takes its column names and positions from here: ``clwl check``
(no pyspark at all), the report, ``clwl explain``. Importing it loads nothing beyond the standard library.

Bronze and silver are spelled here, gold in clwl/lake/registry_gold.py; what a table spec is (its columns,
types and properties) is clwl/lake/table_spec.py's. :data:`SPECS` holds them all, in the lake's order.

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

from clwl.lake.door import TABLE_KEYS
from clwl.lake.registry_gold import GOLD_SPECS
from clwl.lake.table_spec import ATTRS, NAMES, NTZ, TS, TYPES, B, Column, D, I, L, S, TableSpec
from clwl.lake.table_spec import column as _f
from clwl.lake.table_spec import table as _t

__all__ = ["SPECS", "TYPES", "Column", "TableSpec", "check_partitioning", "columns_of", "constraints_in",
           "same_expression", "spec"]


def constraints_in(configuration: dict[str, str] | None) -> dict[str, str]:
    """The CHECK constraints a Delta table has, name -> expression, from its properties (its metadata's
    configuration: ``delta.constraints.<name>``)."""
    prefix = "delta.constraints."
    return {k[len(prefix):]: v for k, v in (configuration or {}).items() if k.startswith(prefix)}


def same_expression(a: str, b: str) -> bool:
    """Whether two texts of a constraint are the same expression: Spark keeps the text of ALTER TABLE ADD
    CONSTRAINT re-spaced (``p_value IS NULL OR ( p_value >= 0 AND p_value <= 1 )``), so spaces do not count."""
    return "".join(a.split()) == "".join(b.split())


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
    _f("q_min_depth", L),  # QueueStatistics' QMinDepth (null for accounting, or not printed)
    _f("q_max_depth", L),  # QueueStatistics' QMaxDepth
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
    *GOLD_SPECS,  # clwl/lake/registry_gold.py
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
