"""Rendering in the real output formats of the MQ tools (runmqsc, MQ REST runCommandJSON, amqsbcg, dmpmqmsg,
amqsmon) and of the put records (puts.csv). The one renderer of both ``clwl generate`` and
``samples/make_samples.py``: callers decide what the queue managers hold, this module only prints it, so the
two estates come out in the same formats. See ``samples/README.md`` for the layouts and the judgement calls
behind them."""

from __future__ import annotations

import hashlib
import json
import re
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TextIO

from clwl.generate.estate import ACCTINT, DISCINT, LONGRTY, LONGTMR, QMGR_CLWLUSEQ, SHORTRTY, SHORTTMR, QMgr
from clwl.generate.trace_json import trace_object

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


def clusqmgr_rec(observer: QMgr, q: QMgr, channel: str, cluster: str, *, weight: int, prty: int,
                 altered: datetime, learnt: datetime, status: str, suspended: bool, xmitq: str,
                 extra: tuple[str, str] | None = None) -> Rec:
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


def qcluster_rec(queue: str, host: QMgr, cluster: str, *, altered: datetime, learnt: datetime, put: bool,
                 prty: int, descr: str, persistent: bool, clusqt: str = "QLOCAL") -> Rec:
    """clusqt QMGR: a clustered queue manager alias (QREMOTE with a blank RNAME)."""
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


def chstatus_running(q: QMgr, channel: str, chltype: str, peer: QMgr, *, start: datetime, msgs: int,
                     nbytes: int, last: datetime | None, seqbase: int, xmitq: str = "", xqmsgsa: int = 0,
                     ids: tuple[str, str, str, int] | None = None) -> Rec:
    """ids: as ``channel_ids`` gives them; by default derived from the channel instance."""
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


# --------------------------------------------------------------------------------------------------
# transmission queue browses


def put_date_time(t: datetime) -> tuple[str, str]:
    return t.strftime("%Y%m%d"), t.strftime("%H%M%S") + f"{t.microsecond // 10000:02d}"


def padded_json(head: str, length: int) -> bytes:
    """A JSON application message of ``length`` bytes: ``head`` opens its last string value, which dots pad
    (a head longer than that is cut)."""
    b = (head + "." * max(0, length - len(head) - 2) + '"}').encode()
    return b[:length] if len(b) > length else b


def payload(queue: str, app: str, length: int, msg_id: bytes, day: str, group_seq: int) -> bytes:
    n = int.from_bytes(msg_id[-4:], "big") & 0xFFFFFFF
    word = queue.split(".")[1].lower() if "." in queue else queue.lower()
    part = f',"part":{group_seq}' if group_seq else ""
    return padded_json(f'{{"type":"{word}","id":"{word[:1].upper()}-{day}-{n:07d}"{part},"source":"{app}","pad":"',
                       length)


def outer_md(m, app_user: str, app_name: str, appltype: int, token: bytes, sender: str, put_t: datetime) -> dict:
    pd, pt = put_date_time(put_t)
    grouped = bool(m.group_id and m.logical)
    flags = 8 | (16 if m.group_last else 0) if grouped else 0
    return dict(
        StrucId="MD  ", Version=2, Report=0, MsgType=8, Expiry=-1, Feedback=0, Encoding=546, CodedCharSetId=1208,
        Format="MQXMIT  ", Priority=0, Persistence=1 if m.persistent else 0, MsgId=m.msg_id,
        CorrelId=m.channel.ljust(24).encode()[:24], BackoutCount=0, ReplyToQ="", ReplyToQMgr=sender,
        UserIdentifier=app_user, AccountingToken=b"\0" * 32 if m.zero else token, ApplIdentityData="",
        PutApplType=appltype, PutApplName=app_name, PutDate=pd, PutTime=pt, ApplOriginData="",
        GroupId=m.group_id if grouped else b"\0" * 24,
        MsgSeqNumber=m.group_seq if grouped else 1, Offset=0, MsgFlags=flags, OriginalLength=-1,
    )


