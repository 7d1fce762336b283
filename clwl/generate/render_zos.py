"""IBM MQ for z/OS command output, as CSQUTIL COMMAND prints it in SYSPRINT: what ``clwl generate --qsg`` writes
for the members of its queue-sharing group (``config_HHMMSS.txt``, ``chstatus_HHMMSS.txt``), in the shape
``clwl/parse/zos.py`` documents and ``tests/fixtures/zos/`` shows:

* the CSQUTIL banner and connection lines (``CSQU000I`` ... ``CSQU121I Connected to queue manager QM01``), each
  command echoed, its response count (``CSQN205I``), its answer and ``CSQ9022I ... NORMAL COMPLETION``, the
  CSQUTIL summary at the end;
* DISPLAY QMGR answered by ``CSQM409I`` (the first attribute on the message line, one a line after it), every
  other object by a ``CSQM201I ... DISPLAY <kind> DETAILS`` block of one attribute a line closed by ``END <kind>
  DETAILS``; DISPLAY CHSTATUS names the channel ``CHSTATUS(name)`` and shows ``CHLDISP``; no channel status at
  all is ``CSQM297I ... NO CHSTATUS FOUND MATCHING REQUEST CRITERIA``;
* DISPLAY GROUP's report (``CSQ5100I``, ``CSQ5102I`` and the table of the group's queue managers) and DISPLAY
  CFSTRUCT(*) ALL's blocks.

The records are the ones ``render`` prints for runmqsc (``Rec``), with what z/OS shows instead: QSGDISP on every
queue, no attribute that only the distributed platforms have. Callers decide what the queue managers hold.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import clwl.generate.qsg as Q
from clwl.generate.estate import ACCTINT, QMGR_CLWLUSEQ, QMgr
from clwl.generate.render import Cmd, Rec, mq_date, mq_time

DISTRIBUTED_ONLY = {"SCOPE", "IMGRCOVQ", "MAXFSIZE", "STREAMQ", "STRMQOS", "CAPEXPRY"}
KIND_WORD = {"AMQ8441": "CLUSQMGR", "AMQ8417": "CHSTATUS"}
SERVER = {"QMGR": "CSQMDRTS", "CHSTATUS": "CSQXCRPS", "GROUP": "CSQ5DQSG"}


def prefix(q: QMgr) -> str:
    """The command prefix (CPF) of a z/OS queue manager."""
    return f"+{q.name}"


@dataclass(frozen=True)
class Member:
    """A line of DISPLAY GROUP's report."""

    name: str
    number: int
    version: str = "930"
    db2: str = "DB2A"
    status: str = "ACTIVE"


def qmgr_rec(q: QMgr, clusters: list[str], qsgname: str, igq: bool) -> Rec:
    """DISPLAY QMGR ALL of a z/OS queue manager (the attributes that matter here and their neighbours)."""
    alt = q.created + timedelta(days=3, minutes=17)
    if q.repos:
        repos, reposnl = (clusters[0], "") if len(clusters) == 1 else ("", "CLUSTERS.ALL")
    else:
        repos, reposnl = "", ""
    return Rec("CSQM409", [
        ("QMNAME", q.name), ("ACCTCONO", "DISABLED"), ("ACCTQ", "OFF"), ("ACTVTRC", "OFF"),
        ("ALTDATE", mq_date(alt)), ("ALTTIME", mq_time(alt)), ("CCSID", "500"), ("CHIADAPS", "8"),
        ("CHIDISPS", "5"), ("CHLEV", "DISABLED"), ("CLWLDATA", ""), ("CLWLEXIT", ""), ("CLWLLEN", "100"),
        ("CLWLMRUC", "999999999"), ("CLWLUSEQ", QMGR_CLWLUSEQ), ("CMDEV", "DISABLED"),
        ("CMDLEVEL", str(q.cmdlevel)), ("COMMANDQ", "SYSTEM.COMMAND.INPUT"), ("CPILEVEL", "100"),
        ("DEADQ", "SYSTEM.DEAD.LETTER.QUEUE"), ("DEFCLXQ", q.defclxq), ("DEFXMITQ", ""), ("DESCR", q.descr),
        ("EXPRYINT", "OFF"), ("GROUPUR", "DISABLED"), ("IGQ", "ENABLED" if igq else "DISABLED"),
        ("IGQAUT", "DEF"), ("IGQUSER", ""), ("INHIBTEV", "DISABLED"), ("IPADDRV", "IPV4"),
        ("LOCALEV", "DISABLED"), ("MAXHANDS", "256"), ("MAXMSGL", "104857600"), ("MAXPROPL", "NOLIMIT"),
        ("MAXPRTY", "9"), ("MAXUMSGS", "10000"), ("MONCHL", "OFF"), ("MONQ", "OFF"), ("PARENT", ""),
        ("PERFMEV", "DISABLED"), ("PLATFORM", "MVS"), ("PSCLUS", "ENABLED"), ("PSMODE", "ENABLED"),
        ("QMID", q.qmid), ("QSGNAME", qsgname), ("REMOTEEV", "DISABLED"), ("REPOS", repos),
        ("REPOSNL", reposnl), ("ROUTEREC", "MSG"), ("SCYCASE", "UPPER"), ("SPLCAP", "DISABLED"),
        ("SQQMNAME", "USE"), ("SSLEV", "DISABLED"), ("SSLTASKS", "0"), ("STATACLS", "QMGR"),
        ("STATCHL", "OFF"), ("STATINT", str(ACCTINT)), ("STATQ", "OFF"), ("STRSTPEV", "ENABLED"),
        ("TCPNAME", "TCPIP"), ("TRAXSTR", "YES"), ("VERSION", q.version),
    ])


