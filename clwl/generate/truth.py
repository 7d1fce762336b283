"""The ground truth, ``<out>/_generate.json``: the options, the assumptions, the estate, every event, the traffic
per sender, queue and destination, held and undelivered messages, accounting, skews, browses, broken records, planned events.
What the pipeline tests compare the pipeline with. A part of ``landing.Generator``."""

from __future__ import annotations

from dataclasses import asdict
from datetime import date

import clwl.generate.planned as P

GENERATOR_VERSION = 1


class TruthWriter:
    """The ground truth of ``landing.Generator``: a day's traffic after the day, the whole at the end."""

    # -- ground truth -----------------------------------------------------------------------------
    def day_truth(self, day: date) -> None:
        est = self.est
        for s in est.senders:
            sd = self.sd[s]
            dest: dict[str, dict[str, int]] = {}
            for (qi, k), n in sorted(sd.routed.items()):
                d = sd.router.dests[k]
                qd = dest.setdefault(est.queues[qi].name, {})
                qd[d.qmgr] = qd.get(d.qmgr, 0) + n
            kinds = dict(sd.kinds)
            kinds["notfixed"] = sd.msg_count - sum(sd.kinds.values())
            truth = {
                "day": day.isoformat(), "sender": s, "puts": sd.msg_count,
                "rows_in_puts_csv": 0 if self.trace else sd.msg_count + len(sd.broken_written),
                "by_queue_and_destination": {q: dict(sorted(v.items())) for q, v in sorted(dest.items())},
                "by_kind": dict(sorted(kinds.items())), "zero_token": sd.zero_tokens,
                "factor_resets": sd.router.resets,
            }
            if self.trace:
                truth["traced_puts"] = sd.msg_count
            if est.qsg is not None:  # the delivery paths (and only then, so that other estates are unchanged)
                local = sum(n for (_qi, k), n in sd.routed.items() if k == sd.router.local_key)
                truth["by_path"] = {"local": local, "cluster": sd.msg_count - local - sd.igq_msgs,
                                    "igq": sd.igq_msgs}
                truth["igq_too_large"] = sd.too_large
            self.truth_days.append(truth)

    def ground_truth(self, total: int) -> dict:
        est, o = self.est, self.o
        args = {k: (v.isoformat() if isinstance(v, date) else list(v) if isinstance(v, tuple) else v) for k, v in asdict(o).items()
                if k not in ("out", "force", "quiet") and not (k in ("partitions", "events") and not v)
                and k not in ("puts_format", "trace_disagreements", "channel_trace", "trace_format", "channel_stops",
                              "channel_trace_ends", "trace_gets")
                and not (k.startswith("qsg") and not o.qsg)}
        if self.trace:  # only then, so that a puts.csv estate's ground truth is that of earlier versions
            args["puts_format"] = o.puts_format
            args["trace_disagreements"] = self.n_disagreements
        expected: dict[str, dict[str, int]] = {}
        for d in self.truth_days:
            for q, dests in d["by_queue_and_destination"].items():
                for qm, n in dests.items():
                    e = expected.setdefault(qm, {})
                    e[q] = e.get(q, 0) + n
        written: dict[str, dict[str, int]] = {}
        for _day, recvs in self.accounting_truth.items():
            for recv, qs in recvs.items():
                for q, n in qs.items():
                    w = written.setdefault(recv, {})
                    w[q] = w.get(q, 0) + n
        truth = {
            "generator": "clwl generate", "version": GENERATOR_VERSION,
            "args": args,
            "assumptions": [
                "CLWL as docs/algorithm.md (default profile) with the readings of docs/cli-contract.md",
                "routing state per sending queue manager and channel, shared by all queues; zero at 05:00 each day",
                "DestSeqFactor += exactly 1000/CLWLWGHT (integers over a common denominator)",
                "ties: lowest DestSeqFactor, lowest DestSeqNumber, queue manager name, channel name",
                "DestSeqFactors reset when a known cluster receiver's CLWLWGHT/CLWLPRTY/CLWLRANK/NETPRTY changes; "
                "not on RETRYING -> RUNNING, suspend/resume or queue attribute changes",
                "every change happens 1 s before a capture of every sending queue manager; no puts from 2 s "
                "before to 1 s after any half-hour mark",
                "no change while a channel is RETRYING; a held message meets the same candidates at every "
                "re-allocation attempt, so it stays",
                "bind-on-open handles / logically ordered groups bound to an instance that becomes PUT(DISABLED) "
                "end (the application gets an error and closes)",
                "held messages are delivered 1 s before the capture that shows the channel RUNNING again and "
                "are counted in the accounting interval that ends there",
                "accounting: ACCTINT 1800 from 05:00; one record per connection (receiving channel agent per "
                "sending queue manager, or the local application) and interval with puts",
                "_generate.json is not an input: ingest should skip files whose name starts with '_'",
            ],
            "estate": {
                "clusters": est.clusters,
                "qmgrs": [{"name": q.name, "role": q.role, "clusters": list(q.clusters), "version": q.version,
                           "defclxq": q.defclxq, "manual_xmitqs": [list(x) for x in q.manual_xmitqs],
                           "channels": [c for c, _ in est.channels_of(q.name)],
                           "initial_clwlwght": est.initial_weight[q.name],
                           "config_format": "zos" if q.zos else "rest" if q.name in self.rest else "mqsc"}
                          for q in sorted(est.qmgrs.values(), key=lambda q: q.index)],
                "queues": [{"name": q.name, "cluster": q.cluster, "instances": list(q.hosts),
                            "clwluseq": {i.host: i.clwluseq for i in est.instances if i.queue == q.name
                                         and i.clwluseq != "QMGR"}} for q in est.queues],
                "senders": est.senders,
                "weight_denominator": est.weight_denominator(),
            },
            "events": [e.to_json() for e in est.events],
            "captures": {d.isoformat(): {f"{m // 60:02d}{m % 60:02d}00": qms for m, qms in caps.items()}
                         for d, caps in est.captures.items()},
            "totals": {"puts": total, "files": len(self.files) + 1,
                       "rows_in_puts_csv": sum(d["rows_in_puts_csv"] for d in self.truth_days)},
            "traffic": self.truth_days,
            "expected_by_receiver": {k: dict(sorted(v.items())) for k, v in sorted(expected.items())},
            "held": self.held_truth,
            "undelivered_by_receiver": {f"{qm}/{q}": n for (qm, q), n in sorted(self.undelivered.items())},
            "accounting_written_by_receiver": {k: dict(sorted(v.items())) for k, v in sorted(written.items())},
            "accounting_by_day": self.accounting_truth,
            "skews": self.skews,
            "browses": self.browses,
            "broken_records": sorted(self.broken, key=lambda b: (b["file"], b["line"])),
        }
        if getattr(o, "partitions", 0):
            truth["assumptions"].append(
                "partition: the channels from one sending queue manager to every host of one queue RETRYING "
                "together; step 12 rotates among them and the messages wait. At the capture where one comes back "
                "(the others' failed retry), eligible waiting messages are re-driven without advancing the "
                "rotation and move to it; zero-token (bound, named) ones stay until their channel runs again")
            truth["reallocated"] = self.reallocated
            truth["partition_waits"] = self.partition_waits
        planned = P.truth(est, est.events)
        if planned:  # only then, as partitions
            truth["planned_events"] = planned
            truth["assumptions"].append(
                "planned events (--event): scheduled first on their day; a lasting change (weight_change, "
                "put_disabled) is made at 05:59:59 and shown by the captures at 06:00, before the day's first put, "
                "and stays; an outage lasts its window of that day; bind_on_open: from that day the service "
                "application opens each queue with MQOO_BIND_ON_OPEN once and keeps the handle all day (the first "
                "put on the handle chooses, the others follow it, zero AccountingToken); no random event that day concerns the "
                "planned event's queue manager (receiver, instance host or sender)")
        if est.qsg is not None:
            truth["qsg"] = est.qsg.to_json(est.senders)
            truth["qsg"]["by_path"] = {p: sum(d["by_path"][p] for d in self.truth_days)
                                       for p in ("local", "cluster", "igq")}
            truth["qsg"]["igq_too_large"] = sum(d["igq_too_large"] for d in self.truth_days)
            truth["assumptions"] += [
                "qsg: the members are z/OS queue managers (platform MVS) in queue-sharing group "
                f"{est.qsg.name}; their captures are CSQUTIL COMMAND output (config_HHMMSS.txt: DISPLAY QMGR with "
                "QSGNAME and IGQ, DISPLAY GROUP, DISPLAY CFSTRUCT, the cluster objects, the local queues with the "
                "shared SYSTEM.QSG.TRANSMIT.QUEUE; chstatus_HHMMSS.txt); they write no amqsmon accounting (z/OS "
                "accounts in SMF)",
                "IGQ (IBM, Clustering with intra-group queuing): the destination is chosen as without it; the "
                "message goes over SYSTEM.QSG.TRANSMIT.QUEUE (observed_xmitq, no observed_channel) when the "
                "sending queue manager is a member with IGQ(ENABLED) at the put, the destination another member "
                "and its length at most qsg.igq_max_message: min(the structure's largest message, the shared "
                "queue's MAXMSGL) less the 428-byte MQXQH; otherwise the cluster path; the receiving member's "
                "IGQ does not matter; an IGQ change (igq_change events) takes effect from the capture that "
                "shows it",
                "IGQ messages never wait: not behind a retrying channel (outage), and partitions never involve a "
                "queue with an instance on a member; message lengths: qsg.SizeMix (most small, some just under "
                "or over the limit, the limit itself and one byte over, a few far over, none above 4 MB less "
                "the MQXQH)"]
        if self.application_senders():
            truth["puts_application_column"] = self.application_senders()
            truth["assumptions"].append(
                "the puts.csv of the senders in puts_application_column have the optional application column, "
                "the application the row's open handle (application:pid:handle) names; the others have not")
        if self.trace:
            truth["puts_format"] = "activity-trace"
            truth["totals"]["traced_puts"] = sum(d["traced_puts"] for d in self.truth_days)
            truth["assumptions"].append(
                "activity trace: per sending queue manager and day <QM>.<date>.amqsact, amqsact -v output of the "
                "simulation's puts; one connection per application (MQCONNX, an MQOPEN per handle before its first "
                "put, MQPUTs on two threads, MQCLOSE and MQDISC at the end of the day), ActivityCount 100 and "
                "ActivityInterval 60 s; svc and recon traced at MEDIUM, batch at HIGH (MQMD and MQPMO dumps: "
                "GroupId, AccountingToken; the last message of a group is not flagged MQMF_LAST_MSG_IN_GROUP); "
                "times UTC; Resolved_Q_mgr / Resolved_local_Q_name are the simulation's destination and "
                "transmission queue except for the puts in trace_disagreements")
            truth["trace_disagreements"] = self.trace_disagreements
        if self.trace_format != "amqsact":
            args["trace_format"] = self.trace_format
        if self.channel_trace:  # only then, as above
            args["channel_trace"] = True
            args["channel_stops"] = self.n_stops
            args["channel_trace_ends"] = self.trace_ends
            truth["channel_trace"] = {"format": self.trace_format, "files": sorted(self.channel_trace_files),
                                      "departures": self.channel_trace_counts[0],
                                      "arrivals": self.channel_trace_counts[1]}
            truth["channel_stops"] = self.channel_stops
            truth["assumptions"].append(
                "channel agents' trace: per queue manager and day <QM>.<date>.channels.amqsact (amqsevt.jsonl with "
                "trace_format json), its cluster-sender agents' MQGETs (transmission header: the application's "
                "MsgId, RemoteQMgr, RemoteQName) and, with channel_trace_ends both, its cluster-receiver agents' "
                "MQPUTs, at MEDIUM, in batches under "
                "syncpoint (MQCMIT after 50 messages or an empty queue); a message leaves 2 ms after its put over a "
                "running channel, 1 s before the capture that shows its channel back after an outage or partition, "
                "and at the restart of an injected stop (channel_stops); it arrives 3 ms after it leaves")
            truth["assumptions"].append(
                "channel_stops: a cluster-sender channel stopped and restarted between two status captures of its "
                "sending queue manager, which both show it RUNNING; the routing is what the captures decide (as "
                "without the stop), the messages put to it in the window wait and leave at the restart")
        if getattr(self, "trace_gets", False):  # only then, as above
            args["trace_gets"] = True
            truth["consumers"] = self.consumer_truth
            truth["depth"] = self.depth_truth
            truth["assumptions"].append(
                "trace_gets: every message that reaches a destination queue instance is got by that instance's "
                "consumer (<QM>.<date>.consumers.amqsact, MEDIUM, MQGET under syncpoint with its MsgId and MQCMIT), "
                "oldest first, 2-40 ms after it arrives; some consumers pause once a day inside a half-hour slot; about "
                "one get in 97 is backed out (MQBACK) and got again at once; depth: per day and QM/QUEUE every change "
                "[High Res Time us, depth after, MsgId], committed units only, from the day's start depth; "
                "statistics.amqsmon per queue manager: QueueStatistics every 30 minutes from midnight with each "
                "queue's QMinDepth/QMaxDepth over [start, end) of that truth (queues that changed or held messages)")
        return truth