def xmit_data(m, app_user: str, app_name: str, appltype: int, token: bytes, sender: str, put_t: datetime,
              data: bytes) -> bytes:
    """MQXQH (with the original MQMD v1), an MQMDE for a managed group, then the application data."""
    pd, pt = put_date_time(put_t)
    grouped = bool(m.group_id and m.logical)
    md1 = (b"MD  " + struct.pack("<7i", 1, 0, 8, -1, 0, 546, 1208)
           + (b"MQHMDE  " if grouped else b"MQSTR   ") + struct.pack("<2i", 0, 1 if m.persistent else 0)
           + m.msg_id + b"\0" * 24 + struct.pack("<i", 0) + b" " * 48 + sender.ljust(48).encode()
           + app_user.ljust(12).encode()[:12] + token + b" " * 32 + struct.pack("<i", appltype)
           + app_name.ljust(28).encode()[:28] + pd.encode() + pt.encode() + b"    ")
    assert len(md1) == 324
    rqm = m.target or m.dest
    xqh = b"XQH " + struct.pack("<i", 1) + m.queue.ljust(48).encode() + rqm.ljust(48).encode() + md1
    mde = b""
    if grouped:
        mde = (b"MDE " + struct.pack("<4i", 2, 72, 546, 1208) + b"MQSTR   " + struct.pack("<i", 0) + m.group_id
               + struct.pack("<4i", m.group_seq, 0, 8 | (16 if m.group_last else 0), -1))
    return xqh + mde + data


MBCSMAX = 6


def render_amqsbcg(queue: str, msgs: list[tuple[dict, bytes]]) -> str:
    """Output of amqsbcg (MQ 9.4 sample) browsing ``queue``, as ``samples/`` reproduces it."""
    w = ["\nAMQSBCG0 - starts here\n", "**********************\n ", f"\n MQOPEN - '{queue}'", "\n "]
    page_first = True
    lines_printed = 0
    for j, (md, data) in enumerate(msgs, 1):
        if page_first:
            lines_printed, page_first = 29, False
        else:
            w.append("\n ")
            lines_printed = 22
        w.append("\n ")
        w.append(f"\n MQGET of message number {j}, CompCode:0 Reason:0")
        w.append(print_md(md))
        w.append("\n ")
        w.append("\n****   Message      ****\n ")
        w.append(f"\n length - {len(data)} of {len(data)} bytes\n ")
        pad = " " * ((MBCSMAX - 1) * 2)
        for ch in range(0, len(data), 16):
            chunk = data[ch:ch + 16]
            hexpart = "".join((" " if n % 2 == 0 else "") + f"{b:02X}" for n, b in enumerate(chunk))
            for n in range(len(chunk), 16):
                hexpart += (" " if n % 2 == 0 else "") + "  "
            text = "".join(chr(b) if 0x20 <= b < 0x7F else "." for b in chunk).ljust(16)
            w.append(f"\n{ch:08X}: {hexpart}{pad} '{text}'")
            lines_printed += 1
            if lines_printed >= 60:
                lines_printed = 0
                w.append("\n ")
    if not page_first:
        w.append("\n ")
    w.append("\n \n \n No more messages ")
    if msgs:
        lens = [len(d) for _, d in msgs]
        w.append(f"\n\n****   Summary      ****\n {len(msgs)} messages browsed.\n Smallest message {min(lens)} "
                 f"bytes.\n Largest message {max(lens)} bytes.\n Average message {sum(lens) // len(lens)} bytes.\n")
    w.append("\n MQCLOSE")
    w.append("\n MQDISC")
    w.append("\n")
    return "".join(w)


def print_md(md: dict) -> str:
    def s(v, n):
        return (v if isinstance(v, str) else v.decode()).ljust(n)[:n]

    return "".join([
        "\n****Message descriptor****\n",
        f"\n  StrucId  : '{md['StrucId']}'", f"  Version : {md['Version']}",
        f"\n  Report   : {md['Report']}", f"  MsgType : {md['MsgType']}",
        f"\n  Expiry   : {md['Expiry']}", f"  Feedback : {md['Feedback']}",
        f"\n  Encoding : {md['Encoding']}", f"  CodedCharSetId : {md['CodedCharSetId']}",
        f"\n  Format : '{s(md['Format'], 8)}'",
        f"\n  Priority : {md['Priority']}", f"  Persistence : {md['Persistence']}",
        f"\n  MsgId : X'{md['MsgId'].hex().upper()}'",
        f"\n  CorrelId : X'{md['CorrelId'].hex().upper()}'",
        f"\n  BackoutCount : {md['BackoutCount']}",
        f"\n  ReplyToQ       : '{s(md['ReplyToQ'], 48)}'",
        f"\n  ReplyToQMgr    : '{s(md['ReplyToQMgr'], 48)}'",
        "\n  ** Identity Context",
        f"\n  UserIdentifier : '{s(md['UserIdentifier'], 12)}'",
        f"\n  AccountingToken : \n   X'{md['AccountingToken'].hex().upper()}'",
        f"\n  ApplIdentityData : '{s(md['ApplIdentityData'], 32)}'",
        "\n  ** Origin Context",
        f"\n  PutApplType    : '{md['PutApplType']}'",
        f"\n  PutApplName    : '{s(md['PutApplName'], 28)}'",
        f"\n  PutDate  : '{md['PutDate']}'", f"    PutTime  : '{md['PutTime']}'",
        f"\n  ApplOriginData : '{s(md['ApplOriginData'], 4)}'\n",
        f"\n  GroupId : X'{md['GroupId'].hex().upper()}'",
        f"\n  MsgSeqNumber   : '{md['MsgSeqNumber']}'",
        f"\n  Offset         : '{md['Offset']}'",
        f"\n  MsgFlags       : '{md['MsgFlags']}'",
        f"\n  OriginalLength : '{md['OriginalLength']}'",
    ])


