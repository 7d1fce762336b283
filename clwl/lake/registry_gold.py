"""The gold tables of the lake: what the replay and the detectors stage, the quality gate validates and the publish
writes. clwl/lake/registry.py holds bronze and silver, the lookups and the checks of the whole registry; it lists
these after silver. Importing it loads nothing beyond the standard library.
"""

from __future__ import annotations

from clwl.lake.table_spec import DBL, TS, VERSIONS, B, D, I, L, S, TableSpec
from clwl.lake.table_spec import column as _f
from clwl.lake.table_spec import table as _t

# A message that waited left its transmission queue no earlier than it began waiting there (gold's CHECKs).
_RELEASE_NOT_BEFORE_HOLD = "released_at IS NULL OR held_from IS NULL OR released_at >= held_from"


#: The gold tables, in the lake's order (clwl/lake/door.py's map).
GOLD_SPECS: list[TableSpec] = [
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