def shared_xmitq_rec(q: QMgr, maxmsgl: int, created: datetime) -> Rec:
    """SYSTEM.QSG.TRANSMIT.QUEUE: shared (QSGDISP(SHARED)) in the coupling-facility structure CFSTRUCT."""
    return Rec("AMQ8409", [
        ("QUEUE", Q.QSG_XMITQ), ("TYPE", "QLOCAL"), ("QSGDISP", "SHARED"), ("ACCTQ", "QMGR"),
        ("ALTDATE", mq_date(created)), ("ALTTIME", mq_time(created)), ("BOQNAME", ""), ("BOTHRESH", "0"),
        ("CFSTRUCT", Q.QSG_STRUCTURE), ("CLCHNAME", ""), ("CLUSNL", ""), ("CLUSTER", ""), ("CLWLPRTY", "0"),
        ("CLWLRANK", "0"), ("CLWLUSEQ", "QMGR"), ("CRDATE", mq_date(created)), ("CRTIME", mq_time(created)),
        ("CURDEPTH", "0"), ("CUSTOM", ""), ("DEFBIND", "OPEN"), ("DEFPRESP", "SYNC"), ("DEFPRTY", "0"),
        ("DEFPSIST", "NO"), ("DEFREADA", "NO"), ("DEFSOPT", "SHARED"), ("DEFTYPE", "PREDEFINED"),
        ("DESCR", "IBM MQ intra-group queuing transmission queue"), ("DISTL", "NO"), ("GET", "ENABLED"),
        ("HARDENBO", None), ("INDXTYPE", "CORRELID"), ("INITQ", ""), ("IPPROCS", "1"), ("MAXDEPTH", "999999999"),
        ("MAXMSGL", str(maxmsgl)), ("MONQ", "QMGR"), ("MSGDLVSQ", "PRIORITY"), ("NOTRIGGER", None),
        ("NPMCLASS", "NORMAL"), ("OPPROCS", "1"), ("PROCESS", ""), ("PROPCTL", "COMPAT"), ("PUT", "ENABLED"),
        ("QDEPTHHI", "80"), ("QDEPTHLO", "20"), ("QDPHIEV", "DISABLED"), ("QDPLOEV", "DISABLED"),
        ("QDPMAXEV", "ENABLED"), ("QSVCIEV", "NONE"), ("QSVCINT", "999999999"), ("RETINTVL", "999999999"),
        ("SHARE", None), ("STATQ", "QMGR"), ("STGCLASS", ""), ("TRIGDATA", ""), ("TRIGDPTH", "1"),
        ("TRIGMPRI", "0"), ("TRIGTYPE", "FIRST"), ("USAGE", "XMITQ"),
    ])


def cfstruct_recs(cflevel: int, created: datetime) -> list[Rec]:
    """DISPLAY CFSTRUCT(*) ALL: the structure of the shared transmission queue at ``cflevel`` and an application
    structure at CFLEVEL(5) with SMDS offload (not the one IGQ uses), in name order."""
    def rec(name: str, level: int, descr: str) -> Rec:
        offload = Q.offload_of(level)
        a: list[tuple[str, str | None]] = [
            ("CFSTRUCT", name), ("CFLEVEL", str(level)), ("RECOVER", "YES"), ("DESCR", descr),
            ("ALTDATE", mq_date(created)), ("ALTTIME", mq_time(created)), ("RECAUTO", "YES" if level >= 5 else "NO"),
            ("CFCONLOS", "TOLERATE" if level >= 5 else "TERMINATE")]
        if level >= 4:
            a.append(("OFFLOAD", offload))
        if level >= 5:
            a += [("OFFLD1TH", "70"), ("OFFLD1SZ", "32K"), ("OFFLD2TH", "80"), ("OFFLD2SZ", "4K"),
                  ("OFFLD3TH", "90"), ("OFFLD3SZ", "0K"), ("DSGROUP", f"MQ.{name}.*"), ("DSBLOCK", "256K"),
                  ("DSBUFS", "100"), ("DSEXPAND", "YES")]
        return Rec("CFSTRUCT", a)

    recs = {Q.QSG_STRUCTURE: rec(Q.QSG_STRUCTURE, cflevel, "System application structure, shared transmission queue"),
            Q.OTHER_STRUCTURE: rec(Q.OTHER_STRUCTURE, 5, "Application queues, large messages on SMDS")}
    return [recs[n] for n in sorted(recs)]