DMP_CODES = [("VER", "Version"), ("RPT", "Report"), ("MST", "MsgType"), ("EXP", "Expiry"), ("FDB", "Feedback"),
             ("ENC", "Encoding"), ("CCS", "CodedCharSetId"), ("FMT", "Format"), ("PRI", "Priority"),
             ("PER", "Persistence"), ("MSI", "MsgId"), ("COI", "CorrelId"), ("BOC", "BackoutCount"),
             ("RTQ", "ReplyToQ"), ("RTM", "ReplyToQMgr"), ("USR", "UserIdentifier"), ("ACC", "AccountingToken"),
             ("AIX", "ApplIdentityData"), ("PAT", "PutApplType"), ("PAN", "PutApplName"), ("PTD", "PutDate"),
             ("PTT", "PutTime"), ("AOX", "ApplOriginData"), ("GRP", "GroupId"), ("MSQ", "MsgSeqNumber"),
             ("OFF", "Offset"), ("MSF", "MsgFlags"), ("ORL", "OriginalLength")]


def render_dmpmqmsg(qm: str, queue: str, at: datetime, msgs: list[tuple[dict, bytes]]) -> str:
    out = [f"* Dumper Version:9.4.2.0 Created:{at.strftime('%a %b %d %H:%M:%S %Y')}",
           f"* Qmgr  = {qm}", f"* Queue = {queue}", ""]
    for md, data in msgs:
        out.append("N")
        for code, f in DMP_CODES:
            v = md[f]
            if isinstance(v, bytes):
                v = v.hex().upper()
            v = str(v).rstrip()
            out.append(f"A {code} {v}" if v else f"A {code}")
        for i in range(0, len(data), 32):
            out.append("X " + data[i:i + 32].hex().upper())
        out.append("")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------------------
# amqsmon


class Named(str):
    """An integer field amqsmon prints by its constant's name (QueueType: Local), without quotes."""


def render_amqsmon(records: list[list[tuple[int, str, object]]]) -> str:
    out = []
    for rec in records:
        out.append("MonitoringType: QueueAccounting")
        for indent, k, v in rec:
            pad = " " * indent
            if isinstance(v, list):
                out.append(f"{pad}{k}: [{', '.join(str(x) for x in v)}]")
            elif isinstance(v, bytes):
                out.append(f"{pad}{k}: x'{v.hex()}'")
            elif isinstance(v, Named):
                out.append(f"{pad}{k}: {v}")
            elif isinstance(v, str):
                out.append(f"{pad}{k}: '{v}'")
            else:
                out.append(f"{pad}{k}: {v}")
        out.append("")
    return "\n".join(out) + "\n"


def accounting_head(qm: QMgr, start: datetime, end: datetime, connection_id: bytes, seq: int, appl_name: str,
                    pid: int, tid: int, user: str, objects: int) -> list[tuple[int, str, object]]:
    """The fields of a QueueAccounting record before its QueueAccounting groups (``queue_group``)."""
    return [
        (0, "QueueManager", qm.name), (0, "IntervalStartDate", mq_date(start)),
        (0, "IntervalStartTime", mq_time(start)), (0, "IntervalEndDate", mq_date(end)),
        (0, "IntervalEndTime", mq_time(end)), (0, "CommandLevel", qm.cmdlevel),
        (0, "ConnectionId", connection_id), (0, "SeqNumber", seq), (0, "ApplicationName", appl_name),
        (0, "ApplicationPid", pid), (0, "ApplicationTid", tid), (0, "UserId", user), (0, "ObjectCount", objects),
    ]


