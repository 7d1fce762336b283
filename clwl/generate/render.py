"""Rendering in the real output formats of the MQ tools: the captures (runmqsc, MQ REST runCommandJSON) of the
queue managers' configuration and channel status. With ``render_messages`` (browses, accounting), ``render_puts``
(puts.csv, the activity trace of the puts) and ``render_zos`` (CSQUTIL), the one renderer of both ``clwl generate``
and ``samples/make_samples.py``: callers decide what the queue managers hold, these modules only print it, so the
two estates come out in the same formats. See ``samples/README.md`` for the layouts and the judgement calls
behind them."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from clwl.generate.estate import ACCTINT, DISCINT, LONGRTY, LONGTMR, QMGR_CLWLUSEQ, SHORTRTY, SHORTTMR, QMgr

MSG_TEXT = {
    "AMQ8408": "Display Queue Manager details.",
    "AMQ8409": "Display Queue details.",
    "AMQ8417": "Display Channel Status details.",
    "AMQ8420": "Channel Status not found.",
    "AMQ8441": "Display Cluster Queue Manager details.",
}
BANNER_YEAR = {"09040200": "2025", "09030000": "2022", "09000000": "2016"}


def mq_date(t: datetime) -> str:
    return t.strftime("%Y-%m-%d")


def mq_time(t: datetime) -> str:
    return t.strftime("%H.%M.%S")


@dataclass
class Rec:
    kind: str  # AMQ base id
    attrs: list[tuple[str, str | None]]


@dataclass
class Cmd:
    text: str
    recs: list[Rec] = field(default_factory=list)
    empty_msg: str = ""


def item(k: str, v: str | None) -> str:
    if v is None:
        return k
    return f"{k}({v if v != '' else ' '})"


def layout(attrs: list[tuple[str, str | None]]) -> list[str]:
    """Two attributes a line at columns 4 and 44; an item of 40 characters or more takes a line alone."""
    lines, pending = [], None
    for k, v in attrs:
        it = item(k, v)
        if pending is None:
            if len(it) >= 40:
                lines.append("   " + it)
            else:
                pending = it
        else:
            lines.append("   " + pending.ljust(40) + it)
            pending = None
    if pending is not None:
        lines.append("   " + pending)
    return lines


def render_mqsc(q: QMgr, cmds: list[Cmd]) -> str:
    out = [f"5724-H72 (C) Copyright IBM Corp. 1994, {BANNER_YEAR.get(q.version, '2025')}.",
           f"Starting MQSC for queue manager {q.name}.", "", ""]
    sev = "" if q.v90 else "I"
    for i, c in enumerate(cmds, 1):
        out.append(f"{i:6d} : {c.text}")
        if not c.recs and c.empty_msg:
            out.append(f"{c.empty_msg}{sev}: {MSG_TEXT[c.empty_msg]}")
        for r in c.recs:
            out.append(f"{r.kind}{sev}: {MSG_TEXT[r.kind]}")
            out.extend(layout(r.attrs))
    n = len(cmds)
    out.append("One MQSC command read." if n == 1 else f"{n} MQSC commands read.")
    out.append("No commands have a syntax error.")
    out.append("All valid MQSC commands were processed.")
    return "\n".join(out) + "\n"


NUMERIC = set("""ACCTINT BATCHHB BATCHINT BATCHLIM BATCHSZ BOTHRESH CCSID CLWLLEN CLWLMRUC CLWLPRTY CLWLRANK
CLWLWGHT CMDLEVEL CURDEPTH DEFPRTY DISCINT HBINT IMGINTVL IPPROCS LONGRTY LONGTMR MARKINT MAXDEPTH MAXHANDS
MAXMSGL MAXPRTY MAXUMSGS MRRTY MRTMR NETPRTY OPPROCS PSRTYCNT QDEPTHHI QDEPTHLO QSVCINT RETINTVL SEQWRAP
SHORTRTY SHORTTMR SSLRKEYC STATINT TREELIFE TRIGDPTH TRIGINT TRIGMPRI""".split())
BARE_TO_REST = {"HARDENBO": ("hardenbo", "YES"), "NOHARDENBO": ("hardenbo", "NO"), "TRIGGER": ("trigger", "YES"),
                "NOTRIGGER": ("trigger", "NO"), "SHARE": ("share", "YES"), "NOSHARE": ("share", "NO")}


def render_rest(cmds: list[Cmd]) -> str:
    """MQ REST runCommandJSON responses, one envelope a command, in a JSON array."""
    envs = []
    for c in cmds:
        items = []
        for r in c.recs:
            params: dict[str, object] = {}
            for k, v in r.attrs:
                if v is None:
                    if k in BARE_TO_REST:
                        kk, vv = BARE_TO_REST[k]
                        params[kk] = vv
                    continue
                params[k.lower()] = int(v) if k in NUMERIC and re.fullmatch(r"-?\d+", v) else v
            items.append({"completionCode": 0, "reasonCode": 0, "parameters": params})
        envs.append({"commandResponse": items, "overallCompletionCode": 0, "overallReasonCode": 0})
    return json.dumps(envs, indent=2) + "\n"


# --------------------------------------------------------------------------------------------------
# object records


def qmgr_rec(q: QMgr, clusters: list[str]) -> Rec:
    cr = q.created
    alt = cr + timedelta(days=3, minutes=17)
    if q.repos:
        repos, reposnl = (clusters[0], "") if len(clusters) == 1 else ("", "CLUSTERS.ALL")
    else:
        repos, reposnl = "", ""
    a: list[tuple[str, str | None]] = [
        ("QMNAME", q.name), ("ACCTCONO", "DISABLED"), ("ACCTINT", str(ACCTINT)), ("ACCTMQI", "OFF"),
        ("ACCTQ", "OFF"), ("ACTIVREC", "MSG"), ("ACTVCONO", "DISABLED"), ("ACTVTRC", "OFF"),
        ("ADVCAP", "ENABLED"), ("ALTDATE", mq_date(alt)), ("ALTTIME", mq_time(alt)), ("AMQPCAP", "NO"),
        ("AUTHOREV", "DISABLED"), ("CCSID", "1208"), ("CERTLABL", f"ibmwebspheremq{q.name.lower()}"),
        ("CERTVPOL", "ANY"), ("CHAD", "DISABLED"), ("CHADEV", "DISABLED"), ("CHADEXIT", ""),
        ("CHLEV", "DISABLED"), ("CHLAUTH", "ENABLED"), ("CLWLDATA", ""), ("CLWLEXIT", ""), ("CLWLLEN", "100"),
        ("CLWLMRUC", "999999999"), ("CLWLUSEQ", QMGR_CLWLUSEQ), ("CMDEV", "DISABLED"),
        ("CMDLEVEL", str(q.cmdlevel)), ("COMMANDQ", "SYSTEM.ADMIN.COMMAND.QUEUE"), ("CONFIGEV", "DISABLED"),
        ("CONNAUTH", "SYSTEM.DEFAULT.AUTHINFO.IDPWOS"), ("CRDATE", mq_date(cr)), ("CRTIME", mq_time(cr)),
        ("CUSTOM", ""), ("DEADQ", "SYSTEM.DEAD.LETTER.QUEUE"), ("DEFCLXQ", q.defclxq), ("DEFXMITQ", ""),
        ("DESCR", q.descr), ("DISTL", "YES"), ("IMGINTVL", "60"), ("IMGLOGLN", "OFF"), ("IMGRCOVO", "YES"),
        ("IMGRCOVQ", "YES"), ("IMGSCHED", "MANUAL"), ("INHIBTEV", "DISABLED"), ("INITKEY", ""),
        ("IPADDRV", "IPV4"), ("LOCALEV", "DISABLED"), ("LOGGEREV", "DISABLED"), ("MARKINT", "5000"),
        ("MAXHANDS", "256"), ("MAXMSGL", "4194304"), ("MAXPROPL", "NOLIMIT"), ("MAXPRTY", "9"),
        ("MAXUMSGS", "10000"), ("MONACLS", "QMGR"), ("MONCHL", "OFF"), ("MONQ", "OFF"), ("PARENT", ""),
        ("PERFMEV", "DISABLED"), ("PLATFORM", "UNIX"), ("PSMODE", "ENABLED"), ("PSCLUS", "ENABLED"),
        ("PSNPMSG", "DISCARD"), ("PSNPRES", "NORMAL"), ("PSRTYCNT", "5"), ("PSSYNCPT", "IFPER"),
        ("QMID", q.qmid), ("REMOTEEV", "DISABLED"), ("REPOS", repos), ("REPOSNL", reposnl),
        ("REVDNS", "ENABLED"), ("ROUTEREC", "MSG"), ("SCHINIT", "QMGR"), ("SCMDSERV", "QMGR"),
        ("SPLCAP", "DISABLED"), ("SSLCRLNL", ""), ("SSLCRYP", ""), ("SSLEV", "DISABLED"), ("SSLFIPS", "NO"),
        ("KEYRPWD", ""), ("SSLKEYR", f"/var/mqm/qmgrs/{q.name}/ssl/key"), ("SSLRKEYC", "0"),
        ("STATACLS", "QMGR"), ("STATCHL", "OFF"), ("STATINT", "1800"), ("STATMQI", "OFF"), ("STATQ", "OFF"),
        ("STRSTPEV", "ENABLED"), ("SUITEB", "NONE"), ("SYNCPT", None), ("TREELIFE", "1800"),
        ("TRIGINT", "999999999"), ("VERSION", q.version), ("XRCAP", "NO"),
    ]
    drop = set()
    if q.v90:
        drop |= {"ADVCAP", "IMGINTVL", "IMGLOGLN", "IMGRCOVO", "IMGRCOVQ", "IMGSCHED", "INITKEY", "KEYRPWD"}
    if q.version < "09040000":
        drop |= {"KEYRPWD"}
    return Rec("AMQ8408", [x for x in a if x[0] not in drop])


@dataclass(frozen=True)
class ClusqmgrState:
    """What an observer knows of a cluster queue manager's cluster receiver, beyond the two queue managers: its
    CLWLWGHT and CLWLPRTY, when it was altered and when the observer learnt it, the channel's status from the
    observer, whether the queue manager is suspended, and the transmission queue its messages go by."""

    weight: int
    prty: int
    altered: datetime
    learnt: datetime
    status: str
    suspended: bool
    xmitq: str


def clusqmgr_rec(observer: QMgr, q: QMgr, channel: str, cluster: str, state: ClusqmgrState,
                 extra: tuple[str, str] | None = None) -> Rec:
    weight, prty, altered, learnt = state.weight, state.prty, state.altered, state.learnt
    status, suspended, xmitq = state.status, state.suspended, state.xmitq
    own = observer.name == q.name
    if own:
        deftype = "CLUSRCVR"
    elif (q.name == "FR1" and not observer.repos) or {observer.name, q.name} == {"FR1", "FR2"}:
        deftype = "CLUSSDRB"  # partial repositories define a CLUSSDR to FR1; FR1 and FR2 to each other
    else:
        deftype = "CLUSSDRA"
    clus = learnt + (timedelta(0) if own else timedelta(seconds=2))
    a: list[tuple[str, str | None]] = [
        ("CLUSQMGR", q.name), ("ALTDATE", mq_date(altered)), ("ALTTIME", mq_time(altered)), ("BATCHHB", "0"),
        ("BATCHINT", "0"), ("BATCHLIM", "5000"), ("BATCHSZ", "50"), ("CHANNEL", channel),
        ("CLUSDATE", mq_date(clus)), ("CLUSTER", cluster), ("CLUSTIME", mq_time(clus)), ("CLWLPRTY", str(prty)),
        ("CLWLRANK", "0"), ("CLWLWGHT", str(weight)), ("COMPHDR", "NONE"), ("COMPMSG", "NONE"),
        ("CONNAME", q.conname), ("CONVERT", "NO"), ("DEFTYPE", deftype), ("DESCR", f"Cluster receiver for {q.name}"),
        ("DISCINT", str(DISCINT)), ("HBINT", "300"), ("KAINT", "AUTO"), ("LOCLADDR", ""),
        ("LONGRTY", str(LONGRTY)), ("LONGTMR", str(LONGTMR)), ("MAXMSGL", "4194304"), ("MCANAME", ""),
        ("MCATYPE", "THREAD"), ("MCAUSER", ""), ("MODENAME", ""), ("MRDATA", ""), ("MREXIT", ""),
        ("MRRTY", "10"), ("MRTMR", "1000"), ("MSGDATA", ""), ("MSGEXIT", ""), ("NETPRTY", "0"),
        ("NPMSPEED", "FAST"), ("PASSWORD", ""), ("PROPCTL", "COMPAT"), ("PUTAUT", "DEF"), ("QMID", q.qmid),
        ("QMTYPE", "REPOS" if q.repos else "NORMAL"), ("RCVDATA", ""), ("RCVEXIT", ""), ("SCYDATA", ""),
        ("SCYEXIT", ""), ("SENDDATA", ""), ("SENDEXIT", ""), ("SEQWRAP", "999999999"),
        ("SHORTRTY", str(SHORTRTY)), ("SHORTTMR", str(SHORTTMR)), ("SSLCAUTH", "REQUIRED"), ("SSLCIPH", ""),
        ("SSLPEER", ""), ("STATUS", "RUNNING" if own else status), ("SUSPEND", "YES" if suspended else "NO"),
        ("TPNAME", ""), ("TRPTYPE", "TCP"), ("USEDLQ", "YES"), ("USERID", ""), ("VERSION", q.version),
        ("XMITQ", "" if own else xmitq),
    ]
    if extra:
        a.insert(11, extra)
    return Rec("AMQ8441", a)


@dataclass(frozen=True)
class QclusterState:
    """What an observer knows of one instance of a cluster queue: when it was altered and learnt, whether puts
    are enabled, its CLWLPRTY, DESCR and default persistence, and its CLUSQT (QMGR: a clustered queue manager
    alias, a QREMOTE with a blank RNAME)."""

    altered: datetime
    learnt: datetime
    put: bool
    prty: int
    descr: str
    persistent: bool
    clusqt: str = "QLOCAL"


def qcluster_rec(queue: str, host: QMgr, cluster: str, state: QclusterState) -> Rec:
    altered, learnt, put, prty = state.altered, state.learnt, state.put, state.prty
    descr, persistent, clusqt = state.descr, state.persistent, state.clusqt
    clus = max(altered, learnt) + timedelta(seconds=1)
    return Rec("AMQ8409", [
        ("QUEUE", queue), ("TYPE", "QCLUSTER"), ("ALTDATE", mq_date(altered)), ("ALTTIME", mq_time(altered)),
        ("CLUSDATE", mq_date(clus)), ("CLUSNL", ""), ("CLUSQMGR", host.name), ("CLUSQT", clusqt),
        ("CLUSTER", cluster), ("CLUSTIME", mq_time(clus)), ("CLWLPRTY", str(prty)), ("CLWLRANK", "0"),
        ("CUSTOM", ""), ("DEFBIND", "NOTFIXED"), ("DEFPRESP", "SYNC"), ("DEFPRTY", "0"),
        ("DEFPSIST", "YES" if persistent else "NO"), ("DESCR", descr), ("PUT", "ENABLED" if put else "DISABLED"),
        ("QMID", host.qmid),
    ])


def qlocal_rec(q: QMgr, name: str, **o) -> Rec:
    cr = o.get("created", q.created)
    alt = o.get("altered", cr)
    a: list[tuple[str, str | None]] = [
        ("QUEUE", name), ("TYPE", "QLOCAL"), ("ACCTQ", o.get("acctq", "QMGR")), ("ALTDATE", mq_date(alt)),
        ("ALTTIME", mq_time(alt)), ("BOQNAME", o.get("boqname", "")), ("BOTHRESH", o.get("bothresh", "0")),
        ("CAPEXPRY", "NOLIMIT"), ("CLCHNAME", o.get("clchname", "")), ("CLUSNL", ""),
        ("CLUSTER", o.get("cluster", "")), ("CLWLPRTY", str(o.get("clwlprty", 0))), ("CLWLRANK", "0"),
        ("CLWLUSEQ", o.get("clwluseq", "QMGR")), ("CRDATE", mq_date(cr)), ("CRTIME", mq_time(cr)),
        ("CURDEPTH", str(o.get("curdepth", 0))), ("CUSTOM", ""), ("DEFBIND", o.get("defbind", "OPEN")),
        ("DEFPRESP", "SYNC"), ("DEFPRTY", "0"), ("DEFPSIST", o.get("defpsist", "NO")), ("DEFREADA", "NO"),
        ("DEFSOPT", "SHARED"), ("DEFTYPE", o.get("deftype", "PREDEFINED")), ("DESCR", o.get("descr", "")),
        ("DISTL", "NO"), ("GET", "ENABLED"), ("HARDENBO", None), ("IMGRCOVQ", "QMGR"), ("INITQ", ""),
        ("IPPROCS", str(o.get("ipprocs", 0))), ("MAXDEPTH", o.get("maxdepth", "5000")),
        ("MAXFSIZE", "DEFAULT"), ("MAXMSGL", "4194304"), ("MONQ", "QMGR"), ("MSGDLVSQ", "PRIORITY"),
        ("NOTRIGGER", None), ("NPMCLASS", "NORMAL"), ("OPPROCS", str(o.get("opprocs", 0))), ("PROCESS", ""),
        ("PROPCTL", "COMPAT"), ("PUT", o.get("put", "ENABLED")), ("QDEPTHHI", "80"), ("QDEPTHLO", "20"),
        ("QDPHIEV", "DISABLED"), ("QDPLOEV", "DISABLED"), ("QDPMAXEV", "ENABLED"), ("QSVCIEV", "NONE"),
        ("QSVCINT", "999999999"), ("RETINTVL", "999999999"), ("SCOPE", "QMGR"), ("SHARE", None),
        ("STATQ", "QMGR"), ("STREAMQ", ""), ("STRMQOS", "BESTEF"), ("TRIGDATA", ""), ("TRIGDPTH", "1"),
        ("TRIGMPRI", "0"), ("TRIGTYPE", "FIRST"), ("USAGE", o.get("usage", "NORMAL")),
    ]
    if q.v90:
        a = [x for x in a if x[0] not in {"CAPEXPRY", "IMGRCOVQ", "MAXFSIZE", "STREAMQ", "STRMQOS"}]
    return Rec("AMQ8409", a)


def qalias_recs(q: QMgr) -> list[Rec]:
    cr = q.created
    return [Rec("AMQ8409", [
        ("QUEUE", "SYSTEM.DEFAULT.ALIAS.QUEUE"), ("TYPE", "QALIAS"), ("ALTDATE", mq_date(cr)),
        ("ALTTIME", mq_time(cr)), ("CLUSNL", ""), ("CLUSTER", ""), ("CLWLPRTY", "0"), ("CLWLRANK", "0"),
        ("CUSTOM", ""), ("DEFBIND", "OPEN"), ("DEFPRESP", "SYNC"), ("DEFPRTY", "0"), ("DEFPSIST", "NO"),
        ("DEFREADA", "NO"), ("DESCR", ""), ("GET", "ENABLED"), ("PROPCTL", "COMPAT"), ("PUT", "ENABLED"),
        ("SCOPE", "QMGR"), ("TARGET", ""), ("TARGTYPE", "QUEUE"),
    ])]


def qremote_recs(q: QMgr, qmgr_aliases: Iterable[tuple[str, datetime, str, str, str]] = ()) -> list[Rec]:
    """The default remote queue and, in name order with it, clustered queue manager aliases
    ``QREMOTE(name) RNAME( ) RQMNAME(qmgr) CLUSTER(cluster)`` given as (name, created, cluster, qmgr, descr)."""
    defs = [("SYSTEM.DEFAULT.REMOTE.QUEUE", q.created, "", "", "OPEN", "")]
    defs += [(name, cr, cluster, rqm, "NOTFIXED", descr) for name, cr, cluster, rqm, descr in qmgr_aliases]
    return [Rec("AMQ8409", [
        ("QUEUE", name), ("TYPE", "QREMOTE"), ("ALTDATE", mq_date(cr)), ("ALTTIME", mq_time(cr)),
        ("CLUSNL", ""), ("CLUSTER", cluster), ("CLWLPRTY", "0"), ("CLWLRANK", "0"), ("CUSTOM", ""),
        ("DEFBIND", defbind), ("DEFPRESP", "SYNC"), ("DEFPRTY", "0"), ("DEFPSIST", "NO"), ("DESCR", descr),
        ("PUT", "ENABLED"), ("RNAME", ""), ("RQMNAME", rqm), ("SCOPE", "QMGR"), ("XMITQ", ""),
    ]) for name, cr, cluster, rqm, defbind, descr in sorted(defs)]


def system_qlocals(repository_depth: int) -> dict[str, dict]:
    """The SYSTEM.* local queues every queue manager shows (``qlocal_rec`` options by name); the repository
    queue holds ``repository_depth`` messages."""
    return {
        "SYSTEM.ADMIN.ACCOUNTING.QUEUE": dict(descr="IBM MQ Accounting Queue", defpsist="NO"),
        "SYSTEM.ADMIN.COMMAND.QUEUE": dict(descr="IBM MQ Administration Command Queue", ipprocs=1),
        "SYSTEM.CLUSTER.COMMAND.QUEUE": dict(descr="IBM MQ Cluster Command Queue", ipprocs=1, defpsist="YES"),
        "SYSTEM.CLUSTER.REPOSITORY.QUEUE": dict(descr="IBM MQ Cluster Repository Queue", ipprocs=1, opprocs=1,
                                                defpsist="YES", curdepth=repository_depth),
        "SYSTEM.CLUSTER.TRANSMIT.QUEUE": dict(descr="IBM MQ Cluster Transmission Queue", usage="XMITQ",
                                              defpsist="YES", maxdepth="999999999"),
        "SYSTEM.DEAD.LETTER.QUEUE": dict(descr="IBM MQ Default Dead Letter Queue", maxdepth="999999999"),
        "SYSTEM.DEFAULT.LOCAL.QUEUE": dict(),
    }


def backout_qlocal(queue: str, created: datetime) -> dict:
    """``qlocal_rec`` options of the backout queue of an application queue."""
    return dict(created=created, descr=f"Backout queue for {queue}", defpsist="YES")


def manual_xmitq_qlocal(clchname: str, created: datetime) -> dict:
    """``qlocal_rec`` options of a manually defined cluster transmission queue (CLCHNAME set)."""
    return dict(created=created, usage="XMITQ", clchname=clchname, defpsist="YES",
                descr=f"Cluster transmission queue for channels {clchname}", maxdepth="999999999")


def channel_xmitq_qlocal(created: datetime) -> dict:
    """``qlocal_rec`` options of SYSTEM.CLUSTER.TRANSMIT.<channel>, made by a DEFCLXQ(CHANNEL) queue manager."""
    return dict(created=created, deftype="PERMDYN", usage="XMITQ", defpsist="YES",
                descr="IBM MQ Cluster Transmission Queue", maxdepth="999999999")


def hexid(seed: str, n: int = 16) -> str:
    return hashlib.sha256(seed.encode()).hexdigest().upper()[:n]


def channel_ids(seed: str) -> tuple[str, str, str, int]:
    """CURLUWID, JOBNAME, LSTLUWID and the cluster sender's local port of a running channel instance."""
    return hexid(seed + "c"), hexid(seed + "j"), hexid(seed + "l"), 40000 + int(hexid(seed + "p", 4), 16) % 20000


