"""Ingest: the landing folder's MQ exports -> bronze -> silver (Delta), nothing lost.

Landing layout (what a user drops; ``samples/landing`` is an example)::

    <landing>/<YYYY-MM-DD>/<QM>/<file>

``<YYYY-MM-DD>`` is the run date, ``<QM>`` the queue manager whose view the files hold (the observing queue
manager). A file's parser is chosen by its name (letter case ignored), then by its content:

=====================================================  ======================================================
``config_HHMMSS.mqsc|.txt|.json|.jsonl``               runmqsc output or MQ REST runCommandJSON (told apart by
``chstatus_HHMMSS.mqsc|.txt|.json|.jsonl``             content: ``clwl.engine.view.parse_capture_file``)
``puts*.csv|.jsonl|.json``                             put records (``clwl.parse.puts``)
``xmitq_HHMMSS.amqsbcg|.dmpmqmsg|.txt``                transmission queue browse (``clwl.parse.xmitq``)
``*.amqsmon``                                          amqsmon queue accounting / statistics, channel statistics
``*.amqsact|.amqsact.txt``                             application activity trace, amqsact output
                                                       (``clwl.parse.activity_trace``); a file whose content is
                                                       amqsact output is read as one whatever its name
=====================================================  ======================================================

An activity trace feeds ``bronze.activity_operations`` (every MQI call) and ``bronze.put_records`` (every traced
put, ``format = 'amqsact'``), so its messages reach ``silver.message_events`` (``source = 'activity_trace'``) by
the same rebuild as a put file's. The trace files of one run date and queue manager are parsed in one task, in
name order, each with the handles the previous one left open (``plan_tasks``), and read again together
(``plan_files``). Their local times are read in ``$CLWL_TRACE_TZ`` (default UTC; ``ingest(trace_tz=...)``).

``HHMMSS`` is the capture time (UTC) on the run date. Files whose name starts with ``.`` are ignored. Links
leaving the landing folder, folder links, pipes, and folders or files of the landing folder itself that are not
run date folders are skipped without being opened, printed and recorded (:func:`discover_landing`). A file
that matches none of these, whose capture time is not a valid ``HHMMSS``, that is not in a
``<date>/<QM>/`` folder, that a parser rejects as a whole (``InputError``), or whose banner / ``QMNAME`` names
another queue manager than its folder, becomes one ``silver.quarantine`` row (``level = 'file'``) with the
reason; the run goes on. Every record a parser cannot accept becomes one quarantine row (``level =
'record'``). Per file, records read = records accepted + records quarantined, checked in the parse task and
again in the driver (:class:`ReconciliationError`), and logged in ``silver.ingest_files``.

How a run works (:func:`ingest`):

1. discover the files of the run dates, hash their content (sha256) and compare with the run log
   (``silver.ingest_files``): a file whose content and reading code (``code_version``) are unchanged since it
   was last ingested is not read again (``force=True`` reads everything); a file that was ingested before and
   is gone from its date folder is removed from the tables;
2. parse the new or changed files in Spark tasks (``spark.range(0, n, 1, n).mapInArrow``: one Spark task per parse task, small files
   packed together up to :data:`TASK_BYTES` a task, at least one task per core), calling the ``clwl``
   parsers in the executors; each task writes the rows of every table it fed as a Parquet file to the run's
   scratch folder ``<lake>/_ingest/<run_id>/`` (Arrow columns, no per-row crossing into the JVM) and returns
   the files' summaries; the tables are then written side by side from those files, and the folder removed;
3. replace, in every table the files feed, the rows of exactly those files (Delta ``replaceWhere`` on
   ``run_date`` and ``source_file``): a corrected file replaces only its own rows, and ingesting the same dates
   again changes nothing (nothing is rewritten); the put rows (``bronze.put_records``, ``silver.message_events``)
   are not written from the files but in step 4;
4. rebuild ``silver.message_events`` of every (run date, sending queue manager) that a new, changed or removed
   put file has rows of (before or after the change), from all accepted put rows of that sender and date (the
   lake's, but those of the touched files, and this run's rows of those), with ``replaceWhere`` on those
   partitions (see *Message events* below); and, side by side, rebuild
   ``silver.config_history`` and ``silver.channel_status`` of every observing queue manager whose
   captures changed, from all of its bronze captures ordered by capture time: Spark groups bronze by
   ``observing_qmgr`` (``cogroup(...).applyInArrow``) and :func:`qmgr_history` replays each queue manager's
   captures; written with ``replaceWhere`` on ``observing_qmgr``. Out-of-order arrival gives the same history
   as in-order arrival;
5. append the run's per-file counts to ``silver.ingest_files`` (last: a run that dies before this is redone).

Message events (:func:`message_jobs`): ``bronze.put_records`` is every put record a parser accepted (bronze is
raw); ``silver.message_events`` -- what the replay routes -- takes each message once, on its own run date. Each
put row is stored once (``clwl.lake.put_records``): silver stores the rows it takes, with what bronze has of them, and
bronze's files only the rows held back, so a day without repeats writes its put rows once, to silver; every
reader reads ``bronze.put_records`` as the view of the two. The rebuild writes bronze (the rows held back now,
and still those held before), then silver, then bronze again when a row stopped being held back, so that every
row of a file the run did not touch is in the lake at each commit (a stopped run is redone from it). A lake of the
earlier layout, whose bronze stored every row, is migrated once by the next ingest (``put_layout``). A put
row is *held back* from silver, as one ``silver.quarantine`` row with ``level = 'message'`` (:data:`MESSAGE_LEVEL`)
whose ``raw`` is the record as a put CSV row, when:

* its put time (UTC) is not on its folder's run date. Such a row is not given to its own date: that date may
  have no folder, no captures or no run at all (the row would never be replayed, or be replayed without the
  replay of its own day being run again), and the run date's configuration must not route it either. The reason
  names both dates and the folder to file it in: ``put time 2026-11-21T00:00:03.000Z is not in run date
  2026-11-20 (file 2026-11-20/QM1/puts.csv line 5): not replayed, so that it is not routed with 2026-11-20's
  configuration; put the row in a put file of the 2026-11-21/QM1/ folder``. A put file that spans midnight is
  therefore split by its administrator: its rows of the next day (their ``raw`` under the CSV header) go to a
  file of the next day's folder, where they are replayed with that day's configuration (the copies in the first
  file stay quarantined). This matches the replay, which reads one run date's partition of
  ``silver.message_events`` (``spark.replay.sender_inputs``) and routes with the configuration timeline of that
  day (``spark.replay.day_bounds``);
* its msg_id was put before by the same sending queue manager on the same run date, in another put file (a
  re-sent or late file; repeats within one put file are found by its parser), or earlier in the same activity
  trace (an application that sets MsgId itself; the trace parser keeps every put). A sender's day whose rows are
  all in one put file is therefore not searched again (``SELF_CHECKED_FORMATS``). The copy kept is the one in
  the file ingested first (the earliest run-log row since the file last appeared in the landing folder), then,
  among files first ingested in the same run, the first by name, then the first by position; each later copy is held
  back with a reason naming both files and lines, and the columns it differs in, if any. So a file that was
  already ingested keeps its rows when another file repeats them. (A lake rebuilt from the landing folder sees
  every file first in one run, so it keeps the copy of the first file by name: the same messages are replayed,
  only the quarantined copies may be others'.)

Held-back rows count as quarantined records of their file in ``silver.ingest_files`` (records read = accepted +
quarantined still holds per file). The decision is remade whenever a put file of that sender and date is new,
changed or removed, also for files that did not change themselves (their run-log row of that run says so).

History semantics (both history tables): for one observing queue manager, the captures that cover a kind
(``bronze.capture_files``) are ordered by (capture time, file). In each, an object is present (its attribute
hash), absent (the capture asked for the whole kind with ``DISPLAY <kind>(*)`` and had no quarantined
record), or unknown (anything else: its state carries over). A version opens where the state changes
(``valid_from`` = that capture time) and is closed by the next change or absence (``valid_to``); an unchanged
capture changes nothing. A channel is followed from the first capture that shows it (a CHSTATUS record, or a
DISPLAY CLUSQMGR record naming it); a full, clean CHSTATUS capture without a current record of it says
``INACTIVE`` (an inactive channel has no CHSTATUS record: ``docs/algorithm.md``, *Channel state*). ``attrs_hash``
leaves out the attributes in :data:`VOLATILE_ATTRIBUTES` (queue depth and handle counts), so they make no
versions; the stored ``attrs`` are the opening capture's. CLUSQMGR's STATUS stays in the hash: it is the channel state
``clwl route`` falls back to when there is no CHSTATUS record.

The modules, one step or part each: ``landing`` (file names, discovery, the items skipped), ``run_log`` (the run
log: which files are read again; the run's summary), ``parse_step`` (step 2 in the driver: tasks planned and run)
and ``parse_tasks`` (one file parsed, in a task), ``scratch`` (where the tasks leave their rows), ``write_step``
(steps 3 and 4) with ``writes`` (Delta writes), ``message_events`` and ``history`` (the tables rebuilt in step 4),
``put_layout`` (the one migration of the put rows),
and ``run`` (:func:`ingest`, the steps in order).
"""