def queue_group(gi: int, queue: str, created: datetime, first_open: bool, opened: datetime,
                c: list[int]) -> list[tuple[int, str, object]]:
    """One QueueAccounting group; c = [n np, n p, bytes np, bytes p, min np, max np, min p, max p]."""
    return [(0, "QueueAccounting", gi)] + [(2, k, v) for k, v in [
        ("QueueName", queue), ("CreateDate", mq_date(created)), ("CreateTime", mq_time(created)),
        ("QueueType", Named("Local")), ("QueueDefinitionType", Named("Predefined")),
        ("OpenCount", 1 if first_open else 0), ("OpenDate", mq_date(opened)), ("OpenTime", mq_time(opened)),
        ("PutCount", [c[0], c[1]]), ("PutFailCount", 0), ("Put1Count", [0, 0]),
        ("Put1FailCount", 0), ("PutBytes", [c[2], c[3]]),
        ("PutMinBytes", [c[4], c[6]]), ("PutMaxBytes", [c[5], c[7]]),
        ("GeneratedMsgCount", 0), ("GetCount", [0, 0]), ("GetFailCount", 0), ("GetBytes", [0, 0]),
        ("GetMinBytes", [0, 0]), ("GetMaxBytes", [0, 0]), ("BrowseCount", [0, 0]),
        ("BrowseFailCount", 0), ("BrowseBytes", [0, 0]), ("BrowseMinBytes", [0, 0]),
        ("BrowseMaxBytes", [0, 0]), ("TimeOnQMin", [0, 0]), ("TimeOnQAvg", [0, 0]),
        ("TimeOnQMax", [0, 0]), ("CbCount", 0), ("CbFailCount", 0)]]


# --------------------------------------------------------------------------------------------------
# put records

PUTS_CSV_COLUMNS = ("put_time", "sending_qmgr", "queue", "target_qmgr", "bind", "open_handle", "group_id",
                    "logical_order", "from_cluster_channel", "pcf", "length", "persistent", "accounting_token",
                    "msg_id", "observed_qmgr", "observed_channel", "observed_xmitq")
PUTS_CSV_HEADER = ",".join(PUTS_CSV_COLUMNS) + "\n"


def render_puts_csv(rows: list[list[str]]) -> str:
    """puts.csv: the header, then one line a row. No field holds a comma, quote or line break (names, hex,
    numbers, true/false), so nothing is quoted: the same bytes as a csv writer's."""
    return PUTS_CSV_HEADER + "".join(",".join(r) + "\n" for r in rows)


#: puts.csv with the optional application column (clwl.parse.put_record.PUT_COLUMNS), last.
PUTS_CSV_APPLICATION_HEADER = PUTS_CSV_HEADER[:-1] + ",application\n"
_HANDLE_AT = PUTS_CSV_COLUMNS.index("open_handle")


class ApplicationColumnWriter:
    """A puts.csv written with the optional ``application`` column: what the simulation writes (the header, then
    whole rows), each row given the application its open handle names (``application:pid:handle``), so that
    an estate has put files with the column and without it. Closing is the wrapped file's owner's."""

    def __init__(self, out: TextIO):
        self.out = out
        self.names: dict[str, str] = {}  # open handle -> application

    def write(self, text: str) -> None:
        if text == PUTS_CSV_HEADER:
            self.out.write(PUTS_CSV_APPLICATION_HEADER)
            return
        names = self.names
        rows = []
        for line in text.splitlines():  # whole rows; no field holds a line break
            handle = line.split(",", _HANDLE_AT + 1)[_HANDLE_AT]
            name = names.get(handle)
            if name is None:
                name = names[handle] = handle.split(":", 1)[0]
            rows.append(f"{line},{name}\n")
        self.out.write("".join(rows))


# --------------------------------------------------------------------------------------------------
# application activity trace, as IBM's sample amqsact prints it (-v): docs/activity-trace.md

TRACE_SEPARATOR = "=" * 77
MQXF = {"MQCONNX": "MQXF_CONNX", "MQOPEN": "MQXF_OPEN", "MQPUT": "MQXF_PUT", "MQCLOSE": "MQXF_CLOSE",
        "MQDISC": "MQXF_DISC"}
APPL_TYPES = {6: "MQAT_UNIX", 28: "MQAT_JAVA"}
# MQOO_OUTPUT | MQOO_FAIL_IF_QUIESCING, and the bind (cmqc.h); MQPMO_NO_SYNCPOINT | NEW_MSG_ID | FAIL_IF_QUIESCING
OPEN_OPTIONS = {"notfixed": 0x10 | 0x2000 | 0x8000, "open": 0x10 | 0x2000 | 0x4000,
                "group": 0x10 | 0x2000 | 0x400000}
PUT_OPTIONS = 0x4 | 0x40 | 0x2000
MQPMO_LOGICAL_ORDER = 0x8000
MQMF_MSG_IN_GROUP = 0x08
MQMF_LAST_MSG_IN_GROUP = 0x10


class Const(str):
    """A field amqsact prints by its constant's name or as a number: no quotes (MQCC_OK, MQOT_Q)."""


_PRINTABLE = bytes(b if 0x20 <= b < 0x7F else 0x2E for b in range(256))  # anything else prints as '.'


