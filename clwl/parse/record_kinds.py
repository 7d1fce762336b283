"""The kinds of record DISPLAY output holds, told from a record's attribute names: shared by the runmqsc parser
(:mod:`clwl.parse.mqsc`), the z/OS one (:mod:`clwl.parse.zos`) and the REST one (:mod:`clwl.parse.rest`), which read
the same attributes in three layouts. Standard library only.
"""

from __future__ import annotations

from typing import Mapping

from clwl.parse.common import clip
from clwl.terminal import printable

__all__ = ["KINDS", "MESSAGE_KINDS", "NAME_ATTRIBUTES", "QUEUE_KINDS", "REQUIRED_ATTRIBUTES", "bad_name_reason",
           "classify", "missing_key_reason", "record_reason"]

KINDS = frozenset(
    {"CLUSQMGR", "QCLUSTER", "QMGR", "QLOCAL", "QALIAS", "QREMOTE", "QMODEL", "CHSTATUS", "NAMELIST", "CHANNEL",
     "QSGMEMBER", "CFSTRUCT", "OTHER"}
)
QUEUE_KINDS = frozenset({"QLOCAL", "QALIAS", "QREMOTE", "QCLUSTER", "QMODEL"})

# AMQ message number -> kind it announces ("QUEUE": a queue of a type still to be read from TYPE): the header's
# kind breaks ties in classify, and a header of one of these kinds with no attribute is a cut record.
MESSAGE_KINDS: Mapping[str, str] = {
    "8441": "CLUSQMGR",
    "8409": "QUEUE",
    "8408": "QMGR",
    "8417": "CHSTATUS",
    "8414": "CHANNEL",
    "8550": "NAMELIST",
}
_CHSTATUS_MARKERS = ("STATUS", "CURRENT", "SAVED", "CHSTATI", "CHSTADA", "SUBSTATE", "MSGS")

# Attributes without which a record of that kind is useless. "QUEUE" is the pseudo-kind of a queue record whose
# TYPE is missing: never emitted, always a problem.
REQUIRED_ATTRIBUTES: Mapping[str, tuple[str, ...]] = {
    "CLUSQMGR": ("CLUSQMGR", "CHANNEL", "CLUSTER"),
    "QCLUSTER": ("QUEUE", "CLUSQMGR"),
    "QLOCAL": ("QUEUE",),
    "QALIAS": ("QUEUE",),
    "QREMOTE": ("QUEUE",),
    "QMODEL": ("QUEUE",),
    "QUEUE": ("QUEUE", "TYPE"),
    "QMGR": ("QMNAME",),
    "CHSTATUS": ("CHANNEL", "CHLTYPE"),
    "CHANNEL": ("CHANNEL", "CHLTYPE"),
    "NAMELIST": ("NAMELIST",),
    "CFSTRUCT": ("CFSTRUCT",),
    "QSGMEMBER": ("QSGNAME", "QSGMEMBER"),
}


