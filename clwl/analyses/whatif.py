"""What-if overrides: one schema, checked the same way by `clwl run --what-if` and the `clwl_adhoc` DAG.

A what-if replays a day's silver data with some attributes changed and writes every result under
``<lake>/whatif/<name>/``. What it may change, and within which range (IBM MQ's own ranges for the attributes):

``name``           required; one safe folder name: a letter or digit, then letters, digits, ``.``, ``_``, ``-``
                   (64 at most): it cannot name ``..``, a path or the published ``gold`` folder's parent.
``channel_attrs``  {"TO.QM2": {"CLWLWGHT": 80}}: a cluster receiver's workload attributes as the sending queue
                   managers see them: CLWLWGHT 1-99, CLWLPRTY 0-9, CLWLRANK 0-9, NETPRTY 0-9.
``suspend``        ["QM4"]: queue managers treated as SUSPEND(YES) all day.
``channel_state``  {"TO.QM3": "RETRYING"}: a cluster-sender channel's state for the whole day, one of MQ's
                   channel states (:data:`CHANNEL_STATES`).
``queue_attrs``    {"APP.ORDERS@QM4": {"PUT": "DISABLED"}}: a cluster queue instance (queue@hosting queue
                   manager): PUT ENABLED|DISABLED, CLWLPRTY 0-9, CLWLRANK 0-9, DEFBIND OPEN|NOTFIXED|GROUP.

A number may be given as a JSON integer or as a string of digits ("80"); not as 80.0 nor true. Names are MQ
object names (ASCII letters, digits, ``.``, ``_``, ``/``, ``%``; a channel's 20 at most, the others 48). Unknown
keys are refused (a typo such as ``channel_attr`` would otherwise run a plain replay and call it a what-if), and
so are names that the configuration of the day being replayed does not know (:func:`unknown_names`).

:data:`WHATIF_SCHEMA` is the JSON Schema of the whole object; the DAG's params use its parts, and
:func:`parse_whatif` applies it (with ``jsonschema``) to what the command line is given. Pure Python.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from clwl.landing.layout import MQ_NAME_PATTERN

# Every pattern is anchored with \A and \Z: "$" also matches before a final newline, so "w80\n" passed and named
# a folder whatif/w80\n/.
NAME_PATTERN = r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z"
#: A channel name: an MQ object name of at most 20 characters (a queue manager's: MQ_NAME_PATTERN, 48).
CHANNEL_NAME_PATTERN = r"\A[A-Za-z0-9._/%]{1,20}\Z"
#: A cluster queue instance, ``queue@hosting queue manager``: two MQ object names.
INSTANCE_PATTERN = r"\A[A-Za-z0-9._/%]{1,48}@[A-Za-z0-9._/%]{1,48}\Z"

#: MQ's channel states (DISPLAY CHSTATUS STATUS, and SWITCHING from the CLWL exit interface).
CHANNEL_STATES = ("INACTIVE", "RUNNING", "BINDING", "INITIALIZING", "STARTING", "STOPPING", "RETRYING",
                  "REQUESTING", "PAUSED", "STOPPED", "SWITCHING")


def _number(low: int, high: int) -> dict:
    """An integer in [low, high], as a JSON number or as a string of digits (the range in a pattern too)."""
    if (low, high) == (1, 99):
        pattern = r"\A([1-9]|[1-9][0-9])\Z"
    elif (low, high) == (0, 9):
        pattern = r"\A[0-9]\Z"
    else:  # pragma: no cover - every range used is above
        raise ValueError((low, high))
    return {"oneOf": [{"type": "integer", "minimum": low, "maximum": high},
                      {"type": "string", "pattern": pattern}]}


def _choice(*values: str) -> dict:
    return {"type": "string", "enum": list(values)}


CHANNEL_ATTRS_SCHEMA: dict = {
    "type": "object",
    "propertyNames": {"pattern": CHANNEL_NAME_PATTERN},
    "additionalProperties": {
        "type": "object", "minProperties": 1, "additionalProperties": False,
        "properties": {"CLWLWGHT": _number(1, 99), "CLWLPRTY": _number(0, 9), "CLWLRANK": _number(0, 9),
                       "NETPRTY": _number(0, 9)},
    },
}
SUSPEND_SCHEMA: dict = {"type": "array", "uniqueItems": True, "items": {"type": "string", "pattern": MQ_NAME_PATTERN}}
CHANNEL_STATE_SCHEMA: dict = {"type": "object", "propertyNames": {"pattern": CHANNEL_NAME_PATTERN},
                              "additionalProperties": _choice(*CHANNEL_STATES)}
QUEUE_ATTRS_SCHEMA: dict = {
    "type": "object",
    "propertyNames": {"pattern": INSTANCE_PATTERN},
    "additionalProperties": {
        "type": "object", "minProperties": 1, "additionalProperties": False,
        "properties": {"PUT": _choice("ENABLED", "DISABLED"), "CLWLPRTY": _number(0, 9),
                       "CLWLRANK": _number(0, 9), "DEFBIND": _choice("OPEN", "NOTFIXED", "GROUP")},
    },
}
OVERRIDES = {"channel_attrs": CHANNEL_ATTRS_SCHEMA, "suspend": SUSPEND_SCHEMA, "channel_state": CHANNEL_STATE_SCHEMA,
             "queue_attrs": QUEUE_ATTRS_SCHEMA}
WHATIF_SCHEMA: dict = {
    "type": "object",
    "additionalProperties": False,
    "required": ["name"],
    "properties": {"name": {"type": "string", "pattern": NAME_PATTERN}, **OVERRIDES},
}


class WhatIfError(ValueError):
    """What-if overrides that cannot be used: one line saying which key or name and why."""


@dataclass
class WhatIf:
    """Validated overrides for a what-if replay (see the module documentation for each key)."""

    name: str
    channel_attrs: dict[str, dict[str, str]] = field(default_factory=dict)
    suspend: list[str] = field(default_factory=list)
    channel_state: dict[str, str] = field(default_factory=dict)
    queue_attrs: dict[str, dict[str, str]] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "WhatIf":
        """Check ``d`` against :data:`WHATIF_SCHEMA`; values are kept as MQ prints them (strings). Attribute
        names and channel states may be in any letter case (the REST API prints them in lower case)."""
        d = _upper_names(d)
        check_schema(d)

        def text(attrs: Mapping[str, Any]) -> dict[str, str]:
            return {k.upper(): str(v) for k, v in attrs.items()}

        return cls(name=d["name"],
                   channel_attrs={c: text(a) for c, a in (d.get("channel_attrs") or {}).items()},
                   suspend=list(d.get("suspend") or []),
                   channel_state=dict(d.get("channel_state") or {}),
                   queue_attrs={q: text(a) for q, a in (d.get("queue_attrs") or {}).items()})

    def overrides(self) -> dict[str, Any]:
        """The overrides given (for the report and the run's output)."""
        return {k: v for k, v in (("channel_attrs", self.channel_attrs), ("suspend", self.suspend),
                                  ("channel_state", self.channel_state), ("queue_attrs", self.queue_attrs)) if v}

    def apply(self, qmgr: str, kind: str, attrs: dict, valid_from) -> dict:
        """One history record's attributes with the overrides applied (``load_timelines``' hook)."""
        a = dict(attrs)
        if kind == "CLUSQMGR":
            a.update(self.channel_attrs.get(a.get("CHANNEL", ""), {}))
            if a.get("CLUSQMGR") in self.suspend:
                a["SUSPEND"] = "YES"
            if a.get("CHANNEL") in self.channel_state:
                a["STATUS"] = self.channel_state[a["CHANNEL"]]
        elif kind == "CHSTATUS" and a.get("CHANNEL") in self.channel_state:
            a["STATUS"] = self.channel_state[a["CHANNEL"]]
        elif kind in ("QCLUSTER", "QLOCAL"):
            a.update(self.queue_attrs.get(f"{a.get('QUEUE', '')}@{a.get('CLUSQMGR', qmgr)}", {}))
        return a


def _upper_names(d: Any) -> Any:
    if not isinstance(d, Mapping):
        return d
    out = dict(d)
    for key in ("channel_attrs", "queue_attrs"):
        if isinstance(out.get(key), Mapping):
            out[key] = {o: ({str(k).upper(): v for k, v in a.items()} if isinstance(a, Mapping) else a)
                        for o, a in out[key].items()}
    if isinstance(out.get("channel_state"), Mapping):
        out["channel_state"] = {c: (v.upper() if isinstance(v, str) else v) for c, v in out["channel_state"].items()}
    return out


def _validator():
    """:data:`WHATIF_SCHEMA`'s validator, with "integer" meaning a JSON integer only. JSON Schema's integer also
    takes 80.0 (and Python's int takes true): kept as "80.0", the view could not read it and left the channel out
    of the replay."""
    import jsonschema

    strict = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda _, v: isinstance(v, int) and not isinstance(v, bool))
    return jsonschema.validators.extend(jsonschema.Draft202012Validator, type_checker=strict)(WHATIF_SCHEMA)