@dataclass(frozen=True)
class ChannelTraffic:
    """What a running channel instance has moved: since when, how many messages and bytes, its last message
    (None: none yet), the sequence number it started from; a cluster sender also its transmission queue and the
    messages waiting there (XQMSGSA)."""

    start: datetime
    msgs: int
    nbytes: int
    last: datetime | None
    seqbase: int
    xmitq: str = ""
    xqmsgsa: int = 0


def chstatus_running(q: QMgr, channel: str, chltype: str, peer: QMgr, traffic: ChannelTraffic,
                     ids: tuple[str, str, str, int] | None = None) -> Rec:
    """ids: as ``channel_ids`` gives them; by default derived from the channel instance."""
    start, msgs, nbytes, last, seqbase = traffic.start, traffic.msgs, traffic.nbytes, traffic.last, traffic.seqbase
    xmitq, xqmsgsa = traffic.xmitq, traffic.xqmsgsa
    curluwid, jobname, lstluwid, port = ids or channel_ids(f"{q.name}/{channel}/{peer.name}/{start.isoformat()}")
    lastd = last or start
    sdr = chltype == "CLUSSDR"
    a: list[tuple[str, str | None]] = [
        ("CHANNEL", channel), ("CHLTYPE", chltype), ("BATCHES", str(msgs)), ("BATCHSZ", "50"),
        ("BUFSRCVD", str(msgs + 3 if sdr else 2 * msgs + 3)),
        ("BUFSSENT", str(2 * msgs + 3 if sdr else msgs + 3)),
        ("BYTSRCVD", str(msgs * 48 + 692 if sdr else nbytes + msgs * 96 + 692)),
        ("BYTSSENT", str(nbytes + msgs * 96 + 692 if sdr else msgs * 48 + 692)),
        ("CHSTADA", mq_date(start)), ("CHSTATI", mq_time(start)), ("COMPHDR", "NONE,NONE"),
        ("COMPMSG", "NONE,NONE"), ("COMPRATE", "0,0"), ("COMPTIME", "0,0"),
        ("CONNAME", peer.conname if sdr else peer.ip), ("CURLUWID", curluwid),
        ("CURMSGS", "0"), ("CURRENT", None), ("CURSEQNO", str(seqbase + msgs)), ("EXITTIME", "0,0"),
        ("HBINT", "300"), ("INDOUBT", "NO"), ("JOBNAME", jobname),
        ("LOCLADDR", f"{q.ip}({port})" if sdr else f"{q.ip}(1414)"),
    ]
    if sdr:
        a.append(("LONGRTS", str(LONGRTY)))
    a += [
        ("LSTLUWID", lstluwid), ("LSTMSGDA", mq_date(lastd)), ("LSTMSGTI", mq_time(lastd)),
        ("LSTSEQNO", str(seqbase + msgs)), ("MCASTAT", "RUNNING"), ("MONCHL", "OFF"), ("MSGS", str(msgs)),
        ("NETTIME", "0,0"), ("NPMSPEED", "FAST"), ("RQMNAME", peer.name), ("SECPROT", "NONE"),
    ]
    if sdr:
        a.append(("SHORTRTS", str(SHORTRTY)))
    a += [
        ("SSLCERTI", ""), ("SSLCIPH", ""), ("SSLKEYDA", ""), ("SSLKEYTI", ""), ("SSLPEER", ""), ("SSLRKEYS", "0"),
        ("STATUS", "RUNNING"), ("STOPREQ", "NO"), ("SUBSTATE", "MQGET" if sdr else "RECEIVE"),
        ("XBATCHSZ", "1,1"),
    ]
    if sdr:
        a += [("XMITQ", xmitq), ("XQMSGSA", str(xqmsgsa)), ("XQTIME", "0,0")]
    a += [("RVERSION", peer.version), ("RPRODUCT", "MQMM")]
    return Rec("AMQ8417", a)