def classify(attrs: Mapping[str, str | None], message_id: str = "") -> str:
    """Kind of a record, decided from its attribute names (never from the message text).

    Rules, in order:
    1. ``QUEUE`` present: ``TYPE``'s value if it is QLOCAL/QALIAS/QREMOTE/QCLUSTER/QMODEL; without TYPE,
       QCLUSTER if ``CLUSQMGR`` is present, else the pseudo-kind ``QUEUE`` under an AMQ8409 header (a problem);
       anything else (DISPLAY QSTATUS's TYPE(QUEUE), ...) is OTHER.
    2. ``CLUSQMGR`` present: CLUSQMGR (QCLUSTER under an AMQ8409 header: a cluster queue that lost QUEUE).
    3. ``CHANNEL`` and ``CHLTYPE``: CHSTATUS if any of STATUS, CURRENT, SAVED, CHSTATI, CHSTADA, SUBSTATE, MSGS is
       present, else CHSTATUS under an AMQ8417 header, else CHANNEL. ``CHANNEL`` without ``CHLTYPE``: the kind
       of the header (AMQ8417/8414/8441, then a problem for the missing key) or OTHER.
    4. ``QMNAME`` (and neither QUEUE nor CHANNEL): QMGR, except ``QMNAME`` + ``STATUS`` (DISPLAY QMSTATUS) which
       is OTHER unless the header is AMQ8408.
    5. ``NAMELIST``: NAMELIST.
    6. ``CFSTRUCT`` (z/OS DISPLAY CFSTRUCT; a queue's CFSTRUCT attribute is caught by rule 1): CFSTRUCT.
    7. none of these: the kind of the header if it is a known one (the record then misses its key attribute),
       else OTHER.
    """
    hint = MESSAGE_KINDS.get(message_id[3:7]) if message_id else None
    if "QUEUE" in attrs:
        qtype = attrs.get("TYPE")
        if qtype:
            qtype = qtype.upper()
            return qtype if qtype in QUEUE_KINDS else "OTHER"
        if "CLUSQMGR" in attrs:
            return "QCLUSTER"
        return "QUEUE" if hint == "QUEUE" else "OTHER"
    if "CLUSQMGR" in attrs:
        return "QCLUSTER" if hint == "QUEUE" else "CLUSQMGR"
    if "CHANNEL" in attrs:
        if "CHLTYPE" in attrs:
            for marker in _CHSTATUS_MARKERS:
                if marker in attrs:
                    return "CHSTATUS"
            return "CHSTATUS" if hint == "CHSTATUS" else "CHANNEL"
        return hint if hint in ("CHSTATUS", "CHANNEL", "CLUSQMGR") else "OTHER"
    if "QMNAME" in attrs:
        if "STATUS" in attrs and hint != "QMGR":
            return "OTHER"
        return "QMGR"
    if "NAMELIST" in attrs:
        return "NAMELIST"
    if "CFSTRUCT" in attrs:
        return "CFSTRUCT"
    return hint or "OTHER"


def missing_key_reason(kind: str, attrs: Mapping[str, str | None]) -> str | None:
    """``"missing key attribute: ..."`` when a record of ``kind`` lacks (or has empty) key attributes."""
    required = REQUIRED_ATTRIBUTES.get(kind)
    if not required:
        return None
    missing = [key for key in required if key not in attrs]
    label = "queue" if kind == "QUEUE" else kind
    if missing:
        return f"missing key attribute: {label} record without {', '.join(missing)}"
    empty = [key for key in required if not attrs[key]]
    if empty:
        return f"missing key attribute: {label} record with empty {', '.join(empty)}"
    return None


#: Attributes whose value is an MQ object name (or a list of them, NAMES and CLUSNL's namelist), as the view
#: reads them: a queue, queue manager, channel, cluster, namelist or transmission queue.
NAME_ATTRIBUTES = ("QUEUE", "QMNAME", "CLUSQMGR", "CHANNEL", "CLUSTER", "CLUSNL", "NAMELIST", "NAMES", "TARGET",
                   "BASEQ", "RNAME", "RQMNAME", "XMITQ", "CLCHNAME", "QSGNAME", "QMID")


def _unprintable(ch: str) -> bool:
    # A lone surrogate (REST's "\ud800") has its own reason in clwl.parse.rest: not counted here.
    return not ch.isprintable() and not "\ud800" <= ch <= "\udfff"


def bad_name_reason(attrs: Mapping[str, str | None]) -> str | None:
    """``"control character in a name: ..."`` when an object name (:data:`NAME_ATTRIBUTES`) holds a control or
    other unprintable character (ESC, BEL, a tab, U+202E): no valid MQ name does, and printed in a finding or a
    runmqsc remedy it would drive the terminal. The value is quoted escaped (clwl.terminal.printable)."""
    for key in NAME_ATTRIBUTES:
        value = attrs.get(key)
        if value and not value.isprintable():
            ch = next((c for c in value if _unprintable(c)), None)
            if ch is not None:
                return (f"control character in a name: {key}({printable(clip(value))}) holds U+{ord(ch):04X}, "
                        f"not a valid MQ name")
    return None


def record_reason(kind: str, attrs: Mapping[str, str | None]) -> str | None:
    """Why a record of ``kind`` is not accepted (:func:`missing_key_reason`, then :func:`bad_name_reason`), or None:
    what every DISPLAY reader (runmqsc, z/OS, REST) asks of a record before it keeps it."""
    return missing_key_reason(kind, attrs) or bad_name_reason(attrs)
