#!/usr/bin/env python3
"""Write the bundled sample estate: ``samples/landing/**``, ``samples/captures/**`` and ``samples/facts.json``.

Standard library and this repository only, deterministic: running it again reproduces every file byte for byte.

    python samples/make_samples.py           # (re)write the estate
    python samples/make_samples.py --check   # exit 1 if what is on disk differs from what would be written

How it works: the estate (queue managers, channels, cluster queues, the events of the two days) is
declared below; the applications' puts are generated from seeded random streams; every put is routed by a
small, self-contained replay of the CLWL algorithm (the default profile as ``docs/cli-contract.md`` reads
it), messages behind a channel that cannot connect wait and are re-allocated at its failed retries (002), so
that the transmission queue browses, channel status, ``observed_*`` columns and the receiving
queue managers' accounting all agree with one another. Then each artefact is printed by the renderer that
``clwl generate`` uses too (``clwl/generate/render.py``: runmqsc, MQ REST runCommandJSON, amqsbcg, dmpmqmsg,
amqsmon, puts.csv); this script holds only the sample's scenario and what it decides the queue managers show.
``samples/README.md`` tells the story; ``samples/facts.json`` holds the generator's own ground truth.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import sys
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # run as a script from anywhere: the renderer is the repository's own

import clwl.generate.render as R  # noqa: E402
import clwl.generate.render_messages as RM  # noqa: E402
import clwl.generate.render_puts as RP  # noqa: E402
from clwl.generate.estate import ACCTINT, DISCINT, LONGTMR, SHORTRTY, SHORTTMR, App, QMgr, iso  # noqa: E402
from clwl.generate.render import Cmd, Rec, mq_date  # noqa: E402

CLUSTER = "CL1"
DAYS = ["2026-11-19", "2026-11-20"]


def T(s: str) -> datetime:
    """A UTC instant, written 'YYYY-MM-DD HH:MM:SS[.fff]'."""
    fmt = "%Y-%m-%d %H:%M:%S.%f" if "." in s else "%Y-%m-%d %H:%M:%S"
    return datetime.strptime(s, fmt)


# --------------------------------------------------------------------------------------------------
# The estate
# --------------------------------------------------------------------------------------------------

FULL_REPOS = ["FR1", "FR2"]
SENDERS = ["QM1", "QM5"]  # queue managers whose applications' puts are recorded (puts.csv)
REST_QM = "QM2"  # the one queue manager whose configuration is captured as MQ REST JSON


def _qmgr(index: int, name: str, host: str, ip: str, created: str, version: str, defclxq: str,
          descr: str) -> QMgr:
    """host: the CLUSRCVR CONNAME host part; version: VRMF as DISPLAY QMGR VERSION shows it."""
    role = "repos" if name in FULL_REPOS else "sender" if name in SENDERS else "backend"
    return QMgr(name, role, index, (CLUSTER,), version, defclxq, host, ip, T(created), descr)


QMS: dict[str, QMgr] = {
    q.name: q
    for q in [
        _qmgr(0, "FR1", "fr1.mq.example.com", "10.40.1.11", "2024-02-12 09:14:02", "09040200", "SCTQ",
              "Full repository 1 for cluster CL1"),
        _qmgr(1, "FR2", "fr2.mq.example.com", "10.40.1.12", "2024-02-12 09:31:47", "09040200", "CHANNEL",
              "Full repository 2 for cluster CL1"),
        _qmgr(2, "QM1", "qm1.mq.example.com", "10.40.1.21", "2024-03-04 14:02:11", "09040200", "SCTQ",
              "Order intake front end - partial repository in CL1 (site A)"),
        _qmgr(3, "QM2", "qm2.mq.example.com", "10.40.1.22", "2024-03-04 14:20:36", "09040200", "SCTQ",
              "Order and billing back end 2"),
        _qmgr(4, "QM3", "10.40.1.23", "10.40.1.23", "2024-03-05 10:11:59", "09030000", "SCTQ",
              "Order, billing and audit back end 3"),
        _qmgr(5, "QM4", "qm4.mq.example.com", "10.40.1.24", "2021-06-17 08:45:20", "09000000", "SCTQ",
              "Order and billing back end 4 (MQ 9.0)"),
        _qmgr(6, "QM5", "qm5.mq.example.com", "10.40.1.25", "2025-01-20 16:05:33", "09040200", "SCTQ",
              "Billing front end"),
    ]
}
ALL_QMS = sorted(QMS)


# Which queue managers each one knows (DISPLAY CLUSQMGR): a full repository knows everybody, a partial
# repository the full repositories, itself and what it has used.
KNOWS_QM = {
    "FR1": ALL_QMS,
    "FR2": ALL_QMS,
    "QM1": ["FR1", "FR2", "QM1", "QM2", "QM3", "QM4"],
    "QM2": ["FR1", "FR2", "QM2"],
    "QM3": ["FR1", "FR2", "QM3"],
    "QM4": ["FR1", "FR2", "QM4"],
    "QM5": ["FR1", "FR2", "QM2", "QM3", "QM4", "QM5"],
}

# Cluster queue instances: (queue, hosting QM, CLUSQT)
INSTANCES = [
    ("APP.AUDIT", "QM3", "QLOCAL"),
    ("APP.BILLING", "QM2", "QLOCAL"),
    ("APP.BILLING", "QM3", "QLOCAL"),
    ("APP.BILLING", "QM4", "QLOCAL"),
    ("APP.ORDERS", "QM1", "QLOCAL"),
    ("APP.ORDERS", "QM2", "QLOCAL"),
    ("APP.ORDERS", "QM3", "QLOCAL"),
    ("APP.ORDERS", "QM4", "QLOCAL"),
    ("BILLING.GW", "QM2", "QMGR"),  # clustered queue manager alias: QREMOTE(BILLING.GW) RNAME( ) RQMNAME(QM2)
]
QM_ALIASES = {"BILLING.GW": "QM2"}
QUEUE_DESCR = {
    "APP.ORDERS": "Order intake - clustered in CL1, consumed by order-svc on every host",
    "APP.BILLING": "Billing events (CL1)",
    "APP.AUDIT": "Audit trail (CL1, single instance)",
    "BILLING.GW": "QM alias for billing gateway",
}
QUEUE_CREATED = {
    ("APP.ORDERS", "QM1"): T("2024-04-02 09:30:00"),
    ("APP.ORDERS", "QM2"): T("2024-04-02 09:31:10"),
    ("APP.ORDERS", "QM3"): T("2024-04-02 09:32:05"),
    ("APP.ORDERS", "QM4"): T("2024-04-02 09:33:40"),
    ("APP.BILLING", "QM2"): T("2025-02-03 10:00:00"),
    ("APP.BILLING", "QM3"): T("2025-02-03 10:01:12"),
    ("APP.BILLING", "QM4"): T("2025-02-03 10:02:31"),
    ("APP.AUDIT", "QM3"): T("2024-09-16 15:44:09"),
    ("BILLING.GW", "QM2"): T("2025-02-03 10:20:00"),
}
KNOWS_Q = {
    "FR1": {q for q, _, _ in INSTANCES},
    "FR2": {q for q, _, _ in INSTANCES},
    "QM1": {"APP.ORDERS", "APP.AUDIT"},
    "QM5": {"APP.BILLING", "BILLING.GW"},
}

# Manually defined cluster transmission queues: (QM, queue, CLCHNAME)
CLCHNAME_QUEUES = [
    ("QM5", "CLUS.XMITQ.QM", "TO.QM*"),
    ("QM5", "CLUS.XMITQ.QM2", "TO.QM2"),
]

# ---- events (UTC) --------------------------------------------------------------------------------
QM4_SUSPENDED = (T("2026-11-19 05:30:00"), T("2026-11-19 20:30:00"))  # SUSPEND QMGR(CL1) ... RESUME
QM2_WEIGHT_CHANGE = T("2026-11-19 11:55:00")  # ALTER CHANNEL(TO.QM2) CHLTYPE(CLUSRCVR) CLWLWGHT(80)
QM3_CRASH = T("2026-11-20 13:52:00")  # host of QM3 fails; cluster senders to QM3 go RETRYING
QM3_RESTART = T("2026-11-20 16:35:12")  # strmqm QM3
TOQM3_BACK = T("2026-11-20 16:52:00")  # next long retry of the senders succeeds (LONGTMR 600)
QM4_ORDERS_DISABLED = T("2026-11-20 17:55:00")  # ALTER QLOCAL(APP.ORDERS) PUT(DISABLED) on QM4
BROWSE_AT = T("2026-11-20 15:30:00")  # transmission queue browses on QM1 (amqsbcg) and QM5 (dmpmqmsg)
# A firewall change between QM5's site and the back ends' network resets QM5's cluster-sender connections to
# QM2, QM3 and QM4 at 09:52 (each channel notices a few seconds apart). The rule for one back end is put right
# first: its next long retry at 10:52 succeeds while the other two still fail (their retries re-allocate the
# eligible messages waiting for them to it); the other two come back at their 11:52 retries.
NET_DOWN = T("2026-11-20 09:52:00")
NET_FIRST_BACK = "QM2"  # the back end whose path is restored first


@dataclass(frozen=True)
class Outage:
    """A cluster-sender channel that cannot connect: RETRYING from down (the first failed attempt) until back
    (the retry that succeeds). sender None: every sending queue manager's channel to dest."""

    sender: str | None
    dest: str
    down: datetime
    back: datetime

    def applies(self, sender: str, dest: str) -> bool:
        return self.dest == dest and self.sender in (None, sender)

    def retry_times(self) -> list[datetime]:
        """The failed connection attempts (the first failure, SHORTRTY short retries, then long retries until
        back); each one re-drives the re-allocation of the messages waiting for the channel."""
        return [t for t in R.retry_times(self.down, self.back) if t < self.back]