def _zos_attrs(r: Rec) -> tuple[str, list[tuple[str, str | None]]]:
    """The block word and the attributes of a record as z/OS shows them."""
    attrs = [(k, v) for k, v in r.attrs if k not in DISTRIBUTED_ONLY]
    if r.kind == "AMQ8409":
        word = next(v for k, v in attrs if k == "TYPE") or "QUEUE"
        if not any(k == "QSGDISP" for k, _ in attrs):
            i = next(i for i, (k, _) in enumerate(attrs) if k == "TYPE") + 1
            attrs.insert(i, ("QSGDISP", "QMGR"))
        return word, attrs
    if r.kind == "AMQ8417":
        out = []
        for k, v in attrs:
            if k == "CHANNEL":
                out += [("CHSTATUS", v), ("CHLDISP", "PRIVATE")]
            else:
                out.append((k, v))
        return "CHSTATUS", out
    return KIND_WORD.get(r.kind, r.kind), attrs


def _line(k: str, v: str | None) -> str:
    if v is None:
        return k
    return f"{k}({v if v != '' else ' '})"


def _command_word(text: str) -> str:
    """'DISPLAY QLOCAL(*) ALL' -> 'QLOCAL' (what CSQ9022I quotes after DISPLAY)."""
    return text.split()[1].split("(")[0]


def render_csqutil(q: QMgr, t: datetime, cmds: list[Cmd], *, group: tuple[str, list[Member]] | None = None) -> str:
    """CSQUTIL COMMAND's SYSPRINT for ``cmds`` issued to ``q`` at ``t``. A command ``DISPLAY GROUP`` is answered
    from ``group`` (the group's name and its queue managers), any other from its records."""
    p = prefix(q)
    out = ["CSQU000I CSQUTIL IBM MQ for z/OS V9.3.0",
           f"CSQU001I CSQUTIL Queue Manager Utility - {t.strftime('%Y-%m-%d %H:%M:%S')}",
           "COMMAND DDNAME(CMDINP)",
           "CSQU127I Executing COMMAND using input from CMDINP data set",
           f"CSQU120I Connecting to {q.name}",
           f"CSQU121I Connected to queue manager {q.name}",
           f"CSQU055I Target queue manager is {q.name}"]
    for c in cmds:
        out.append(c.text)
        word = _command_word(c.text)
        if word == "GROUP" and group is not None:
            name, members = group
            out.append("CSQN205I   COUNT=       3, RETURN=00000000, REASON=00000000")
            out.append(f"CSQ5100I {p} CSQ5DQSG DISPLAY GROUP report follows ...")
            out.append(f"CSQ5102I {p} CSQ5DQSG Queue managers in group {name}")
            out.append("-" * 66)
            out.append("Name Num Prefix   Status    Ver DB2  Connection")
            out.append("---- --- -------- --------- --- ---- ----------")
            for m in members:
                out.append(f"{m.name:<4} {m.number:>3} {'+' + m.name:<8} {m.status:<9} {m.version:>3} "
                           f"{m.db2:<4} ACTIVE")
            out.append("-" * 66)
            out.append("End of queue managers report")
            out.append(f"CSQ9022I {p} CSQ5DQSG ' DISPLAY GROUP' NORMAL COMPLETION")
            continue
        server = SERVER.get(word, "CSQMDRTC")
        out.append(f"CSQN205I   COUNT={len(c.recs) + 1:>8}, RETURN=00000000, REASON=00000000")
        if not c.recs and c.empty_msg:
            out.append(f"CSQM297I  {p} {server} NO {word} FOUND MATCHING REQUEST CRITERIA")
        for r in c.recs:
            if r.kind in ("CSQM409", "AMQ8408"):
                (k0, v0), *rest = r.attrs
                out.append(f"CSQM409I  {p} {_line(k0, v0)}")
                out += [_line(k, v) for k, v in rest]
                continue
            kind, attrs = _zos_attrs(r)
            out.append(f"CSQM201I  {p} {server}  DISPLAY {kind} DETAILS")
            out += [_line(k, v) for k, v in attrs]
            out.append(f"END {kind} DETAILS")
        out.append(f"CSQ9022I  {p} {server} ' DISPLAY {word}' NORMAL COMPLETION")
    n = len(cmds)
    out += [f"CSQU057I {n} commands read", f"CSQU058I {n} commands issued and responses received, 0 failed",
            "CSQU143I 1 COMMAND statements attempted", "CSQU144I 1 COMMAND statements executed successfully",
            "CSQU148I CSQUTIL Utility completed, return code=0"]
    return "\n".join(out) + "\n"
