"""Build the sending queue manager's ClusterView from parsed runmqsc / REST records."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from datetime import time as dtime
from pathlib import Path
from typing import Iterable, Optional

from clwl.days import RunDate
from clwl.engine.model import (
    QSG_XMITQ,
    ClusterChannel,
    ClusterView,
    LocalAlias,
    LocalQueue,
    QmgrAttributes,
    QueueInstance,
    RemoteDefinition,
)
from clwl.engine.xmitq import IgqLimit, igq_limit
from clwl.landing.formats import CAPTURE_NAME, CAPTURE_PREFIX
from clwl.parse.common import InputError, MqscRecord, ParsedCapture, ParseProblem


@dataclass
class Captures:
    """Everything read from one queue manager's capture files."""

    records: list[MqscRecord] = field(default_factory=list)
    problems: list[ParseProblem] = field(default_factory=list)
    banner_qmgrs: dict[str, str] = field(default_factory=dict)  # file -> banner queue manager name
    files: list[str] = field(default_factory=list)
    # Landing queue manager folders read, with the captures chosen in each (docs/landing.md).
    landing: list["LandingChoice"] = field(default_factory=list)
    # Files a landing folder names like captures but that were not read: (file, reason).
    skipped: list[tuple[str, str]] = field(default_factory=list)
    # The other queue managers of a landing date folder read: their queue-sharing group (DISPLAY QMGR QSGNAME, ""
    # for none) in their latest configuration capture at or before the same moment, so that intra-group queuing
    # knows the group as the pipeline does (clwl.groups).
    sibling_groups: dict[str, str] = field(default_factory=dict)

    def has_qcluster(self) -> bool:
        return any(r.kind == "QCLUSTER" for r in self.records)


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


def read_captures(paths: Iterable[str | os.PathLike], at: Optional["CaptureMoment"] = None,
                  local_qmgr: Optional[str] = None) -> Captures:
    """Read files and folders (every file in a folder, in name order, not recursing into subfolders).

    A landing queue manager folder (docs/landing.md) is read differently: only its latest configuration and
    channel status captures at or before ``at`` (default: the latest), other files ignored. A landing date
    folder is refused with guidance, unless ``local_qmgr`` names one of its queue manager folders.
    """
    paths = list(paths)
    out = Captures()
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            p = _qmgr_folder_of(p, local_qmgr)
        if p.is_dir() and is_landing_qmgr_folder(p):
            choice = select_landing_captures(p, at)
            out.landing.append(choice)
            out.sibling_groups.update(_sibling_groups(p, at))
            out.skipped.extend(choice.skipped)
            files = [c.path for c in choice.captures]
        elif p.is_dir():
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
    if at is not None and not out.landing:
        raise InputError(str(paths[0]) if paths else "-", f"--at {at.text} chooses among the captures of a landing queue manager folder "
                                f"({LANDING_LAYOUT}); none was given")
    return out


# -- capture selection in a landing folder --------------------------------------------------------------------
# docs/landing.md: <landing>/<YYYY-MM-DD>/<QM>/config_HHMMSS.<ext> and chstatus_HHMMSS.<ext>, HHMMSS in UTC on the
# run date; every other file (puts*, *.amqsmon, xmitq_*, *.amqsact, ...) is no capture and is not read here.
LANDING_LAYOUT = "<landing>/<YYYY-MM-DD>/<QM>"
# \A and \Z, not ^ and $ ("$" also matches before a final newline): the ingest's discovery takes the same names.
_CAPTURE_NAME, _CAPTURE_PREFIX = CAPTURE_NAME, CAPTURE_PREFIX  # the format registry's (clwl.landing.formats)
_HHMMSS = re.compile(r"\A([0-9]{2})([0-9]{2})([0-9]{2})\Z")
_CLOCK = re.compile(r"\A([0-9]{1,2}):([0-9]{2})(?::([0-9]{2}))?Z?\Z", re.I)


@dataclass(frozen=True)
class CaptureMoment:
    """``clwl route --at``: a time of day (UTC), on the run date of the folder, or on ``day``."""

    time: dtime
    day: Optional[date]
    text: str

    def describe(self, run_date: Optional[date]) -> str:
        day = self.day or run_date
        return f"{day.isoformat()} {self.time.isoformat()} UTC" if day else f"{self.time.isoformat()} UTC"