def _net_outage(dest: str, i: int) -> Outage:
    down = NET_DOWN + timedelta(seconds=4 + 7 * i)
    long_retries = 5 if dest == NET_FIRST_BACK else 11  # 10:52 / 11:52 (+ the channel's offset)
    return Outage("QM5", dest, down, down + timedelta(seconds=SHORTTMR * SHORTRTY + LONGTMR * long_retries))


NET_OUTAGES = [_net_outage(d, i) for i, d in enumerate(["QM2", "QM3", "QM4"])]
OUTAGES = [Outage(None, "QM3", QM3_CRASH, TOQM3_BACK)] + NET_OUTAGES
for _o in OUTAGES:
    assert _o.back == _o.retry_times()[-1] + timedelta(seconds=LONGTMR), _o  # back on the retry schedule
ADMIN_EVENTS = {  # changes a back end publishes to the full repositories (its channels to them start)
    "QM2": [QM2_WEIGHT_CHANGE],
    "QM3": [QM3_RESTART],
    "QM4": [QM4_SUSPENDED[0], QM4_SUSPENDED[1], QM4_ORDERS_DISABLED],
}


def clwlwght(qm: str, t: datetime) -> int:
    return 80 if qm == "QM2" and t >= QM2_WEIGHT_CHANGE else 50


def clusrcvr_altered(qm: str, t: datetime) -> datetime:
    if qm == "QM2" and t >= QM2_WEIGHT_CHANGE:
        return QM2_WEIGHT_CHANGE
    return QMS[qm].created + timedelta(minutes=12, seconds=7)


def suspended(qm: str, t: datetime) -> bool:
    return qm == "QM4" and QM4_SUSPENDED[0] <= t < QM4_SUSPENDED[1]


def cluster_info_time(qm: str, t: datetime) -> datetime:
    """When the repository last learnt something about qm's CLUSRCVR (CLUSDATE/CLUSTIME)."""
    times = [clusrcvr_altered(qm, t)]
    if qm == "QM4":
        times += [e for e in QM4_SUSPENDED if e <= t]
    return max(times)


def republished(qm: str) -> datetime:
    """A queue manager republishes its cluster objects every 27 days; the last time before the samples."""
    return T("2026-10-29 02:00:00") + timedelta(minutes=37 * ALL_QMS.index(qm) + 7 * len(qm))


def put_enabled(queue: str, host: str, t: datetime) -> bool:
    return not (queue == "APP.ORDERS" and host == "QM4" and t >= QM4_ORDERS_DISABLED)


def put_altered(queue: str, host: str, t: datetime) -> datetime:
    if queue == "APP.ORDERS" and host == "QM4" and t >= QM4_ORDERS_DISABLED:
        return QM4_ORDERS_DISABLED
    return QUEUE_CREATED[(queue, host)] + timedelta(seconds=41)


def outage(sender: str, to_qm: str, t: datetime) -> Outage | None:
    """The outage of sender's cluster-sender channel to to_qm in force at t (None: the channel can connect)."""
    if sender not in SENDERS:
        return None
    return next((o for o in OUTAGES if o.applies(sender, to_qm) and o.down <= t < o.back), None)


def retrying(sender: str, to_qm: str, t: datetime) -> bool:
    return outage(sender, to_qm, t) is not None


def clwluseq(qm: str, queue: str) -> str:
    """The effective use-queue setting of a local instance."""
    if qm == "QM1" and queue == "APP.ORDERS":
        return "ANY"
    return "LOCAL"  # queue CLWLUSEQ(QMGR) and QMGR CLWLUSEQ(LOCAL)


def xmitq_for(qm: str, channel: str) -> str:
    exact = [q for m, q, pat in CLCHNAME_QUEUES if m == qm and pat == channel]
    if exact:
        return sorted(exact)[0]
    generic = []
    for m, q, pat in CLCHNAME_QUEUES:
        if m == qm and "*" in pat and re.fullmatch(".*".join(re.escape(p) for p in pat.split("*")), channel):
            generic.append((-len(pat.replace("*", "")), q))
    if generic:
        return sorted(generic)[0][1]
    if QMS[qm].defclxq == "CHANNEL":
        return f"SYSTEM.CLUSTER.TRANSMIT.{channel}"
    return "SYSTEM.CLUSTER.TRANSMIT.QUEUE"


# --------------------------------------------------------------------------------------------------
# Applications and their puts
# --------------------------------------------------------------------------------------------------


APPS = {
    a.name: a
    for a in [
        App("orders-api", "ordsvc", "1001", 28),
        App("orders-batch", "ordbat", "1002", 6),
        App("orders-recon", "recon", "1003", 6),
        App("billing-svc", "billsvc", "1101", 28),
        App("billing-batch", "billbat", "1102", 6),
        App("billing-gwfeed", "billgw", "1103", 6),
        App("billing-recon", "recon", "1003", 6),
    ]
}
ZERO_TOKEN = b"\0" * 32


@dataclass
class Put:
    t: datetime
    sender: str
    queue: str
    target: str  # "" = not named by the application
    bind: str  # notfixed | open | group
    handle: str
    app: str
    length: int
    persistent: bool
    group_id: bytes = b""
    logical: bool = False
    group_seq: int = 0
    group_last: bool = False
    tag: str = ""  # scripted role, for the generator's own checks
    msg_id: bytes = b""
    # routing result
    dest: str = ""
    channel: str = ""
    xmitq: str = ""
    decided_at: datetime | None = None
    stuck: bool = False  # waited behind a channel that could not connect and stayed there until it came back
    sent: datetime | None = None
    arrive: datetime | None = None
    # waits on a transmission queue: (from, until, destination, channel, xmitq)
    holds: list[tuple[datetime, datetime, str, str, str]] = field(default_factory=list)
    # re-allocations: (when, from destination, to destination)
    reallocs: list[tuple[datetime, str, str]] = field(default_factory=list)
    first_dest: str = ""  # the destination chosen at put time

    @property
    def zero(self) -> bool:
        """Its AccountingToken is zero: bound on open, bound in a logically ordered group, or named its target
        queue manager (not re-allocatable)."""
        return self.bind == "open" or (self.bind == "group" and self.logical) or bool(self.target)

    @property
    def token(self) -> bytes:
        return ZERO_TOKEN if self.zero else APPS[self.app].token

    @property
    def local(self) -> bool:
        return self.dest == self.sender


class Ids:
    """MQ-style 24-byte ids: 'AMQ ' + queue manager name (12) + 8 unique bytes (kept below 0x80)."""

    def __init__(self, qm: str, kind: int):
        self.prefix = b"AMQ " + QMS[qm].name.ljust(12).encode()
        self.kind = kind
        self.n = 0

    def next(self, day_index: int) -> bytes:
        self.n += 1
        stamp = bytes([0x5A, 0x45 + day_index, 0x39 + self.kind, 0x6A])
        c = self.n
        return self.prefix + stamp + bytes([(c >> 21) & 0x7F, (c >> 14) & 0x7F, (c >> 7) & 0x7F, c & 0x7F])


