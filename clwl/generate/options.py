"""The options of ``clwl generate`` (one field per command-line option). A module of its own, imported by the
package without the generator, so the command line can build them without loading it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date


@dataclass
class GenerateOptions:
    out: str
    seed: int = 1
    qmgrs: int = 9
    clusters: int = 1
    queues: int = 4
    instances: int = 3
    senders: int = 2
    days: int = 2
    start_date: date = date(2026, 11, 19)
    messages_per_day: int = 20_000
    outages: float = 1.0
    suspends: float = 0.5
    weight_changes: float = 1.0
    priority_changes: float = 0.5
    put_disabled: float = 0.5
    bind_open_share: float = 0.03
    bind_group_share: float = 0.03
    named_qmgr_share: float = 0.01
    skew: int = 1
    skew_factor: float | None = None
    broken_records: int = 5
    rest_qmgrs: int = 1
    observed_every: int = 6
    browse_cap: int = 2000
    unresolved_outage: bool = True
    force: bool = False
    quiet: bool = False
    partitions: float = 0.0  # per day; 0 keeps the estates of earlier versions byte-identical
    puts_format: str = "csv"  # csv (puts.csv) | activity-trace (<QM>.<date>.amqsact, amqsact -v output)
    trace_disagreements: int | None = None  # traced puts whose Resolved_Q_mgr is not the simulation's; None: 3
    # with activity-trace, 0 with csv
    channel_trace: bool = False  # also the channel agents' trace: <QM>.<date>.channels.amqsact (or .amqsevt.jsonl)
    trace_format: str = "amqsact"  # amqsact (amqsact -v) | json (amqsevt -o json_compact): every trace written
    channel_stops: int | None = None  # injected channel stops between two status captures; None: 2 with
    # channel_trace, else 0
    channel_trace_ends: str = "sending"  # sending (the senders' agents' MQGETs) | both (and the receivers' MQPUTs)
    qsg: int = 0  # queue managers that are z/OS members of one queue-sharing group (intra-group queuing); 0: none,
    # and the estate is that of earlier versions, byte for byte
    qsg_cflevel: int = 3  # CFLEVEL of the structure that holds SYSTEM.QSG.TRANSMIT.QUEUE (1-5)
    qsg_maxmsgl: int | None = None  # MAXMSGL of SYSTEM.QSG.TRANSMIT.QUEUE; None: the structure's largest message
    qsg_igq_changes: float = 0.0  # per day: a sending member's IGQ switched (ENABLED <-> DISABLED) at a capture
    events: tuple[str, ...] = ()  # --event DAY:KIND[:ARGS] as given (clwl.generate.planned); none: the estate of
    # earlier versions
    trace_gets: bool = False  # also the consumers' MQGETs (<QM>.<date>.consumers.amqsact), the depth truth and
    # its QMinDepth/QMaxDepth per statistics interval (statistics.amqsmon); needs activity-trace puts and the channel
    # trace at both ends