def parse_capture_moment(text: str) -> CaptureMoment:
    """``HH:MM``, ``HH:MM:SS`` or ``HHMMSS`` (as in capture names), UTC on the folder's run date; or an ISO date
    and time (``2026-11-21T07:00``, ``...Z``, ``...+01:00``: an offset is converted to UTC). ValueError else."""
    t = text.strip()
    m = _HHMMSS.match(t) or _CLOCK.match(t)
    if m:
        hh, mm, ss = int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)
        if hh > 23 or mm > 59 or ss > 59:
            raise ValueError(f"{text!r} is not a time of day")
        return CaptureMoment(dtime(hh, mm, ss), None, text)
    if len(t) <= 10 or t[10] not in "Tt ":  # a date alone names no moment
        raise ValueError(f"{text!r} is not a time HH:MM[:SS] or a date and time YYYY-MM-DDTHH:MM[:SS]")
    try:
        moment = datetime.fromisoformat(t[:-1] + "+00:00" if t[-1] in "zZ" else t)
    except ValueError:
        raise ValueError(f"{text!r} is not a time HH:MM[:SS] or a date and time YYYY-MM-DDTHH:MM[:SS]") from None
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc)
    return CaptureMoment(moment.time().replace(tzinfo=None), moment.date(), text)


@dataclass(frozen=True)
class LandingCapture:
    path: Path
    kind: str  # config | chstatus
    day: Optional[date]  # the run date of its folder; None when the folder is not in a date folder
    time: dtime

    @property
    def key(self) -> tuple:
        return self.day or date.min, self.time, self.path.name


@dataclass
class LandingChoice:
    """The captures chosen in one landing queue manager folder, in the order they are read (oldest first)."""

    folder: Path
    qmgr: str
    at: Optional[CaptureMoment]
    captures: list[LandingCapture]
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def describe(self) -> str:
        """One line: which files were used and why those."""
        day = _run_date(self.folder.parent.name)
        when = f"the latest at or before {self.at.describe(day)}" if self.at else "the latest"
        used = ", ".join(str(c.path) for c in self.captures)
        if not any(c.kind == "chstatus" for c in self.captures):
            used += " (no channel status capture: channel states from DISPLAY CLUSQMGR)"
        return f"captures used ({when}): {used}"


def _run_date(name: str) -> Optional[date]:
    try:
        return RunDate(name).day
    except ValueError:
        return None


def _visible(folder: Path) -> list[Path]:
    return sorted(f for f in folder.iterdir() if not f.name.startswith("."))


def is_landing_qmgr_folder(folder: Path) -> bool:
    """A queue manager folder of a landing: under a date folder, or holding files named as landing captures."""
    if _run_date(folder.resolve().parent.name) is not None:
        return True
    return any(f.is_file() and _CAPTURE_PREFIX.match(f.name) for f in _visible(folder))


def _qmgr_folder_of(folder: Path, local_qmgr: Optional[str]) -> Path:
    """``folder`` itself, or the queue manager folder ``local_qmgr`` of a date folder; a date folder without
    it, or a whole landing folder, is refused with guidance (route reads one queue manager's view)."""
    entries = _visible(folder)
    subfolders = [f for f in entries if f.is_dir()]
    if _run_date(folder.name) is not None and subfolders:
        names = [f.name for f in subfolders]
        if local_qmgr and local_qmgr in names:
            return folder / local_qmgr
        missing = f"holds no folder {local_qmgr}; " if local_qmgr else ""
        raise InputError(str(folder), f"a landing date folder, one folder per queue manager ({', '.join(names)}): "
                                      f"{missing}route reads one queue manager's captures: give its folder "
                                      f"(--mqsc {folder / names[0]}) or name it with --local-qmgr")
    dates = [f.name for f in subfolders if _run_date(f.name) is not None]
    if dates and not any(f.is_file() for f in entries):
        raise InputError(str(folder), f"a landing folder, one folder per run date ({', '.join(dates)}): route "
                                      f"reads one queue manager's captures: give its folder "
                                      f"({LANDING_LAYOUT}, e.g. --mqsc {folder / dates[-1]}/QM1)")
    return folder


def _as_given(given: Path, found: Path) -> Path:
    """``found`` (absolute) written relative to the working folder when the user gave a relative path."""
    if given.is_absolute():
        return found
    try:
        return Path(os.path.relpath(found))
    except ValueError:  # another drive (Windows)
        return found