def ms(t: datetime) -> datetime:
    return t.replace(microsecond=(t.microsecond // 1000) * 1000)


def windows(day: str):
    """Business traffic comes in bursts from HH:05 to HH:50, 07:05-19:50 (quiet around captures)."""
    for h in range(7, 20):
        yield h, T(f"{day} {h:02d}:05:00"), T(f"{day} {h:02d}:50:00")


def gen_qm1(day: str, straddle_open: datetime | None, straddle_group: datetime | None) -> list[Put]:
    rng = random.Random(f"QM1/{day}")
    di = DAYS.index(day)
    pid = {a: rng.randint(2000, 30000) for a in ("orders-api", "orders-batch", "orders-recon")}
    hseq = {a: 0 for a in pid}

    def handle(app: str) -> str:
        hseq[app] += 1
        return f"{app}:{pid[app]}:{hseq[app]}"

    api_h, audit_h, recon_h = handle("orders-api"), handle("orders-api"), handle("orders-recon")
    gids = Ids("QM1", 1)
    puts: list[Put] = []
    for h, w0, w1 in windows(day):
        n = rng.randint(14, 20)
        for s in sorted(rng.uniform(0, (w1 - w0).total_seconds()) for _ in range(n)):
            t = ms(w0 + timedelta(seconds=s))
            puts.append(Put(t, "QM1", "APP.ORDERS", "", "notfixed", api_h, "orders-api",
                            rng.randint(220, 640), rng.random() < 0.9))
            if rng.random() < 0.08:
                puts.append(Put(ms(t + timedelta(seconds=rng.uniform(0.05, 0.4))), "QM1", "APP.AUDIT", "",
                                "notfixed", audit_h, "orders-api", rng.randint(150, 240), True))
        if 9 <= h <= 17:  # reconciliation job names QM3 explicitly
            for mm in (40,):
                t = ms(T(f"{day} {h:02d}:{mm:02d}:00") + timedelta(seconds=rng.uniform(0, 20)))
                puts.append(Put(t, "QM1", "APP.ORDERS", "QM3", "notfixed", recon_h, "orders-recon",
                                rng.randint(110, 140), False, tag="named"))
        sessions = [9, 16] + ([13] if day == "2026-11-19" else [])
        if h in sessions:  # bind-on-open batch sessions
            hh = handle("orders-batch")
            t = T(f"{day} {h:02d}:20:00") + timedelta(seconds=rng.uniform(0, 60))
            for _ in range(rng.randint(8, 12)):
                puts.append(Put(ms(t), "QM1", "APP.ORDERS", "", "open", hh, "orders-batch",
                                rng.randint(200, 400), True))
                t += timedelta(seconds=rng.uniform(6, 15))
        if h in (8, 11, 15, 18):  # multi-part orders: bind-on-group, logical order
            hh = handle("orders-batch")
            t = T(f"{day} {h:02d}:35:00") + timedelta(seconds=rng.uniform(0, 60))
            for _ in range(2):
                gid, k = gids.next(di), rng.randint(3, 5)
                for i in range(k):
                    puts.append(Put(ms(t), "QM1", "APP.ORDERS", "", "group", hh, "orders-batch",
                                    rng.randint(200, 400), True, gid, True, i + 1, i == k - 1))
                    t += timedelta(seconds=rng.uniform(1, 3))
                t += timedelta(seconds=rng.uniform(20, 90))
        if day == "2026-11-19" and h == 10:  # one group put WITHOUT logical order (not managed by MQ)
            hh, gid = handle("orders-batch"), gids.next(di)
            t = T(f"{day} 10:20:00") + timedelta(seconds=rng.uniform(0, 30))
            for i in range(3):
                puts.append(Put(ms(t), "QM1", "APP.ORDERS", "", "group", hh, "orders-batch",
                                rng.randint(200, 400), True, gid, False, i + 1, i == 2, tag="group-unmanaged"))
                t += timedelta(seconds=rng.uniform(1, 3))
    if straddle_open:
        # a long bind-on-open session that opens before QM3 fails and keeps putting after
        hh = handle("orders-batch")
        t = straddle_open
        while t < T(f"{day} 14:45:00"):
            puts.append(Put(ms(t), "QM1", "APP.ORDERS", "", "open", hh, "orders-batch",
                            rng.randint(200, 400), True, tag="straddle-open"))
            t += timedelta(seconds=240)
    if straddle_group:
        # an eight-part order group that starts before the failure; parts 6-8 come after it
        hh, gid = handle("orders-batch"), gids.next(di)
        step = max(75, int((T(f"{day} 13:53:00") - straddle_group).total_seconds() // 5))
        t = straddle_group
        for i in range(8):
            puts.append(Put(ms(t), "QM1", "APP.ORDERS", "", "group", hh, "orders-batch",
                            rng.randint(200, 400), True, gid, True, i + 1, i == 7, tag="straddle-group"))
            t += timedelta(seconds=step)
    return puts


def gen_qm5(day: str, straddle_open: datetime | None) -> list[Put]:
    rng = random.Random(f"QM5/{day}")
    pid = {a: rng.randint(2000, 30000) for a in ("billing-svc", "billing-batch", "billing-gwfeed",
                                                 "billing-recon")}
    hseq = {a: 0 for a in pid}

    def handle(app: str) -> str:
        hseq[app] += 1
        return f"{app}:{pid[app]}:{hseq[app]}"

    svc_h, gw_h, recon_h = handle("billing-svc"), handle("billing-gwfeed"), handle("billing-recon")
    puts: list[Put] = []
    for h, w0, w1 in windows(day):
        n = rng.randint(10, 15)
        for s in sorted(rng.uniform(0, (w1 - w0).total_seconds()) for _ in range(n)):
            puts.append(Put(ms(w0 + timedelta(seconds=s)), "QM5", "APP.BILLING", "", "notfixed", svc_h,
                            "billing-svc", rng.randint(300, 700), True))
        if 8 <= h <= 18:  # gateway feed names the queue manager alias BILLING.GW
            t = ms(T(f"{day} {h:02d}:15:00") + timedelta(seconds=rng.uniform(0, 30)))
            puts.append(Put(t, "QM5", "APP.BILLING", "BILLING.GW", "notfixed", gw_h, "billing-gwfeed",
                            rng.randint(380, 420), True, tag="named-alias"))
        sessions = [10, 17] + ([14] if day == "2026-11-19" else [])
        if h in sessions:
            hh = handle("billing-batch")
            t = T(f"{day} {h:02d}:20:00") + timedelta(seconds=rng.uniform(0, 60))
            for _ in range(rng.randint(6, 9)):
                puts.append(Put(ms(t), "QM5", "APP.BILLING", "", "open", hh, "billing-batch",
                                rng.randint(250, 450), True))
                t += timedelta(seconds=rng.uniform(8, 20))
        for hm in ("10:30", "14:30", "15:10"):  # billing reconciliation names QM3
            if f"{h:02d}" == hm[:2]:
                t = ms(T(f"{day} {hm}:00") + timedelta(seconds=rng.uniform(0, 20)))
                puts.append(Put(t, "QM5", "APP.BILLING", "QM3", "notfixed", recon_h, "billing-recon",
                                rng.randint(140, 160), False, tag="named"))
    if straddle_open:
        hh = handle("billing-batch")
        t = straddle_open
        while t < T(f"{day} 14:55:00"):
            puts.append(Put(ms(t), "QM5", "APP.BILLING", "", "open", hh, "billing-batch",
                            rng.randint(250, 450), True, tag="straddle-open"))
            t += timedelta(seconds=300)
    return puts


# --------------------------------------------------------------------------------------------------
# The CLWL replay used to route the generated puts (default profile, docs/algorithm.md readings)
# --------------------------------------------------------------------------------------------------


class Router:
    """Routing state of one sending queue manager: DestSeqFactor / DestSeqNumber per destination."""

    def __init__(self, sender: str):
        self.sender = sender
        self.factor: dict[str, float] = {}
        self.seqno: dict[str, int] = {}
        self.counter = 0
        self.weights_seen: dict[str, int] = {}

    def _check_reset(self, t: datetime) -> None:
        # factors of all destinations reset when the CLUSRCVR workload attributes of one change
        now = {q: clwlwght(q, t) for q in KNOWS_QM[self.sender]}
        if self.weights_seen and now != self.weights_seen:
            self.factor = {k: 0.0 for k in self.factor}
        self.weights_seen = now

    def peek(self, queue: str, target: str, t: datetime) -> str:
        """The choice route() would make now, without changing the state."""
        saved = (dict(self.factor), dict(self.seqno), self.counter, dict(self.weights_seen))
        try:
            return self.route(queue, target, t)
        finally:
            self.factor, self.seqno, self.counter, self.weights_seen = saved

    def route(self, queue: str, target: str, t: datetime) -> str:
        self._check_reset(t)
        if target:
            dest = QM_ALIASES.get(target, target)
            cands = [dest]
        else:
            hosts = [h for q, h, _ in INSTANCES if q == queue and h in KNOWS_QM[self.sender]]
            hosts = [h for h in hosts if put_enabled(queue, h, t)]  # step 1
            if not hosts:
                raise RuntimeError(f"no put-enabled instance of {queue} at {t}")
            if self.sender in hosts and clwluseq(self.sender, queue) == "LOCAL":  # step 3
                return self._take(self.sender, t)
            if self.sender not in hosts:  # step 5
                resumed = [h for h in hosts if not suspended(h, t)]
                hosts = resumed or hosts
            remote = [h for h in hosts if h != self.sender]  # steps 6-9: channel-state tiers
            if remote:
                best = min(2 if retrying(self.sender, h, t) else 0 for h in remote)
                remote = [h for h in remote if (2 if retrying(self.sender, h, t) else 0) == best]
            cands = ([self.sender] if self.sender in hosts else []) + remote
        # step 12: lowest DestSeqFactor, then lowest DestSeqNumber, then QM name, then channel name
        best = min(cands, key=lambda q: (self.factor.get(q, 0.0), self.seqno.get(q, 0), q,
                                         "" if q == self.sender else f"TO.{q}"))
        return self._take(best, t)

    def _take(self, q: str, t: datetime) -> str:
        self.counter += 1
        self.factor[q] = self.factor.get(q, 0.0) + 1000.0 / clwlwght(q, t)
        self.seqno[q] = self.counter
        return q


def route_day(puts: list[Put], probe: tuple | None = None) -> list[datetime]:
    """Route one sending QM's puts of one day (state starts at zero: the QMs restart at 05:00).

    probe (queue, want, after, before): return the instants in [after, before), one second after a put, at
    which a new choice for queue would pick `want` (used to place the scripted sessions of 2026-11-20).
    """
    found: list[datetime] = []
    if not puts:
        return found
    sender, day = puts[0].sender, mq_date(puts[0].t)
    r = Router(sender)
    bound: dict[tuple[str, str], str] = {}
    waiting: dict[str, list[Put]] = {}  # destination -> messages on the transmission queue for its channel
    # The channel events of the day: each failed connection attempt re-drives the waiting messages (kind 1),
    # the attempt that succeeds delivers what is still waiting (kind 0).
    events = sorted([(o.back, 0, o) for o in OUTAGES if o.applies(sender, o.dest) and mq_date(o.back) == day]
                    + [(t, 1, o) for o in OUTAGES if o.applies(sender, o.dest) for t in o.retry_times()
                       if mq_date(t) == day], key=lambda e: (e[0], e[1], e[2].dest))

    def channel_events(until: datetime | None) -> None:
        while events and (until is None or events[0][0] <= until):
            at, kind, o = events.pop(0)
            queue = waiting.get(o.dest, [])
            if kind == 0:  # the channel runs again and drains its backlog, in order
                for i, m in enumerate(queue):
                    m.sent = at + timedelta(milliseconds=350 + 40 * i)
                    m.arrive = m.sent + timedelta(milliseconds=20)
                    m.holds.append((m.t, m.sent, m.dest, m.channel, m.xmitq))
                    m.stuck = True
                waiting[o.dest] = []
                continue
            # A failed retry: every waiting message that can be re-allocated is routed again (002). It moves
            # only to a destination whose channel is in a better state than this one; while every alternative
            # retries too, this channel is still as favourable as any, and the message stays. Re-driving is not
            # a new put: the routing state is left as it was (Router.peek).
            stay, moved = [], 0
            for m in queue:
                best = r.peek(m.queue, m.target, at) if m.token != ZERO_TOKEN else m.dest
                if best == m.dest or retrying(sender, best, at):
                    stay.append(m)
                    continue
                assert best != sender, "re-allocated to a local instance: not in the samples"
                m.holds.append((m.t, at, m.dest, m.channel, m.xmitq))
                m.reallocs.append((at, m.dest, best))
                m.dest, m.channel = best, f"TO.{best}"
                m.xmitq = xmitq_for(sender, m.channel)
                m.sent = at + timedelta(milliseconds=310 + 40 * moved)
                m.arrive = m.sent + timedelta(milliseconds=20)
                moved += 1
            waiting[o.dest] = stay

    for i, p in enumerate(puts):
        channel_events(p.t)
        if probe and i > 0:
            cand = puts[i - 1].t + timedelta(seconds=1)
            if probe[2] <= cand < min(p.t, probe[3]) and r.peek(probe[0], "", cand) == probe[1]:
                found.append(cand)
        key = None
        if p.bind == "open" and not p.target:
            key = ("open", p.handle)
        elif p.bind == "group" and p.logical and not p.target:
            key = ("group", p.group_id.hex())
        if key and key in bound:
            p.dest = bound[key]
        else:
            p.dest = r.route(p.queue, p.target, p.t)
            p.decided_at = p.t
            if key:
                bound[key] = p.dest
        p.first_dest = p.dest
        if p.local:
            p.arrive = p.t
            continue
        p.channel = f"TO.{p.dest}"
        p.xmitq = xmitq_for(p.sender, p.channel)
        if retrying(sender, p.dest, p.t):
            waiting.setdefault(p.dest, []).append(p)
        else:
            p.sent = p.t + timedelta(milliseconds=80)
            p.arrive = p.sent + timedelta(milliseconds=20)
    channel_events(None)
    assert not any(waiting.values()), "a message still waits at the end of the day"
    return found


def build_day(sender: str, day: str, probe=None, **kw) -> tuple[list[Put], list[datetime]]:
    puts = gen_qm1(day, **kw) if sender == "QM1" else gen_qm5(day, **kw)
    puts.sort(key=lambda p: p.t)
    return puts, route_day(puts, probe)


def build_traffic() -> dict[tuple[str, str], list[Put]]:
    """All puts, routed. On 2026-11-20 the scripted sessions are placed where the replay binds them to QM3."""
    out: dict[tuple[str, str], list[Put]] = {}
    d1, d2 = DAYS
    out[("QM1", d1)], _ = build_day("QM1", d1, straddle_open=None, straddle_group=None)
    out[("QM5", d1)], _ = build_day("QM5", d1, straddle_open=None)

    def tagged(puts, tag):
        return next(p for p in puts if p.tag == tag)

    # QM1: a bind-on-open session and a logically ordered group, both bound to QM3 before it fails
    _, opens = build_day("QM1", d2, probe=("APP.ORDERS", "QM3", T(f"{d2} 12:05:00"), T(f"{d2} 13:30:00")),
                         straddle_open=None, straddle_group=None)
    for t_open in reversed(opens):  # latest first: keep the sessions short
        _, grps = build_day("QM1", d2, probe=("APP.ORDERS", "QM3", t_open + timedelta(minutes=2),
                                              T(f"{d2} 13:46:45")), straddle_open=t_open, straddle_group=None)
        if grps:
            break
    puts, _ = build_day("QM1", d2, straddle_open=t_open, straddle_group=grps[-1])
    assert tagged(puts, "straddle-open").dest == "QM3" and tagged(puts, "straddle-group").dest == "QM3"
    out[("QM1", d2)] = puts
    # QM5: a bind-on-open billing session bound to QM3
    _, opens = build_day("QM5", d2, probe=("APP.BILLING", "QM3", T(f"{d2} 12:05:00"), T(f"{d2} 13:30:00")),
                         straddle_open=None)
    puts, _ = build_day("QM5", d2, straddle_open=opens[-1])
    assert tagged(puts, "straddle-open").dest == "QM3"
    out[("QM5", d2)] = puts
    # message ids, in put order per sending QM
    for sender in SENDERS:
        ids = Ids(sender, 0)
        for di, day in enumerate(DAYS):
            for p in out[(sender, day)]:
                p.msg_id = ids.next(di)
    return out


# --------------------------------------------------------------------------------------------------
# Channel runtime (derived from the routed traffic)
# --------------------------------------------------------------------------------------------------


class Runtime:
    def __init__(self, traffic: dict[tuple[str, str], list[Put]]):
        self.traffic = traffic
        self.sends: dict[tuple[str, str], list[tuple[datetime, int]]] = {}
        for (sender, _), puts in traffic.items():
            for p in puts:
                if not p.local:
                    self.sends.setdefault((sender, p.dest), []).append((p.sent, self.xmit_len(p)))
        for k in self.sends:
            self.sends[k].sort()

    @staticmethod
    def xmit_len(p: Put) -> int:
        return 428 + (72 if p.group_id and p.logical else 0) + p.length

    @staticmethod
    def repository_channel(frm: str, to: str) -> bool:
        """Channels between FR1 and FR2, QM1, QM5 carry repository traffic all day (the sending queue managers
        keep subscribing to cluster queues); FR2 is used only FR1 <-> FR2, and the back ends' channels to the
        full repositories are idle (DISCINT) outside the admin changes."""
        pair = {frm, to}
        return frm != to and "FR1" in pair and bool(pair & {"FR2", "QM1", "QM5"})

    def instance_start(self, frm: str, to: str, t: datetime) -> datetime | None:
        """Start of the channel instance running at t (None: channel not running)."""
        day0 = t.replace(hour=5, minute=0, second=0, microsecond=0)
        if self.repository_channel(frm, to):
            if "QM3" in (frm, to) and t.date() == QM3_CRASH.date() and t >= QM3_CRASH:
                back = QM3_RESTART + timedelta(seconds=9) if frm == "QM3" else TOQM3_BACK
                return back if t >= back else None
            base = day0 + timedelta(seconds=31 + ALL_QMS.index(frm) * 3 + ALL_QMS.index(to))
            return base if t >= base else None
        if to in FULL_REPOS:  # a back end publishes an administrative change to both full repositories
            recent = [e for e in ADMIN_EVENTS.get(frm, []) if e <= t and (t - e).total_seconds() <= DISCINT]
            return max(recent) + timedelta(seconds=1 + FULL_REPOS.index(to)) if recent else None
        # a channel that comes back from RETRYING starts a new instance (it runs until DISCINT, sending or not)
        backs = [o.back for o in OUTAGES if frm in SENDERS and o.applies(frm, to)]
        activity = sorted([(s, False) for s, _ in self.sends.get((frm, to), [])] + [(b, True) for b in backs])
        start, last = None, None
        for s, back in activity:
            if s > t or s.date() != t.date():
                if s > t:
                    break
                continue
            if back or last is None or (s - last).total_seconds() > DISCINT:
                start = s
            last = s
        if last is None or (t - last).total_seconds() > DISCINT:
            return None
        return start

    def state(self, frm: str, to: str, t: datetime) -> str:
        if frm == to:
            return "RUNNING"
        if retrying(frm, to, t):
            return "RETRYING"
        if frm == "QM3" and QM3_CRASH <= t < QM3_RESTART:
            return "INACTIVE"
        return "RUNNING" if self.instance_start(frm, to, t) else "INACTIVE"

    def stats(self, frm: str, to: str, t: datetime) -> tuple[int, int, datetime | None]:
        start = self.instance_start(frm, to, t)
        if start is None:
            return 0, 0, None
        if (frm, to) in self.sends:
            sel = [(s, n) for s, n in self.sends[(frm, to)] if start <= s <= t]
            return len(sel), sum(n for _, n in sel), (sel[-1][0] if sel else start)
        minutes = int((t - start).total_seconds() // 60)
        msgs = 2 + minutes // 45  # repository traffic
        return msgs, msgs * 2316, start + timedelta(minutes=45 * (msgs - 2)) if msgs > 2 else start

    def sent_before(self, frm: str, to: str, t: datetime) -> int:
        """Messages sent earlier that day over the channel (sequence numbers carry on across instances)."""
        return sum(1 for s, _ in self.sends.get((frm, to), []) if s.date() == t.date() and s < t)

    def held(self, frm: str, xmitq: str | None, t: datetime, to: str | None = None) -> list[Put]:
        out = []
        for (sender, _), puts in self.traffic.items():
            if sender != frm:
                continue
            for p in puts:
                if any(t0 <= t < t1 and (xmitq is None or xq == xmitq) and (to is None or dest == to)
                       for t0, t1, dest, _, xq in p.holds):
                    out.append(p)
        return sorted(out, key=lambda p: p.t)



# --------------------------------------------------------------------------------------------------
# What the queue managers show (printed by clwl/generate/render.py)
# --------------------------------------------------------------------------------------------------


def clusqmgr_rec(observer: str, qm: str, t: datetime, rt: Runtime, extra=None) -> Rec:
    return R.clusqmgr_rec(QMS[observer], QMS[qm], f"TO.{qm}", CLUSTER, R.ClusqmgrState(
        weight=clwlwght(qm, t), prty=0, altered=clusrcvr_altered(qm, t),
        learnt=max(cluster_info_time(qm, t), republished(qm)), status=rt.state(observer, qm, t),
        suspended=suspended(qm, t), xmitq=xmitq_for(observer, f"TO.{qm}")), extra=extra)


def qcluster_rec(queue: str, host: str, clusqt: str, t: datetime) -> Rec:
    return R.qcluster_rec(queue, QMS[host], CLUSTER, R.QclusterState(
        altered=put_altered(queue, host, t), learnt=republished(host) + timedelta(seconds=len(queue)),
        put=put_enabled(queue, host, t), prty=0, descr=QUEUE_DESCR[queue], persistent=queue != "BILLING.GW",
        clusqt=clusqt))


def business(t: datetime) -> bool:
    return 7 <= t.hour < 21


def qlocals(qm: str, t: datetime, rt: Runtime) -> list[Rec]:
    q = QMS[qm]
    recs = []
    app: dict[str, dict] = {}
    for queue, host, clusqt in INSTANCES:
        if host != qm or clusqt != "QLOCAL":
            continue
        cr = QUEUE_CREATED[(queue, host)]
        enabled = put_enabled(queue, host, t)
        app[queue] = dict(
            created=cr, altered=put_altered(queue, host, t), cluster=CLUSTER, defbind="NOTFIXED",
            defpsist="YES", descr=QUEUE_DESCR[queue], maxdepth="50000",
            acctq="ON" if queue in ("APP.ORDERS", "APP.BILLING") else "QMGR",
            clwluseq="ANY" if clwluseq(qm, queue) == "ANY" else "QMGR",
            put="ENABLED" if enabled else "DISABLED",
            ipprocs=(2 if enabled else 0) if not (qm == "QM3" and QM3_CRASH <= t < QM3_RESTART) else 0,
            opprocs=(1 if business(t) else 0), boqname=f"{queue}.BACKOUT", bothresh="5")
        app[f"{queue}.BACKOUT"] = R.backout_qlocal(queue, cr)
    for m, name, pat in CLCHNAME_QUEUES:
        if m == qm:
            app[name] = R.manual_xmitq_qlocal(pat, T("2025-06-10 08:15:00"))
    if q.defclxq == "CHANNEL":
        for other in KNOWS_QM[qm]:
            if other != qm:
                app[f"SYSTEM.CLUSTER.TRANSMIT.TO.{other}"] = R.channel_xmitq_qlocal(q.created + timedelta(minutes=20))
    if qm == "QM5":
        app["BILLING.REPLY"] = dict(created=T("2025-02-03 10:30:00"), descr="Replies to billing-svc",
                                    ipprocs=1 if business(t) else 0)
    merged = {**R.system_qlocals(len(KNOWS_QM[qm]) + 3), **app}
    for name in sorted(merged):
        o = dict(merged[name])
        if o.get("usage") == "XMITQ":
            held = rt.held(qm, name, t)
            o["curdepth"] = len(held)
            users = [r for r in KNOWS_QM[qm] if r != qm and xmitq_for(qm, f"TO.{r}") == name
                     and rt.state(qm, r, t) == "RUNNING"]
            o["ipprocs"] = len(users)
            o["opprocs"] = 1 if business(t) and qm in SENDERS and users else 0
        recs.append(R.qlocal_rec(q, name, **o))
    return recs


def config_cmds(qm: str, t: datetime, rt: Runtime, unknown_attr: tuple | None = None) -> list[Cmd]:
    """unknown_attr (queue manager, (attribute, value)): an attribute to add to that CLUSQMGR record."""
    clus = []
    for other in sorted(KNOWS_QM[qm]):
        extra = None
        if unknown_attr and unknown_attr[0] == other:
            extra = unknown_attr[1]
        clus.append(clusqmgr_rec(qm, other, t, rt, extra))
    known_q = KNOWS_Q.get(qm) or {q for q, h, _ in INSTANCES if h == qm}
    qc = [qcluster_rec(q, h, ct, t) for q, h, ct in sorted(INSTANCES) if q in known_q and h in KNOWS_QM[qm]]
    aliases = [(alias, QUEUE_CREATED[(alias, host)], CLUSTER, host, QUEUE_DESCR[alias])
               for alias, host in QM_ALIASES.items() if host == qm]
    return [
        Cmd("DISPLAY QMGR ALL", [R.qmgr_rec(QMS[qm], [CLUSTER])]),
        Cmd("DISPLAY CLUSQMGR(*) ALL", clus),
        Cmd("DISPLAY QCLUSTER(*) ALL", qc),
        Cmd("DISPLAY QLOCAL(*) ALL", qlocals(qm, t, rt)),
        Cmd("DISPLAY QALIAS(*) ALL", R.qalias_recs(QMS[qm])),
        Cmd("DISPLAY QREMOTE(*) ALL", R.qremote_recs(QMS[qm], aliases)),
    ]


def random_hexid(seed: str, n: int = 16) -> str:
    r = random.Random(seed)
    return "".join(r.choice("0123456789ABCDEF") for _ in range(n))


def chstatus_cmd(qm: str, t: datetime, rt: Runtime) -> Cmd:
    recs = []
    rows = []
    for other in KNOWS_QM[qm]:
        if other == qm:
            continue
        st = rt.state(qm, other, t)
        if st != "INACTIVE":
            rows.append((f"TO.{other}", "CLUSSDR", other, st))
    for s in ALL_QMS:  # inbound instances of our cluster-receiver
        if s != qm and qm in KNOWS_QM[s] and rt.state(s, qm, t) == "RUNNING":
            rows.append((f"TO.{qm}", "CLUSRCVR", s, "RUNNING"))
    for chl, typ, rqm, st in sorted(rows):
        seed = f"{qm}/{chl}/{rqm}/{t.date()}"
        frm, to = (qm, rqm) if typ == "CLUSSDR" else (rqm, qm)
        msgs, nbytes, last = rt.stats(frm, to, t)
        start = rt.instance_start(frm, to, t)
        seqbase = 1000 + random.Random(seed).randint(0, 400000) + rt.sent_before(frm, to, start or t)
        xqmsgsa = len(rt.held(qm, None, t, to=rqm)) if typ == "CLUSSDR" else 0
        if st == "RETRYING":
            recs.append(R.chstatus_retrying(chl, QMS[rqm], since=outage(qm, rqm, t).down, at=t, seqbase=seqbase,
                                            xmitq=xmitq_for(qm, chl), xqmsgsa=xqmsgsa))
            continue
        # The sample's channel identifiers come from seeded random streams (the engine's from sha256): kept, so
        # the committed sample files stay what they were.
        ids = (random_hexid(seed + "c"), random_hexid(seed + "j"), random_hexid(seed + "l"),
               40000 + random.Random(seed).randint(0, 20000))
        recs.append(R.chstatus_running(QMS[qm], chl, typ, QMS[rqm], R.ChannelTraffic(
            start=start, msgs=msgs, nbytes=nbytes, last=last, seqbase=seqbase,
            xmitq=xmitq_for(qm, chl) if typ == "CLUSSDR" else "", xqmsgsa=xqmsgsa), ids=ids))
    return Cmd("DISPLAY CHSTATUS(*) ALL", recs, empty_msg="AMQ8420")


# --------------------------------------------------------------------------------------------------
# Transmission queue browses
# --------------------------------------------------------------------------------------------------


def payload(p: Put) -> bytes:
    """The application message: a JSON document of the sample's kind per queue, padded to p.length."""
    day = p.t.strftime("%Y%m%d")
    n = int.from_bytes(p.msg_id[-4:], "big") & 0xFFFFF
    if p.queue == "APP.AUDIT":
        head = f'{{"type":"audit","event":"order.created","order":"O-{day}-{n:06d}","by":"{p.app}","pad":"'
    elif p.queue == "APP.ORDERS":
        part = f',"part":{p.group_seq}' if p.group_id else ""
        head = (f'{{"type":"order","order":"O-{day}-{n:06d}"{part},"customer":"C{n % 9973:05d}",'
                f'"source":"{p.app}","pad":"')
    else:
        head = f'{{"type":"billing","invoice":"B-{day}-{n:06d}","account":"A{n % 7919:05d}","pad":"'
    b = RM.padded_json(head, p.length)
    assert len(b) == p.length, (len(b), p.length)
    return b


def browsed(p: Put, at: datetime) -> tuple[dict, bytes]:
    """A waiting message as a browse at ``at`` shows it: the transmission queue message's MQMD and its data
    (MQXQH with the put's MQMD, MQMDE, application data)."""
    app = APPS[p.app]
    put_t = p.t
    o = outage(p.sender, p.dest, at)
    if not p.zero and o:  # re-allocation eligible: PutDate/PutTime follow each re-allocation attempt
        tried = [r for r in o.retry_times() if p.t <= r <= at]
        if tried:
            put_t = tried[-1] + timedelta(milliseconds=310)
    md = RM.outer_md(p, app.user, app.name, app.appltype, app.token, p.sender, put_t)
    data = RM.xmit_data(p, app.user, app.name, app.appltype, app.token, p.sender, p.t, payload(p))
    assert not any(0xC2 <= b <= 0xF4 for b in data)  # no multi-byte UTF-8 lead bytes: plain amqsbcg layout
    return md, data


# --------------------------------------------------------------------------------------------------
# amqsmon queue accounting
# --------------------------------------------------------------------------------------------------


def grid(qm: str, day: str) -> list[tuple[datetime, datetime]]:
    """Accounting intervals of a queue manager: ACCTINT from its start (05:00, or its restart)."""
    out = []
    start = T(f"{day} 05:00:00")
    stop = start + timedelta(days=1)
    restart = QM3_RESTART if qm == "QM3" and day == mq_date(QM3_CRASH) else None
    t = start
    while t < stop:
        nxt = t + timedelta(seconds=ACCTINT)
        if restart and t < QM3_CRASH < nxt:
            t = restart  # the interval that was running at the crash is lost; a new timer starts at restart
            continue
        out.append((t, nxt))
        t = nxt
    return out

def accounting(qm: str, day: str, traffic) -> str:
    """Queue accounting records of APP.ORDERS / APP.BILLING on a receiving queue manager for one day."""
    arrivals: dict[tuple, list[Put]] = {}
    for (sender, _), puts in traffic.items():
        for p in puts:
            if p.dest != qm or p.queue not in ("APP.ORDERS", "APP.BILLING") or mq_date(p.arrive) != day:
                continue
            if p.local:
                ckey = ("app", p.app)
            else:
                epoch = 1 if qm == "QM3" and p.arrive >= QM3_RESTART else 0
                ckey = ("mca", sender, epoch)
            arrivals.setdefault(ckey, []).append(p)
    rng = random.Random(f"acct/{qm}/{day}")
    intervals = grid(qm, day)
    records = []
    di = DAYS.index(day)
    for ci, ckey in enumerate(sorted(arrivals)):
        ps = sorted(arrivals[ckey], key=lambda p: p.arrive)
        if ckey[0] == "app":
            app = APPS[ckey[1]]
            cstart = T(f"{day} 07:00:00") + timedelta(seconds=rng.randint(0, 50))
            meta = dict(name=app.name, user=app.user, pid=rng.randint(2000, 30000), tid=1)
        else:
            cstart = ps[0].arrive - timedelta(milliseconds=15)
            meta = dict(name="amqrmppa", user="mqm", pid=rng.randint(2000, 30000), tid=rng.randint(3, 40))
        cid = (b"AMQC" + qm.ljust(12).encode() + bytes([0x5B, 0x40 + di, 0x10 + ci, 0x6A])
               + bytes([0x02, 0x29, rng.randint(0, 0x7F), rng.randint(0, 0x7F)]))
        seq = 0
        opened = {}
        for (i0, i1) in intervals:
            if i1 <= cstart:
                continue
            by_q: dict[str, list[Put]] = {}
            for p in ps:
                if i0 <= p.arrive < i1:
                    by_q.setdefault(p.queue, []).append(p)
            if not by_q:  # no record for an interval without activity (arrivals lost in a crash included)
                continue
            start = max(i0, cstart)
            rec = RM.accounting_head(RM.AccountingConnection(QMS[qm], cid, meta["name"], meta["pid"], meta["tid"],
                                                             meta["user"]), start, i1, seq, len(by_q))
            for gi, queue in enumerate(sorted(by_q)):
                qp = by_q[queue]
                np_ = [p.length for p in qp if not p.persistent]
                pp = [p.length for p in qp if p.persistent]
                first_open = queue not in opened
                if first_open:
                    opened[queue] = qp[0].arrive - timedelta(milliseconds=5)
                od = opened[queue]
                counts = [len(np_), len(pp), sum(np_), sum(pp), min(np_, default=0), max(np_, default=0),
                          min(pp, default=0), max(pp, default=0)]
                rec += RM.queue_group(gi, queue, QUEUE_CREATED[(queue, qm)], first_open, od, counts)
            records.append((i1, meta["name"], seq, rec))
            seq += 1
    records.sort(key=lambda r: (r[0], r[1], r[2]))
    return RM.render_amqsmon([r[3] for r in records])

# --------------------------------------------------------------------------------------------------
# Put records (puts.csv)
# --------------------------------------------------------------------------------------------------


def csv_row(p: Put, i: int) -> list[str]:
    observed = i % 6 == 0  # a traced sample of the messages
    return [
        iso(p.t), p.sender, p.queue, p.target, p.bind, p.handle, p.group_id.hex().upper(),
        "true" if p.logical else "false", "false", "false", str(p.length), "true" if p.persistent else "false",
        p.token.hex().upper(), p.msg_id.hex().upper(),
        p.dest if observed else "", (p.channel if observed else ""), (p.xmitq if observed else ""),
    ]

# --------------------------------------------------------------------------------------------------
# The files
# --------------------------------------------------------------------------------------------------

CONFIG_TIMES = {
    ("QM1", "2026-11-19"): ["060000", "120000", "180000"],
    ("QM1", "2026-11-20"): ["060000", "120000", "140000", "170000", "180000"],
    ("QM5", "2026-11-19"): ["060000", "120000", "180000"],
    ("QM5", "2026-11-20"): ["060000", "100000", "110000", "120000", "140000", "170000", "180000"],
    ("QM2", "2026-11-19"): ["060000", "120000"],
    ("QM2", "2026-11-20"): ["060000"],
    ("QM3", "2026-11-19"): ["060000"],
    ("QM3", "2026-11-20"): ["060000"],
    ("QM4", "2026-11-19"): ["060000"],
    ("QM4", "2026-11-20"): ["060000", "180000"],
    ("FR1", "2026-11-19"): ["060000"],
    ("FR1", "2026-11-20"): ["060000"],
    ("FR2", "2026-11-19"): ["060000"],
    ("FR2", "2026-11-20"): ["060000"],
}
UNKNOWN_ATTR_FILE = ("QM1", "2026-11-20", "120000")  # CLUSQMGR(QM2) carries CLWLHINT(NONE)
UNBALANCED_FILE = ("FR1", "2026-11-20", "060000")  # CLUSQMGR(QM3) CONNAME lacks its closing parenthesis
TRUNCATED_FILE = ("QM5", "2026-11-20", "210000")  # chstatus capture cut off in its last record
NOT_MQSC_FILE = ("QM3", "2026-11-20", "140000")  # the capture job could not reach QM3's host
LATE_FROM = T("2026-11-20 19:00:00")  # QM1's puts from here on arrived late: puts_late.csv


def build_files() -> tuple[dict[str, bytes], dict]:
    traffic = build_traffic()
    rt = Runtime(traffic)
    files: dict[str, bytes] = {}

    def put(rel: str, text: str) -> None:
        files[rel] = text.encode("utf-8")

    for (qm, day), times in sorted(CONFIG_TIMES.items()):
        for hhmmss in times:
            t = T(f"{day} {hhmmss[:2]}:{hhmmss[2:4]}:{hhmmss[4:]}")
            base = f"landing/{day}/{qm}"
            unknown = None
            if (qm, day, hhmmss) == UNKNOWN_ATTR_FILE:
                unknown = ("QM2", ("CLWLHINT", "NONE"))  # an attribute this MQ level does not have
            cmds = config_cmds(qm, t, rt, unknown)
            if qm == REST_QM:
                put(f"{base}/config_{hhmmss}.json", R.render_rest(cmds))
            else:
                text = R.render_mqsc(QMS[qm], cmds)
                if (qm, day, hhmmss) == UNBALANCED_FILE:
                    good = f"CONNAME({QMS['QM3'].conname})"
                    assert text.count(good) == 1
                    text = text.replace(good, good[:-1] + " ")
                put(f"{base}/config_{hhmmss}.mqsc", text)
            put(f"{base}/chstatus_{hhmmss}.mqsc", R.render_mqsc(QMS[qm], [chstatus_cmd(qm, t, rt)]))

    # deliberate defects that are whole files
    qm, day, hhmmss = TRUNCATED_FILE
    t = T(f"{day} 21:00:00")
    full = R.render_mqsc(QMS[qm], [chstatus_cmd(qm, t, rt)])
    cut = full.rfind("\n   CONNAME(")
    assert cut > 0
    put(f"landing/{day}/{qm}/chstatus_{hhmmss}.mqsc", full[:cut + len("\n   CONNAME(") + 6])
    qm, day, hhmmss = NOT_MQSC_FILE
    put(f"landing/{day}/{qm}/config_{hhmmss}.mqsc",
        "ssh: connect to host 10.40.1.23 port 22: No route to host\n"
        "capture-mq.sh: runmqsc capture of QM3 failed (rc=255), output kept for the record\n")

    # put records
    for sender in SENDERS:
        for day in DAYS:
            rows, late = [], []
            for i, p in enumerate(traffic[(sender, day)]):
                (late if sender == "QM1" and p.t >= LATE_FROM else rows).append(csv_row(p, i))
            put(f"landing/{day}/{sender}/puts.csv", RP.render_puts_csv(rows))
            if late:
                bad1 = list(late[4])
                bad1[0] = iso(T(bad1[0][:10] + " " + bad1[0][11:23]) + timedelta(milliseconds=7))
                bad1[13] = bad1[13][:-4] + "7F7E"
                bad1[12] = bad1[12][:-4] + "0G06"  # not hexadecimal
                bad2 = list(late[9])
                bad2[0] = iso(T(bad2[0][:10] + " " + bad2[0][11:23]) + timedelta(milliseconds=9))
                bad2[13] = bad2[13][:-4] + "7F7D"
                bad2[12] = bad2[12][2:]  # 62 hex digits: one byte short
                late = late[:5] + [bad1] + late[5:10] + [bad2] + late[10:]
                put(f"landing/{day}/{sender}/puts_late.csv", RP.render_puts_csv(late))

    # transmission queue browses behind the retrying channel
    q1 = rt.held("QM1", "SYSTEM.CLUSTER.TRANSMIT.QUEUE", BROWSE_AT)
    put(f"landing/{mq_date(BROWSE_AT)}/QM1/xmitq_{BROWSE_AT.strftime('%H%M%S')}.amqsbcg",
        RM.render_amqsbcg("SYSTEM.CLUSTER.TRANSMIT.QUEUE", [browsed(p, BROWSE_AT) for p in q1]))
    q5 = rt.held("QM5", "CLUS.XMITQ.QM", BROWSE_AT)
    put(f"landing/{mq_date(BROWSE_AT)}/QM5/xmitq_{BROWSE_AT.strftime('%H%M%S')}.dmpmqmsg",
        RM.render_dmpmqmsg("QM5", "CLUS.XMITQ.QM", BROWSE_AT, [browsed(p, BROWSE_AT) for p in q5]))

    # accounting on the receiving queue managers
    for day in DAYS:
        for qm in ("QM1", "QM2", "QM3", "QM4"):
            put(f"landing/{day}/{qm}/accounting.amqsmon", accounting(qm, day, traffic))

    # the route example captures
    for name in ("config_060000.mqsc", "chstatus_060000.mqsc"):
        files[f"captures/QM1/{name}"] = files[f"landing/2026-11-20/QM1/{name}"]

    facts = build_facts(traffic, q1, q5)
    rel, text, facts[CHANNEL_TRACE_FACT] = channel_agent_trace(traffic)  # after the others: they stay as they were
    put(rel, text)
    files["facts.json"] = (json.dumps(facts, indent=2) + "\n").encode()
    return files, facts


def build_facts(traffic, q1: list[Put], q5: list[Put]) -> dict:
    per = {}
    for (sender, day), puts in sorted(traffic.items()):
        d: dict[str, dict[str, int]] = {}
        for p in puts:
            d.setdefault(p.queue, {}).setdefault(p.dest, 0)
            d[p.queue][p.dest] += 1
        per[f"{sender} {day}"] = {"puts": len(puts), "by_queue_and_destination":
                                  {q: dict(sorted(v.items())) for q, v in sorted(d.items())}}

    def reason(p: Put) -> str:
        if p.target:
            return "not re-allocatable: target queue manager named by the application"
        if p.bind == "open":
            return "not re-allocatable: bind on open"
        if p.bind == "group" and p.logical:
            return "not re-allocatable: bind on group with logical order"
        if len({h for q, h, _ in INSTANCES if q == p.queue}) == 1:
            return "still most favourable: the only instance of the queue"
        return "still most favourable: every other destination's channel was retrying too, until this one ran again"

    def held(ps):
        return [{"msg_id": p.msg_id.hex().upper(), "put_time": iso(p.t), "queue": p.queue,
                 "dest": p.dest, "channel": p.channel, "reason": reason(p)} for p in ps]

    everything = [p for (s, _), puts in sorted(traffic.items()) for p in puts]
    all_held = [p for p in everything if p.stuck and any(dest == "QM3" and QM3_CRASH <= t0 < TOQM3_BACK
                                                         for t0, _, dest, _, _ in p.holds)]
    net_day = mq_date(NET_DOWN)
    net_held = [p for p in everything if p.sender == "QM5" and mq_date(p.t) == net_day and p.holds
                and p.holds[0][0] < max(o.back for o in NET_OUTAGES) and p not in all_held]

    def waited(p: Put) -> dict:
        t0, t1, dest, channel, xmitq = p.holds[0]
        out = {"msg_id": p.msg_id.hex().upper(), "put_time": iso(p.t), "queue": p.queue,
               "target_qmgr": p.target, "bind": p.bind, "first_dest": p.first_dest, "first_channel": channel,
               "first_xmitq": xmitq}
        if p.reallocs:
            out.update({"reallocated_at": iso(p.reallocs[-1][0]), "reallocations": len(p.reallocs)})
        else:
            out["reason"] = reason(p)
        out.update({"dest": p.dest, "channel": p.channel, "xmitq": p.xmitq, "sent": iso(p.sent)})
        return out

    moved = [p for p in everything if p.reallocs]
    lost: dict[str, int] = {}
    for (_, _), puts in sorted(traffic.items()):
        for p in puts:
            if p.dest == "QM3" and p.arrive and T("2026-11-20 13:30:00") <= p.arrive < QM3_CRASH \
                    and p.queue in ("APP.ORDERS", "APP.BILLING"):
                lost[p.queue] = lost.get(p.queue, 0) + 1
    return {
        "note": "Ground truth of samples/make_samples.py: its own CLWL replay (default profile, cli-contract "
                "readings, factors reset when a CLUSRCVR weight changes, state from zero each day).",
        "traffic": per,
        "held_behind_TO.QM3": {"count": len(all_held), "released_at": iso(TOQM3_BACK),
                               "by_sender": {s: sum(1 for p in all_held if p.sender == s) for s in SENDERS}},
        "accounting_lost_in_QM3_crash_2026-11-20_13:30-13:52": dict(sorted(lost.items())),
        "reallocated": {"count": len(moved), "by_sender": {s: sum(1 for p in moved if p.sender == s)
                                                           for s in SENDERS},
                        "messages": [waited(p) for p in moved]},
        f"network_outage_QM5_{net_day}": {
            "channels": {f"TO.{o.dest}": {"retrying_from": iso(o.down), "back": iso(o.back),
                                          "failed_attempts": len(o.retry_times())} for o in NET_OUTAGES},
            "waited": len(net_held),
            "reallocated": sum(1 for p in net_held if p.reallocs),
            "stayed": sum(1 for p in net_held if not p.reallocs),
            "stayed_not_reallocatable": sum(1 for p in net_held if not p.reallocs and p.token == ZERO_TOKEN),
            "messages": [waited(p) for p in net_held],
        },
        "browse_QM1_SYSTEM.CLUSTER.TRANSMIT.QUEUE_153000": held(q1),
        "browse_QM5_CLUS.XMITQ.QM_153000": held(q5),
        "route_example_QM1_2026-11-20_060000_APP.ORDERS_x10": route_example(),
    }


def route_example() -> list[str]:
    t = T("2026-11-20 06:00:00")
    r = Router("QM1")
    r.weights_seen = {q: clwlwght(q, t) for q in KNOWS_QM["QM1"]}
    return [r.route("APP.ORDERS", "", t) for _ in range(10)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the files on disk instead of writing")
    args = ap.parse_args(argv)
    files, facts = build_files()
    generated_dirs = [HERE / "landing", HERE / "captures"]
    on_disk = {str(p.relative_to(HERE)) for d in generated_dirs if d.exists() for p in d.rglob("*") if p.is_file()}
    if (HERE / "facts.json").exists():
        on_disk.add("facts.json")
    if args.check:
        bad = sorted(rel for rel, data in files.items()
                     if not (HERE / rel).exists() or (HERE / rel).read_bytes() != data)
        extra = sorted(on_disk - set(files))
        for rel in bad:
            print(f"differs or missing: samples/{rel}")
        for rel in extra:
            print(f"not generated: samples/{rel}")
        return 1 if bad or extra else 0
    for d in generated_dirs:
        if d.exists():
            shutil.rmtree(d)
    for rel, data in sorted(files.items()):
        path = HERE / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    print(f"wrote {len(files)} files under {HERE}")
    for k, v in facts["traffic"].items():
        print(f"  {k}: {v['puts']} puts  {json.dumps(v['by_queue_and_destination'], sort_keys=True)}")
    print(f"  held behind TO.QM3: {facts['held_behind_TO.QM3']['count']}; "
          f"in the QM1 browse: {len(facts['browse_QM1_SYSTEM.CLUSTER.TRANSMIT.QUEUE_153000'])}; "
          f"in the QM5 browse: {len(facts['browse_QM5_CLUS.XMITQ.QM_153000'])}")
    net = facts[f"network_outage_QM5_{mq_date(NET_DOWN)}"]
    print(f"  QM5 network outage: {net['waited']} waited, {net['reallocated']} re-allocated, {net['stayed']} stayed "
          f"({net['stayed_not_reallocatable']} not re-allocatable); "
          f"re-allocated in all: {facts['reallocated']['count']}")
    print(f"  route example: {' '.join(facts['route_example_QM1_2026-11-20_060000_APP.ORDERS_x10'])}")
    return 0


# --------------------------------------------------------------------------------------------------
# The channel agents' activity trace of one sender (issue 29)
# --------------------------------------------------------------------------------------------------

CHANNEL_TRACE = ("QM5", "2026-11-20")
CHANNEL_TRACE_FACT = "channel_trace_QM5_2026-11-20"


def channel_agent_trace(traffic) -> tuple[str, str, dict]:
    """QM5's cluster-sender agents on 2026-11-20 as amqsact prints them (mqat.ini ``ApplClass=MCA``, MEDIUM): each
    of its messages' MQGET from its transmission queue, with the transmission header (the application's MsgId,
    RemoteQMgr, RemoteQName), at the time the replay above sends it (``Put.sent``: 80 ms after the put over a
    running channel; when the channel comes back after the network outage or QM3's failure, or at the failed retry
    that re-allocates it), in batches under syncpoint. Printed by clwl generate's channel-agent renderer
    (clwl/generate/channel_trace.py). Returns the file's path, its text and its fact."""
    import io
    from datetime import date

    from clwl.generate.channel_trace import AgentMessage, QueueManagerTrace, file_name

    sender, day = CHANNEL_TRACE
    out = io.StringIO()
    trace = QueueManagerTrace(out, QMS[sender], date.fromisoformat(day), "amqsact")
    epoch = datetime(1970, 1, 1)
    by_channel: dict[str, int] = {}
    late = []
    for p in sorted((p for p in traffic[(sender, day)] if p.sent is not None), key=lambda p: (p.sent, p.msg_id)):
        us = (p.sent - epoch) // timedelta(microseconds=1)
        m = AgentMessage(p.msg_id, p.t, sender, p.queue, p.length, 1 if p.persistent else 0)
        got = trace.get(trace.agent(True, p.channel, QMS[p.dest]), us, m, p.xmitq, p.dest)
        assert got - us < 1000, "an agent's call pushed a departure by a millisecond"
        by_channel[p.channel] = by_channel.get(p.channel, 0) + 1
        if p.sent - p.t > timedelta(seconds=1):
            late.append(p)
    trace.close()
    name = file_name(sender, date.fromisoformat(day), "amqsact")
    by_release: dict[str, int] = {}  # the minute the late ones left in: the channel came back or re-allocated
    for p in late:
        key = iso(p.sent.replace(second=0, microsecond=0))
        by_release[key] = by_release.get(key, 0) + 1
    fact = {"file": f"landing/{day}/{sender}/{name}", "departures": sum(by_channel.values()),
            "by_channel": dict(sorted(by_channel.items())), "left_more_than_1s_after_put": len(late),
            "left_late_by_release": dict(sorted(by_release.items()))}
    return f"landing/{day}/{sender}/{name}", out.getvalue(), fact


if __name__ == "__main__":
    sys.exit(main())