# What other code imports from spark.ingest (arrow_table and make_scratch are for tests).
from clwl.landing.discovery import EXPECTED_NAMES, LandingError, LandingFile, classify_name, discover_landing
from spark.ingest.history import build_histories, qmgr_history
from spark.ingest.message_events import MESSAGE_LEVEL
from spark.ingest.parse_step import TASK_BYTES, plan_tasks
from spark.ingest.parse_tasks import (
    VOLATILE_ATTRIBUTES,
    ReconciliationError,
    arrow_table,
    attrs_hash,
    covered_kinds,
    object_key,
    parse_landing_file,
)
from spark.ingest.run import ingest, ingest_pending
from spark.ingest.run_log import FileResult, IngestSummary, code_version
from spark.ingest.scratch import SCRATCH_STALE_SECONDS, make_scratch

__all__ = [
    "arrow_table",  # for the tests and tools that build rows as the parse tasks do
    "make_scratch",
    "EXPECTED_NAMES",
    "FileResult",
    "IngestSummary",
    "LandingError",
    "LandingFile",
    "MESSAGE_LEVEL",
    "ReconciliationError",
    "SCRATCH_STALE_SECONDS",
    "TASK_BYTES",
    "VOLATILE_ATTRIBUTES",
    "attrs_hash",
    "build_histories",
    "classify_name",
    "code_version",
    "covered_kinds",
    "discover_landing",
    "ingest",
    "ingest_pending",
    "object_key",
    "parse_landing_file",
    "plan_tasks",
    "qmgr_history",
]