def _captures_in(folder: Path, day: Optional[date]) -> tuple[list[LandingCapture], list[tuple[str, str]]]:
    found, skipped = [], []
    for f in _visible(folder):
        m = _CAPTURE_NAME.match(f.name)
        if not m or not f.is_file():
            continue  # not a capture: put records, accounting, browses, traces, notes
        stamp = _HHMMSS.match(m.group(2))
        hh, mm, ss = (int(g) for g in stamp.groups()) if stamp else (99, 0, 0)
        if hh > 23 or mm > 59 or ss > 59:
            skipped.append((str(f), f"capture time {m.group(2)!r} in the name is not HHMMSS, a time of day"))
            continue
        found.append(LandingCapture(f, m.group(1).lower(), day, dtime(hh, mm, ss)))
    return found, skipped


def select_landing_captures(folder: Path, at: Optional[CaptureMoment] = None) -> LandingChoice:
    """The latest configuration capture at or before ``at`` (default: the end of the run date), plus the
    latest channel status capture at or before it. Captures taken at the same time are all read, in name
    order (docs/landing.md). When the folder's run date has none before ``at``, the same queue manager's
    folders of earlier dates are searched, latest first: the configuration stays in force across dates."""
    day = _run_date(folder.resolve().parent.name)
    if at is not None and at.day is not None:
        if day is None:
            raise InputError(str(folder), f"not in a date folder ({LANDING_LAYOUT}): give --at as a time of day "
                                          f"HH:MM[:SS], not {at.text}")
        if at.day != day:
            raise InputError(str(folder), f"--at {at.text} is not on this folder's run date {day.isoformat()}; "
                                          f"give the queue manager's folder of {at.day.isoformat()}")
    limit = (day or date.min, at.time if at is not None else dtime.max)
    qmgr = folder.resolve().name
    folders = [(folder, day)]
    if day is not None:  # the same queue manager's folders of earlier run dates, latest first
        landing = folder.resolve().parent.parent
        earlier = sorted(((d, f) for f in _visible(landing) if (d := _run_date(f.name)) is not None and d < day),
                         reverse=True)
        folders += [(_as_given(folder, f / qmgr), d) for d, f in earlier if (f / qmgr).is_dir()]
    chosen: dict[str, list[LandingCapture]] = {}
    skipped: list[tuple[str, str]] = []
    for i, (f, d) in enumerate(folders):
        found, bad = _captures_in(f, d)
        if i == 0:  # misnamed captures are reported for the folder given only
            skipped = bad
        for kind in ("config", "chstatus"):
            if kind in chosen:
                continue
            usable = [c for c in found if c.kind == kind and (c.day or date.min, c.time) <= limit]
            if usable:
                last = max((c.day or date.min, c.time) for c in usable)
                chosen[kind] = sorted((c for c in usable if (c.day or date.min, c.time) == last),
                                      key=lambda c: c.path.name)
        if len(chosen) == 2:
            break
    if "config" not in chosen:
        when = f" at or before {at.describe(day)}" if at is not None else ""
        where = " in it or in the folders of earlier dates" if day is not None else ""
        raise InputError(str(folder), f"a landing queue manager folder with no configuration capture "
                                      f"(config_HHMMSS.mqsc|.txt|.json|.jsonl){when}{where}")
    # Oldest first: a later capture of the same object replaces an earlier one (latest_records).
    captures = sorted((c for group in chosen.values() for c in group), key=lambda c: c.key)
    return LandingChoice(folder, qmgr, at, captures, skipped)


def _sibling_groups(folder: Path, at: Optional[CaptureMoment]) -> dict[str, str]:
    """QSGNAME of every other queue manager folder of ``folder``'s date folder, from its configuration capture in
    force at ``at`` (a folder without one, or whose capture does not parse, is left out: no evidence)."""
    out: dict[str, str] = {}
    if _run_date(folder.resolve().parent.name) is None:
        return out
    for sib in _visible(folder.resolve().parent):
        if sib.name == folder.resolve().name or not sib.is_dir() or not is_landing_qmgr_folder(sib):
            continue
        try:
            choice = select_landing_captures(sib, at)
            records = [r for c in choice.captures if c.kind == "config" for r in parse_capture_file(c.path).records]
        except (InputError, OSError):
            continue
        qmgr = [r for r in records if r.kind == "QMGR"]
        if qmgr:
            out[_s(qmgr[-1], "QMNAME") or sib.name] = _s(qmgr[-1], "QSGNAME")
    return out