def hex_dump(data: bytes, indent: str = "") -> list[str]:
    """amqsact's dump of a byte string: offset, 16 bytes a line in groups of two, the printable column."""
    return [f"{indent}{at:08X}:  {data[at:at + 16].hex(' ', -2).upper():<39}  "
            f"'{data[at:at + 16].translate(_PRINTABLE).decode('ascii'):<16}'" for at in range(0, len(data), 16)]


def trace_fields(fields: Iterable[tuple[str, object]], indent: str) -> list[str]:
    """``Label: value`` lines: str quoted with its trailing blanks cut, int and Const bare, bytes as a dump."""
    out = []
    for label, v in fields:
        if isinstance(v, bytes):
            out.append(f"{indent}{label}:")
            out += hex_dump(v, indent)
        elif isinstance(v, Const) or not isinstance(v, str):
            out.append(f"{indent}{label}: {v}")
        else:
            out.append(f"{indent}{label}: '{v.rstrip()}'")
    return out


def trace_header_fields(correl_id: bytes, qm: QMgr, start: datetime, end: datetime, seq: int, appl: str,
                        appltype: str, pid: int, user: str, level: int, *, caller: str = "MQXACT_EXTERNAL",
                        environment: str = "MQXE_OTHER",
                        channel: tuple[str, str, str] | None = None) -> list[tuple[str, object]]:
    """The header of one trace message: a local bindings application, or a channel agent (``channel``: its name,
    ConnName and type)."""
    fields = [
        ("Correl_id", correl_id), ("QueueManager", qm.name), ("Host Name", qm.host),
        ("IntervalStartDate", mq_date(start)), ("IntervalStartTime", start.strftime("%H:%M:%S")),
        ("IntervalEndDate", mq_date(end)), ("IntervalEndTime", end.strftime("%H:%M:%S")),
        ("CommandLevel", qm.cmdlevel), ("SeqNumber", seq), ("ApplicationName", appl),
        ("Application Type", Const(appltype)), ("ApplicationPid", pid),
        ("UserId", user), ("API Caller Type", Const(caller)), ("API Environment", Const(environment)),
        ("Application Function", ""), ("Appl Function Type", Const("MQFUN_TYPE_UNKNOWN")),
        ("Trace Detail Level", level), ("Trace Data Length", 0), ("Pointer size", 8),
        ("Platform", Const("MQPL_UNIX")),
    ]
    if channel is not None:
        fields += [("Channel Name", channel[0]), ("ConnName", channel[1]), ("Channel Type", Const(channel[2]))]
    return fields


def trace_header(correl_id: bytes, qm: QMgr, start: datetime, end: datetime, seq: int, appl: str, appltype: int,
                 pid: int, user: str, level: int) -> list[str]:
    """The header block of one trace message (a local bindings application)."""
    return ["MonitoringType: MQI Activity Trace"] + trace_fields(trace_header_fields(
        correl_id, qm, start, end, seq, appl, APPL_TYPES.get(appltype, str(appltype)), pid, user, level), "")


def trace_message_text(header: list[tuple[str, object]], operations: list[list[tuple[str, object]]]) -> str:
    """One trace message as ``amqsact -v`` prints it."""
    lines = ["MonitoringType: MQI Activity Trace"] + trace_fields(header, "")
    for n, fields in enumerate(operations):
        lines += trace_operation(n, fields)
    lines += [TRACE_SEPARATOR, ""]
    return "\n".join(lines) + "\n"


def trace_operation(n: int, fields: Iterable[tuple[str, object]]) -> list[str]:
    return [f"MQI Operation: {n}"] + trace_fields(fields, "  ")


def _call(op: str, tid: int, t: datetime) -> list[tuple[str, object]]:
    iso = t.isoformat()  # one call for both (the generator prints millions)
    return [("Operation Id", Const(MQXF[op])), ("ApplicationTid", tid), ("OperationDate", iso[:10]),
            ("OperationTime", iso[11:19])]


_OK = [("Completion Code", Const("MQCC_OK")), ("Reason Code", 0)]


def _resolved(queue: str, dest: str | None, xmitq: str | None, sender: str) -> list[tuple[str, object]]:
    """Resolved names at MEDIUM: the local fields only for another queue manager (the transmission queue)."""
    if dest is None:
        return []
    out: list[tuple[str, object]] = [("Resolved_Q_Name", queue), ("Resolved_Q_mgr", dest)]
    if dest != sender and xmitq:
        out += [("Resolved_local_Q_name", xmitq), ("Resolved_local_Q_mgr", sender)]
    return out


def trace_connx(tid: int, t: datetime) -> list[tuple[str, object]]:
    return _call("MQCONNX", tid, t) + _OK + [("Connect Options", 0)]


