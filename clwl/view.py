"""Build the sending queue manager's ClusterView from parsed runmqsc / REST records."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional

from clwl.model import (
    ClusterChannel,
    ClusterView,
    IGQ_DEFAULT_MAX_MESSAGE,
    LocalAlias,
    LocalQueue,
    QmgrAttributes,
    QueueInstance,
    RemoteDefinition,
)
from clwl.parse.common import InputError, MqscRecord, ParsedCapture, ParseProblem


@dataclass
class Captures:
    """Everything read from one queue manager's capture files."""

    records: list[MqscRecord] = field(default_factory=list)
    problems: list[ParseProblem] = field(default_factory=list)
    banner_qmgrs: dict[str, str] = field(default_factory=dict)  # file -> banner queue manager name
    files: list[str] = field(default_factory=list)


def _looks_like_json(path: Path) -> bool:
    import codecs

    with open(path, "rb") as fh:
        head = fh.read(256)
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):  # saved as UTF-16 (Windows PowerShell)
        head = head.decode("utf-16", "ignore").encode("utf-8", "ignore")
    elif head.startswith(codecs.BOM_UTF8):
        head = head[3:]
    return head.lstrip()[:1] in (b"{", b"[")


def parse_capture_file(path: str | os.PathLike) -> ParsedCapture:
    """runmqsc text or MQ REST JSON, told apart by content."""
    from clwl.parse.mqsc import parse_mqsc_file
    from clwl.parse.rest import parse_rest_file

    p = Path(path)
    if not p.exists():
        raise InputError(str(p), "no such file or folder")
    if not p.is_file():
        raise InputError(str(p), "not a regular file")
    try:
        is_json = _looks_like_json(p)
    except OSError as e:
        raise InputError(str(p), f"cannot be read: {e.strerror or e}") from e
    return parse_rest_file(p) if is_json else parse_mqsc_file(p)


def read_captures(paths: Iterable[str | os.PathLike]) -> Captures:
    """Read files and folders (every file in a folder, in name order, not recursing into subfolders)."""
    out = Captures()
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            files = sorted(f for f in p.iterdir() if f.is_file() and not f.name.startswith("."))
            if not files:
                raise InputError(str(p), "folder holds no files")
        else:
            files = [p]
        for f in files:
            cap = parse_capture_file(f)
            out.files.append(str(f))
            out.records.extend(cap.records)
            out.problems.extend(cap.problems)
            if cap.banner_qmgr:
                out.banner_qmgrs[str(f)] = cap.banner_qmgr
    return out


def local_qmgr_name(caps: Captures, override: Optional[str] = None) -> str:
    """--local-qmgr, else the banner line, else DISPLAY QMGR's QMNAME (cli-contract)."""
    if override:
        return override
    names = set(caps.banner_qmgrs.values())
    if len(names) > 1:
        detail = ", ".join(f"{Path(f).name}: {n}" for f, n in sorted(caps.banner_qmgrs.items()))
        raise InputError(next(iter(caps.banner_qmgrs)),
                         f"captures come from different queue managers ({detail}); use --local-qmgr")
    if names:
        return names.pop()
    qm = [r.get("QMNAME") for r in caps.records if r.kind == "QMGR" and r.get("QMNAME")]
    if qm:
        return qm[-1]
    raise InputError(caps.files[0] if caps.files else "-",
                     "cannot tell which queue manager the captures describe: no banner, no DISPLAY QMGR; "
                     "use --local-qmgr")


# -- attribute helpers --------------------------------------------------------------------------------------
class _BadValue(Exception):
    pass


def _int(r: MqscRecord, key: str, default: int, lo: int | None = None, hi: int | None = None) -> int:
    v = r.get(key)
    if v is None or v == "":
        return default
    try:
        n = int(v)
    except ValueError:
        raise _BadValue(f"{key}({v}) is not a number") from None
    if (lo is not None and n < lo) or (hi is not None and n > hi):
        raise _BadValue(f"{key}({v}) is outside {lo}-{hi}")
    return n


def _s(r: MqscRecord, key: str, default: str = "") -> str:
    v = r.get(key)
    return default if v is None else v.strip()


def _clusters(r: MqscRecord, namelists: dict[str, frozenset[str]]) -> frozenset[str]:
    out = set()
    if _s(r, "CLUSTER"):
        out.add(_s(r, "CLUSTER"))
    nl = _s(r, "CLUSNL")
    if nl:
        out |= namelists.get(nl, frozenset())
    return frozenset(out)