def chstatus_retrying(channel: str, peer: QMgr, *, since: datetime, at: datetime, seqbase: int, xmitq: str,
                      xqmsgsa: int) -> Rec:
    tried = [r for r in retry_times(since, at)[1:] if r <= at]
    shortrts = SHORTRTY - min(len(tried), SHORTRTY)
    longrts = LONGRTY - max(0, len(tried) - SHORTRTY)
    return Rec("AMQ8417", [
        ("CHANNEL", channel), ("CHLTYPE", "CLUSSDR"), ("BATCHES", "0"), ("BATCHSZ", "50"), ("BUFSRCVD", "0"),
        ("BUFSSENT", "0"), ("BYTSRCVD", "0"), ("BYTSSENT", "0"), ("CHSTADA", mq_date(since)),
        ("CHSTATI", mq_time(since)), ("COMPHDR", "NONE,NONE"), ("COMPMSG", "NONE,NONE"),
        ("COMPRATE", "0,0"), ("COMPTIME", "0,0"), ("CONNAME", peer.conname),
        ("CURLUWID", "0000000000000000"), ("CURMSGS", "0"), ("CURRENT", None), ("CURSEQNO", str(seqbase)),
        ("EXITTIME", "0,0"), ("HBINT", "300"), ("INDOUBT", "NO"), ("JOBNAME", "0000000000000000"),
        ("LOCLADDR", ""), ("LONGRTS", str(longrts)), ("LSTLUWID", "0000000000000000"),
        ("LSTMSGDA", ""), ("LSTMSGTI", ""), ("LSTSEQNO", str(seqbase)), ("MCASTAT", "NOTRUNNING"),
        ("MONCHL", "OFF"), ("MSGS", "0"), ("NETTIME", "0,0"), ("NPMSPEED", "FAST"), ("RQMNAME", peer.name),
        ("SECPROT", "NONE"), ("SHORTRTS", str(shortrts)), ("SSLCERTI", ""), ("SSLCIPH", ""),
        ("SSLKEYDA", ""), ("SSLKEYTI", ""), ("SSLPEER", ""), ("SSLRKEYS", "0"), ("STATUS", "RETRYING"),
        ("STOPREQ", "NO"), ("SUBSTATE", ""), ("XBATCHSZ", "0,0"), ("XMITQ", xmitq),
        ("XQMSGSA", str(xqmsgsa)), ("XQTIME", "0,0"), ("RVERSION", ""), ("RPRODUCT", ""),
    ])


def retry_times(since: datetime, until: datetime) -> list[datetime]:
    """The failure, then the failed connection attempts of a cluster sender (each re-drives
    re-allocation): SHORTRTY every SHORTTMR, then every LONGTMR."""
    ts = [since + timedelta(seconds=SHORTTMR * i) for i in range(SHORTRTY + 1)]
    t = ts[-1]
    while t <= until:
        t += timedelta(seconds=LONGTMR)
        ts.append(t)
    return [x for x in ts if x <= until] or [since]