def trace_open(tid: int, t: datetime, high_res: int, queue: str, target: str, hobj: int, options: int,
               dest: str | None, xmitq: str | None, sender: str) -> list[tuple[str, object]]:
    """dest: the queue manager the handle is bound to (bind on open), else None (resolved per put)."""
    return (_call("MQOPEN", tid, t) + [("Object_type", Const("MQOT_Q")), ("Object_name", queue),
                                       ("Object_Q_mgr_name", target), ("Hobj", hobj)] + _OK
            + [("Open_options", options), ("Known_dest_count", 0), ("Unknown_dest_count", 0),
               ("Invalid_dest_count", 0), ("High Res Time", high_res)]
            + _resolved(queue, dest, xmitq, sender)
            + [("Resolved_type", Const("MQOT_Q")), ("QMgr Operation Duration", 120)])


def trace_close(tid: int, t: datetime, hobj: int) -> list[tuple[str, object]]:
    return _call("MQCLOSE", tid, t) + [("Hobj", hobj)] + _OK + [("Close Options", 0)]


def trace_disc(tid: int, t: datetime) -> list[tuple[str, object]]:
    return _call("MQDISC", tid, t) + _OK


def mqmd_v2(*, persistent: bool, msg_id: bytes, reply_qmgr: str, user: str, token: bytes, appltype: int,
            appl: str, put_t: datetime, group_id: bytes, group_seq: int, msg_flags: int) -> bytes:
    """An MQMD version 2 (364 bytes, little-endian) as the put left it."""
    pd, pt = put_date_time(put_t)
    md = (b"MD  " + struct.pack("<7i", 2, 0, 8, -1, 0, 546, 1208) + b"MQSTR   "
          + struct.pack("<2i", 0, 1 if persistent else 0) + msg_id + b"\0" * 24 + struct.pack("<i", 0)
          + b" " * 48 + reply_qmgr.ljust(48).encode() + user.ljust(12).encode()[:12] + token + b" " * 32
          + struct.pack("<i", appltype) + appl.ljust(28).encode()[:28] + pd.encode() + pt.encode() + b"    "
          + group_id + struct.pack("<4i", group_seq, 0, msg_flags, -1))
    assert len(md) == 364
    return md


def mqpmo_v1(options: int, known: int, unknown: int, resolved_q: str, resolved_qmgr: str) -> bytes:
    """An MQPMO version 1 (128 bytes) after the put: ResolvedQName and ResolvedQMgrName are output fields."""
    return (b"PMO " + struct.pack("<7i", 1, options, -1, 0, known, unknown, 0) + resolved_q.ljust(48).encode()
            + resolved_qmgr.ljust(48).encode())


def trace_put(tid: int, t: datetime, high_res: int, hobj: int, options: int, length: int, queue: str,
              dest: str, xmitq: str | None, sender: str, persistent: bool, msg_id: bytes,
              high: dict | None = None) -> list[tuple[str, object]]:
    """An MQPUT at MEDIUM; ``high`` (the ``mqmd_v2`` arguments but those given here) adds HIGH's dumps."""
    remote = dest != sender
    pd, pt = put_date_time(t)
    f = (_call("MQPUT", tid, t) + [("Hobj", hobj), ("Put Options", options)] + _OK
         + [("Msg length", length), ("Known_dest_count", 0 if remote else 1), ("Unknown_dest_count", 1 if remote else 0),
            ("Invalid_dest_count", 0), ("High Res Time", high_res), ("Object_name", queue)]
         + _resolved(queue, dest, xmitq, sender)
         + [("Report Options", 0), ("Msg_type", Const("MQMT_DATAGRAM")), ("Expiry", -1), ("Format_name", "MQSTR"),
            ("Priority", 0), ("Persistence", 1 if persistent else 0), ("Msg_id", msg_id), ("Correl_id", b"\0" * 24),
            ("Reply_to_Q ", ""), ("Reply_to_Q_Mgr", sender), ("Coded_char_set_id", 1208), ("Encoding", 546),
            ("Put_date", pd), ("Put_time", pt), ("Resolved_type", Const("MQOT_Q")), ("QMgr Operation Duration", 41)])
    if high is not None:
        f.append(("MQMD Structure", mqmd_v2(persistent=persistent, msg_id=msg_id, reply_qmgr=sender, put_t=t, **high)))
        f.append(("MQPMO Structure", mqpmo_v1(options, 0 if remote else 1, 1 if remote else 0, queue, dest)))
    return f


@dataclass(frozen=True)
class TraceApp:
    """An application as its trace shows it; level: its mqat.ini TRACE= (2 MEDIUM, 3 HIGH)."""

    name: str
    user: str
    appltype: int
    token: bytes
    level: int