def check_schema(d: Any) -> None:
    """:class:`WhatIfError` naming the first thing in ``d`` that :data:`WHATIF_SCHEMA` refuses."""
    if not isinstance(d, Mapping):
        raise WhatIfError("what-if: expected a JSON object of overrides with a \"name\"")
    unknown = sorted(set(d) - set(WHATIF_SCHEMA["properties"]))
    if unknown:
        raise WhatIfError(f"what-if: unknown key {unknown[0]!r} (known: {', '.join(WHATIF_SCHEMA['properties'])})")
    errors = sorted(_validator().iter_errors(dict(d)), key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        e = errors[0]
        where = "/".join(str(p) for p in e.absolute_path) or "(the object)"
        value = e.instance if not isinstance(e.instance, (dict, list)) else None
        if isinstance(value, (bool, float)):
            reason = f"not an integer: {json.dumps(value)}"
        elif e.validator in ("oneOf", "pattern", "enum", "type", "minimum", "maximum", "minLength", "maxLength"):
            reason = "out of range or not allowed" + (f": {json.dumps(value)}" if value is not None else "")
        elif e.validator == "required":
            reason = "a \"name\" is required (one folder name: letters, digits, '.', '_', '-')"
        else:
            reason = e.message
        raise WhatIfError(f"what-if: {where}: {reason}")


def parse_whatif(text: str) -> WhatIf:
    """The ``--what-if JSON`` argument of ``clwl run``."""
    try:
        d = json.loads(text)
    except json.JSONDecodeError as exc:
        raise WhatIfError(f"what-if: not JSON ({exc})") from None
    return WhatIf.from_dict(d)


def unknown_names(whatif: WhatIf, channels: Iterable[str], qmgrs: Iterable[str],
                  instances: Iterable[str]) -> list[str]:
    """The names ``whatif`` uses that the day's configuration does not know: channels (cluster senders and
    receivers seen by any sending queue manager), queue managers, queue instances (``queue@qmgr``)."""
    channels, qmgrs, instances = set(channels), set(qmgrs), set(instances)
    out = [f"channel {c}" for c in sorted(set(whatif.channel_attrs) | set(whatif.channel_state)) if c not in channels]
    out += [f"queue manager {q}" for q in sorted(whatif.suspend) if q not in qmgrs]
    out += [f"queue instance {q}" for q in sorted(whatif.queue_attrs) if q not in instances]
    return out