def unknown_object_hint(caps: Captures, local_qmgr: str) -> str:
    """What a 2085 (unknown object) answer should add when the captures cannot know remote cluster queues."""
    if caps.has_qcluster():
        return ""
    return ("the captures hold no DISPLAY QCLUSTER output, so no cluster queue of another queue manager is "
            f"known: capture DISPLAY QCLUSTER(*) ALL on {local_qmgr}")


def local_qmgr_name(caps: Captures, override: Optional[str] = None) -> str:
    """--local-qmgr, else the banner line, else DISPLAY QMGR's QMNAME, else the name of the landing queue
    manager folder read (docs/cli-contract.md)."""
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
    folder_names = {c.qmgr for c in caps.landing}
    if len(folder_names) == 1:  # a landing queue manager folder is named after the queue manager it observes
        return folder_names.pop()
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


def record_identity(r: MqscRecord) -> tuple:
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
    if k == "CHANNEL":  # DISPLAY CHANNEL: one object per channel name
        return k, _s(r, "CHANNEL")
    if k == "CFSTRUCT":
        return k, _s(r, "CFSTRUCT")
    if k == "QSGMEMBER":  # DISPLAY GROUP: one member of a queue-sharing group
        return k, _s(r, "QSGNAME"), _s(r, "QSGMEMBER")
    return k, r.source, r.line


def latest_records(records: Iterable[MqscRecord]) -> list[MqscRecord]:
    seen: dict[tuple, MqscRecord] = {}
    for r in records:
        seen[record_identity(r)] = r
    return list(seen.values())


def build_view(records: Iterable[MqscRecord], local_qmgr: str, qsg_members: Iterable[str] = (),
               igq_max_message: Optional[int] = None) -> tuple[ClusterView, list[ParseProblem]]:
    """The view of ``local_qmgr`` from its records; a record with an unusable value is returned as a
    problem (file, line, reason) and left out of the view.

    The queue-sharing group: ``qsg_members`` (other queue managers whose DISPLAY QMGR shows the same QSGNAME)
    and the members its own DISPLAY GROUP lists. The IGQ limit: ``igq_max_message`` when given, else from the
    shared transmission queue's DISPLAY QLOCAL and its structure's DISPLAY CFSTRUCT (:func:`clwl.engine.xmitq.igq_limit`).
    """
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
                    repos=frozenset({_s(r, "REPOS")} - {""}) | namelists.get(_s(r, "REPOSNL"), frozenset()),
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
                qmid=_s(r, "QMID"), qmtype=_s(r, "QMTYPE").upper(),
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
                    defbind=_s(r, "DEFBIND", "OPEN") or "OPEN", bothresh=_int(r, "BOTHRESH", 0, 0, 999_999_999),
                    boqname=_s(r, "BOQNAME"), streamq=_s(r, "STREAMQ"), shown=frozenset(r.attrs))
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

    members = set(qsg_members) | {_s(r, "QSGMEMBER") for r in recs
                                   if r.kind == "QSGMEMBER" and qmgr.qsgname and _s(r, "QSGNAME") == qmgr.qsgname}
    shared = next((r for r in recs if r.kind == "QLOCAL" and _s(r, "QUEUE") == QSG_XMITQ), None)
    struct_name = _s(shared, "CFSTRUCT") if shared is not None else ""
    struct = next((r for r in recs if r.kind == "CFSTRUCT" and struct_name and _s(r, "CFSTRUCT") == struct_name),
                  None)
    limit = igq_limit(_s(shared, "MAXMSGL") if shared is not None else None, struct_name,
                      dict(struct.attrs) if struct is not None else None)
    if igq_max_message is not None:
        limit = IgqLimit(igq_max_message, f"{igq_max_message:,} (given)")
    view = ClusterView(
        qmgr=qmgr,
        channels=tuple(sorted(channels.values(), key=lambda c: (c.qmgr, c.name))),
        instances=tuple(sorted(merged.values(), key=lambda i: (i.queue, i.qmgr))),
        local_queues=tuple(sorted(local_queues.values(), key=lambda q: q.name)),
        aliases=tuple(aliases),
        remotes=tuple(remotes),
        local_receivers=tuple(sorted(receivers.values(), key=lambda c: c.name)),
        qsg_members=frozenset(members - {local_qmgr, ""}),
        igq_max_message=limit.max_message,
        igq_limit_why=limit.why,
    )
    return view, problems