class _TraceConnection:
    __slots__ = ("app", "pid", "correl_id", "seq", "ops", "first_us", "handles", "puts")

    def __init__(self, app: TraceApp, pid: int, correl_id: bytes):
        self.app, self.pid, self.correl_id = app, pid, correl_id
        self.seq = 0
        self.ops: list[tuple[int, list[tuple[str, object]]]] = []  # (microseconds, fields) not yet printed
        self.first_us = 0
        self.handles: dict[tuple[str, str, str, str], int] = {}  # (handle, queue, target, bind) -> Hobj
        self.puts = 0


_EPOCH_DAY = datetime(1970, 1, 1)


class AmqsactPutsWriter:
    """One sending queue manager's puts of one day printed as ``amqsact -v`` output.

    ``write`` takes the puts.csv text the simulation writes (its header, then whole rows in put order), so
    both formats print the same rows. Per application connection (application name and process id of the
    row's open_handle): an MQCONNX, an MQOPEN before the first put of each handle (open options from the
    bind, the named queue manager), the MQPUTs with the destination the simulation chose as Resolved_Q_mgr
    and its transmission queue as Resolved_local_Q_name, at the end of the day an MQCLOSE per handle and
    the MQDISC. Calls alternate between two threads. A connection's calls are split into trace messages
    (SeqNumber 0, 1, ...) every ``activity_count`` calls or when its oldest unprinted call is
    ``activity_interval`` seconds old, as mqat.ini ActivityCount / ActivityInterval do; messages of
    different connections interleave in the file. Times are UTC (High Res Time exact to the row's
    millisecond; every call a microsecond after the one before).

    ``inject``: indexes of data rows whose traced destination is ``wrong_destination(queue, dest)``
    (queue manager, transmission queue or None) instead of the simulation's; ``injected`` lists them.
    The simulation fills ``handle_ends`` (2 x row: handles closed before that row's put, 2 x row + 1:
    after it), so a bound handle is closed when the application is done with it, and ``group_last`` (rows
    that are the last message of their group: MQMF_LAST_MSG_IN_GROUP). A closed Hobj is reused, as MQ does.
    """

    def __init__(self, out, qm: QMgr, day, apps: dict[str, TraceApp], *, inject: Iterable[int] = (),
                 wrong_destination=None, activity_count: int = 100, activity_interval: int = 60,
                 json_lines: bool = False):
        self.out, self.qm, self.day = out, qm, day
        self.json = json_lines  # amqsevt -o json_compact instead of amqsact -v
        self.apps = apps
        self.inject = set(inject)
        self.wrong_destination = wrong_destination
        self.activity_count = max(1, activity_count)
        self.activity_interval_us = activity_interval * 1_000_000
        self.day_us = (datetime(day.year, day.month, day.day) - _EPOCH_DAY) // timedelta(microseconds=1)
        self.day_prefix = day.isoformat()
        self.conns: dict[tuple[str, int], _TraceConnection] = {}
        self.group_seq: dict[str, int] = {}
        self.last_us = 0
        self.rows = 0
        self.records = 0
        self.injected: list[dict] = []
        self.header_seen = False
        self.handle_ends: dict[int, list[str]] = {}
        self.group_last: set[int] = set()
        # msg_id -> (queue manager, transmission queue) MQ chose at the put, for a message the simulation
        # re-allocated later: the puts.csv row shows where it arrived, the traced MQPUT where it was sent.
        self.at_put: dict[str, tuple[str, str | None]] = {}

    def write(self, text: str) -> None:
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        for line in lines:
            if not self.header_seen:
                self.header_seen = True
                if line + "\n" == PUTS_CSV_HEADER:
                    continue
            self.put(line.split(","))

    def _clock(self, us: int) -> tuple[int, datetime]:
        us = max(us, self.last_us + 1)
        self.last_us = us
        return us, _EPOCH_DAY + timedelta(microseconds=us)

    def _op(self, conn: _TraceConnection, us: int, fields: list[tuple[str, object]]) -> None:
        if not conn.ops:
            conn.first_us = us
        conn.ops.append((us, fields))
        if len(conn.ops) >= self.activity_count:
            self._flush(conn)

    def put(self, f: list[str]) -> None:
        (put_time, sender, queue, target, bind, handle, group_id, logical, _chl, _pcf, length, persistent, token,
         msg_id, dest, _channel, xmitq) = f
        row = self.rows
        self.rows += 1
        if self.handle_ends:
            self._close_handles(self.handle_ends.pop(2 * row, ()))
        ms = (int(put_time[11:13]) * 3600 + int(put_time[14:16]) * 60 + int(put_time[17:19])) * 1000 \
            + int(put_time[20:23])
        us, t = self._clock(self.day_us + ms * 1000)
        for c in self.conns.values():  # ActivityInterval: a connection's calls wait no longer than this
            if c.ops and us - c.first_us >= self.activity_interval_us:
                self._flush(c)
        name, pid, _ = handle.rsplit(":", 2)
        key = (name, int(pid))
        conn = self.conns.get(key)
        if conn is None:
            h = hashlib.sha256(f"{sender}/{self.day_prefix}/{name}/{pid}".encode()).digest()[:8]
            conn = self.conns[key] = _TraceConnection(self.apps[name], int(pid),
                                                      b"AMQC" + sender.ljust(12).encode()[:12] + h)
            self._op(conn, us, trace_connx(1, t))
            us, t = self._clock(us)
        tid = 1 + conn.puts % 2  # two threads of the application share its handles
        conn.puts += 1
        xq = xmitq or None
        if msg_id in self.at_put:  # re-allocated after the put: the trace records the put-time choice
            dest, xq = self.at_put.pop(msg_id)
        hkey = (handle, queue, target, bind)
        hobj = conn.handles.get(hkey)
        if hobj is None:
            used = set(conn.handles.values())
            hobj = next(h for h in range(1, len(used) + 2) if h not in used)  # the lowest free, as MQ reuses them
            conn.handles[hkey] = hobj
            bound = bind == "open"
            self._op(conn, us, trace_open(tid, t, us, queue, target, hobj, OPEN_OPTIONS[bind],
                                          dest if bound else None, xq if bound else None, sender))
            us, t = self._clock(us)
        traced, traced_xq = dest, xq
        if row in self.inject and self.wrong_destination is not None:
            traced, traced_xq = self.wrong_destination(queue, dest)
            self.injected.append({"msg_id": msg_id, "queue": queue, "put_time": put_time,
                                  "simulated_qmgr": dest, "simulated_xmitq": xq,
                                  "traced_qmgr": traced, "traced_xmitq": traced_xq})
        options = PUT_OPTIONS | (MQPMO_LOGICAL_ORDER if logical == "true" else 0)
        high = None
        if conn.app.level >= 3:
            gid = bytes.fromhex(group_id) if group_id else b"\0" * 24
            seq = 1
            if group_id:
                seq = self.group_seq[group_id] = self.group_seq.get(group_id, 0) + 1
            high = dict(user=conn.app.user, token=bytes.fromhex(token), appltype=conn.app.appltype,
                        appl=conn.app.name, group_id=gid, group_seq=seq,
                        msg_flags=(MQMF_MSG_IN_GROUP | (MQMF_LAST_MSG_IN_GROUP if row in self.group_last else 0)
                                   if group_id else 0))
        self.group_last.discard(row)
        self._op(conn, us, trace_put(tid, t, us, hobj, options, int(length), queue, traced, traced_xq, sender,
                                     persistent == "true", bytes.fromhex(msg_id), high))
        if self.handle_ends:
            self._close_handles(self.handle_ends.pop(2 * row + 1, ()))

    def _close_handles(self, handles: Iterable[str]) -> None:
        for handle in handles:
            name, pid, _ = handle.rsplit(":", 2)
            conn = self.conns.get((name, int(pid)))
            if conn is None:
                continue
            for hkey in [k for k in conn.handles if k[0] == handle]:
                us, t = self._clock(self.last_us)
                self._op(conn, us, trace_close(1 + conn.puts % 2, t, conn.handles.pop(hkey)))

    def _flush(self, conn: _TraceConnection) -> None:
        if not conn.ops:
            return
        start = _EPOCH_DAY + timedelta(microseconds=conn.ops[0][0])
        end = _EPOCH_DAY + timedelta(microseconds=conn.ops[-1][0])
        app = conn.app
        header = trace_header_fields(conn.correl_id, self.qm, start, end, conn.seq, app.name,
                                     APPL_TYPES.get(app.appltype, str(app.appltype)), conn.pid, app.user, app.level)
        operations = [fields for _, fields in conn.ops]
        if self.json:
            self.out.write(trace_object(header, operations, end))
        else:
            self.out.write(trace_message_text(header, operations))
        self.records += 1
        conn.seq += 1
        conn.ops = []

    def close(self) -> None:
        """The end of the day: every handle closed, every connection ended, the rest printed."""
        for conn in self.conns.values():
            for hobj in sorted(conn.handles.values()):
                us, t = self._clock(self.last_us)
                self._op(conn, us, trace_close(1, t, hobj))
            us, t = self._clock(self.last_us)
            self._op(conn, us, trace_disc(1, t))
            self._flush(conn)
        if not self.json:  # amqsact's last line; amqsevt prints none
            self.out.write(f"{self.records} Records Processed.\n")