def _identity(r: MqscRecord) -> tuple:
    """Which object a record describes: a later capture of the same object replaces an earlier one."""
    k = r.kind
    if k == "CLUSQMGR":
        return k, _s(r, "CLUSQMGR"), _s(r, "CHANNEL"), _s(r, "CLUSTER")
    if k == "QCLUSTER":
        return k, _s(r, "QUEUE"), _s(r, "CLUSQMGR"), _s(r, "CLUSTER"), _s(r, "QMID")
    if k == "QMGR":
        return (k,)
    if k in ("QLOCAL", "QALIAS", "QREMOTE", "QMODEL"):
        return k, _s(r, "QUEUE")
    if k == "CHSTATUS":
        # A CURRENT and a SAVED status of one channel are two records; CURRENT is the one that counts.
        return k, _s(r, "CHANNEL"), "SAVED" if "SAVED" in r.attrs else "CURRENT"
    if k == "NAMELIST":
        return k, _s(r, "NAMELIST")
    return k, r.source, r.line


def latest_records(records: Iterable[MqscRecord]) -> list[MqscRecord]:
    seen: dict[tuple, MqscRecord] = {}
    for r in records:
        seen[_identity(r)] = r
    return list(seen.values())


def build_view(records: Iterable[MqscRecord], local_qmgr: str, qsg_members: Iterable[str] = (),
               igq_max_message: int = IGQ_DEFAULT_MAX_MESSAGE) -> tuple[ClusterView, list[ParseProblem]]:
    """The view of ``local_qmgr`` from its records; a record with an unusable value is returned as a
    problem (file, line, reason) and left out of the view."""
    problems: list[ParseProblem] = []
    recs = latest_records(records)
    namelists = {
        _s(r, "NAMELIST"): frozenset(n.strip() for n in _s(r, "NAMES").split(",") if n.strip())
        for r in recs if r.kind == "NAMELIST"
    }

    def bad(r: MqscRecord, why: str) -> None:
        raw = " ".join(f"{k}({v})" if v is not None else k for k, v in r.attrs.items())
        problems.append(ParseProblem(r.source, r.line, why, raw))

    qmgr = QmgrAttributes(local_qmgr)
    for r in recs:
        if r.kind == "QMGR" and _s(r, "QMNAME") in ("", local_qmgr):
            try:
                qmgr = QmgrAttributes(
                    name=local_qmgr,
                    qmid=_s(r, "QMID"),
                    clwluseq=_s(r, "CLWLUSEQ", "LOCAL") or "LOCAL",
                    clwlmruc=_int(r, "CLWLMRUC", 999_999_999, 1, 999_999_999),
                    defclxq=_s(r, "DEFCLXQ", "SCTQ") or "SCTQ",
                    qsgname=_s(r, "QSGNAME"),
                    igq=_s(r, "IGQ") == "ENABLED",
                )
            except _BadValue as e:
                bad(r, str(e))

    status: dict[str, MqscRecord] = {}
    for r in recs:
        if r.kind == "CHSTATUS" and _s(r, "CHLTYPE", "CLUSSDR") in ("CLUSSDR", ""):
            name = _s(r, "CHANNEL")
            if name not in status or "SAVED" in status[name].attrs:
                status[name] = r

    channels: dict[str, ClusterChannel] = {}
    receivers: dict[str, ClusterChannel] = {}
    for r in recs:
        if r.kind != "CLUSQMGR":
            continue
        name, qm = _s(r, "CHANNEL"), _s(r, "CLUSQMGR")
        if qm.startswith("SYSTEM.TEMPQMGR."):
            continue  # a manual CLUSSDR whose target has not answered yet: no destination
        try:
            deftype = _s(r, "DEFTYPE", "CLUSSDRA") or "CLUSSDRA"
            st = status.get(name)
            state = (_s(st, "STATUS") if st is not None and _s(st, "STATUS") else "") or \
                _s(r, "STATUS") or "INACTIVE"
            cur = (_s(st, "XMITQ") if st is not None else "") or _s(r, "XMITQ")
            ch = ClusterChannel(
                name=name, qmgr=qm, clusters=frozenset({_s(r, "CLUSTER")} - {""}), deftype=deftype,
                clwlrank=_int(r, "CLWLRANK", 0, 0, 9), clwlprty=_int(r, "CLWLPRTY", 0, 0, 9),
                clwlwght=_int(r, "CLWLWGHT", 50, 1, 99), netprty=_int(r, "NETPRTY", 0, 0, 9),
                suspended=_s(r, "SUSPEND", "NO") == "YES", state=state.upper(), current_xmitq=cur,
                qmid=_s(r, "QMID"),
            )
        except _BadValue as e:
            bad(r, str(e))
            continue
        target = receivers if (deftype == "CLUSRCVR" or qm == local_qmgr) else channels
        prev = target.get(name)
        if prev is not None:  # the same channel in several clusters: one destination, clusters merged
            keep_deftype = prev.deftype if deftype == "CLUSSDR" else deftype
            ch = ClusterChannel(**{**prev.__dict__, "clusters": prev.clusters | ch.clusters,
                                   "deftype": keep_deftype})
        target[name] = ch

    local_queues: dict[str, LocalQueue] = {}
    aliases, remotes = [], []
    for r in recs:
        try:
            if r.kind == "QLOCAL":
                local_queues[_s(r, "QUEUE")] = LocalQueue(
                    name=_s(r, "QUEUE"), usage=_s(r, "USAGE", "NORMAL") or "NORMAL",
                    clchname=_s(r, "CLCHNAME"), clusters=_clusters(r, namelists),
                    clwluseq=_s(r, "CLWLUSEQ", "QMGR") or "QMGR", put_enabled=_s(r, "PUT", "ENABLED") != "DISABLED",
                    clwlrank=_int(r, "CLWLRANK", 0, 0, 9), clwlprty=_int(r, "CLWLPRTY", 0, 0, 9),
                    defbind=_s(r, "DEFBIND", "OPEN") or "OPEN")
            elif r.kind == "QALIAS":
                aliases.append(LocalAlias(_s(r, "QUEUE"), _s(r, "TARGET") or _s(r, "BASEQ"),
                                          _s(r, "DEFBIND", "OPEN") or "OPEN", _clusters(r, namelists)))
            elif r.kind == "QREMOTE":
                remotes.append(RemoteDefinition(_s(r, "QUEUE"), _s(r, "RNAME"), _s(r, "RQMNAME"),
                                                _s(r, "XMITQ"), _clusters(r, namelists)))
        except _BadValue as e:
            bad(r, str(e))

    merged: dict[tuple[str, str], QueueInstance] = {}
    for r in recs:
        if r.kind != "QCLUSTER":
            continue
        q, qm = _s(r, "QUEUE"), _s(r, "CLUSQMGR")
        try:
            is_local = qm == local_qmgr
            lq = local_queues.get(q) if is_local else None
            inst = QueueInstance(
                queue=q, qmgr=qm, clusters=_clusters(r, namelists), clusqt=_s(r, "CLUSQT", "QLOCAL") or "QLOCAL",
                put_enabled=_s(r, "PUT", "ENABLED") != "DISABLED", clwlrank=_int(r, "CLWLRANK", 0, 0, 9),
                clwlprty=_int(r, "CLWLPRTY", 0, 0, 9), defbind=_s(r, "DEFBIND", "OPEN") or "OPEN",
                local=is_local, clwluseq=lq.clwluseq if lq else "QMGR", qmid=_s(r, "QMID"))
        except _BadValue as e:
            bad(r, str(e))
            continue
        prev = merged.get((q, qm))
        if prev is not None:
            inst = QueueInstance(**{**prev.__dict__, "clusters": prev.clusters | inst.clusters})
        merged[(q, qm)] = inst
    # A clustered local queue is an instance even where DISPLAY QCLUSTER was not captured.
    for lq in local_queues.values():
        if lq.clusters and (lq.name, local_qmgr) not in merged and lq.usage != "XMITQ":
            merged[(lq.name, local_qmgr)] = QueueInstance(
                lq.name, local_qmgr, lq.clusters, "QLOCAL", lq.put_enabled, lq.clwlrank, lq.clwlprty,
                lq.defbind, True, lq.clwluseq, qmgr.qmid)

    view = ClusterView(
        qmgr=qmgr,
        channels=tuple(sorted(channels.values(), key=lambda c: (c.qmgr, c.name))),
        instances=tuple(sorted(merged.values(), key=lambda i: (i.queue, i.qmgr))),
        local_queues=tuple(sorted(local_queues.values(), key=lambda q: q.name)),
        aliases=tuple(aliases),
        remotes=tuple(remotes),
        local_receivers=tuple(sorted(receivers.values(), key=lambda c: c.name)),
        qsg_members=frozenset(qsg_members),
        igq_max_message=igq_max_message,
    )
    return view, problems
