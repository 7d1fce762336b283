"""silver.config_history and silver.channel_status: rebuilt per observing queue manager from all of its bronze
captures (the history semantics: the ``spark.ingest`` package documentation)."""

from __future__ import annotations

from typing import Iterable

from spark.tables import TABLES

# ----------------------------------------------------------------------------------------------------------
# History: rebuilt per observing queue manager from all of its captures (pure Python per queue manager, run by
# Spark grouped by observing_qmgr: the window/join formulation took three times the jobs and stages)

_ABSENT = "<absent>"
_NOT_CONFIG = frozenset({"CHSTATUS", "OTHER"})
_INACTIVE = ("INACTIVE", None, None)


def _text_or_none(value) -> str | None:
    if value is None:
        return None
    value = str(value).strip()
    return value or None


def qmgr_history(objects: Iterable[dict], captures: Iterable[dict]) -> tuple[list[dict], list[dict]]:
    """``(config versions, channel status intervals)`` of one observing queue manager.

    objects: its bronze.mqsc_objects rows (kind, object_key, source_file, seq, attrs_hash; for CHSTATUS and
    CLUSQMGR records also channel, chltype, status, xmitq, substate, deftype from the attributes).
    captures: its bronze.capture_files rows (source_file, capture_time, run_date, kinds_covered, kinds_present,
    complete).

    Captures are taken in (capture_time, source_file) order; an object (a channel) is followed from the first
    capture time it is seen at (for a channel: in a CHSTATUS record or named by a CLUSQMGR record). In a capture
    that covers its kind it is present (its state), absent (the capture asked for the whole kind and lost no
    record: gone, or INACTIVE for a channel) or unknown (the state carries over). A new version opens where the
    state changes; the open one is closed then (valid_to). Versions carry the opening capture's source_file,
    run_date and, for configuration, the record's seq (to fetch its attributes).
    """
    import itertools

    caps = sorted(captures, key=lambda c: (c["capture_time"], c["source_file"]))
    records: dict[str, dict[tuple[str, str], dict]] = {}
    for o in sorted(objects, key=lambda o: (o["source_file"], o["seq"])):
        records.setdefault(o["source_file"], {})[(o["kind"], o["object_key"])] = o  # the last of an object wins
    config: list[dict] = []
    channels: list[dict] = []
    known: dict[str, list[str]] = {}  # kind -> object keys, in order of first sighting
    seen: set[tuple[str, str]] = set()
    state: dict[tuple[str, str], str] = {}
    opened: dict[tuple[str, str], dict] = {}
    ch_known: list[str] = []
    ch_state: dict[str, tuple] = {}
    ch_open: dict[str, dict] = {}
    ch_type: dict[str, str] = {}
    ch_deftype: dict[str, str] = {}

    for when, group in itertools.groupby(caps, key=lambda c: c["capture_time"]):
        group = list(group)
        for c in group:  # sightings first: a capture at the same time but earlier in name order sees them too
            for (kind, key), o in records.get(c["source_file"], {}).items():
                if kind == "CHSTATUS" or kind == "CLUSQMGR":
                    ch = _text_or_none(o.get("channel"))
                    if ch and ch not in ch_known and (kind == "CLUSQMGR" or key.endswith("|CURRENT")):
                        ch_known.append(ch)
                    if ch and kind == "CLUSQMGR":
                        ch_deftype[ch] = "CLUSRCVR" if _text_or_none(o.get("deftype")) == "CLUSRCVR" else "CLUSSDR"
                if kind not in _NOT_CONFIG and (kind, key) not in seen:
                    seen.add((kind, key))
                    known.setdefault(kind, []).append(key)
        for c in group:
            recs = records.get(c["source_file"], {})
            covered = set(c["kinds_covered"])
            kinds = covered | set(c["kinds_present"])
            for kind in sorted(kinds - _NOT_CONFIG):
                full = bool(c["complete"]) and kind in covered
                for key in known.get(kind, ()):
                    o = recs.get((kind, key))
                    new = o["attrs_hash"] if o is not None else (_ABSENT if full else None)
                    ident = (kind, key)
                    if new is None or new == state.get(ident):
                        continue
                    state[ident] = new
                    if ident in opened:
                        opened.pop(ident)["valid_to"] = when
                    if new != _ABSENT:
                        row = {"kind": kind, "object_key": key, "attrs_hash": new, "seq": int(o["seq"]),
                               "valid_from": when, "valid_to": None, "source_file": c["source_file"],
                               "run_date": c["run_date"]}
                        opened[ident] = row
                        config.append(row)
            if "CHSTATUS" not in kinds:
                continue
            full = bool(c["complete"]) and "CHSTATUS" in covered
            current = {}
            for (kind, key), o in recs.items():
                if kind == "CHSTATUS" and key.endswith("|CURRENT"):
                    current[_text_or_none(o.get("channel"))] = o
            for ch in ch_known:
                o = current.get(ch)
                if o is not None:
                    status = (_text_or_none(o.get("status")) or "UNKNOWN").upper()
                    substate = _text_or_none(o.get("substate"))
                    new = (status, _text_or_none(o.get("xmitq")), substate.upper() if substate else None)
                    chltype = _text_or_none(o.get("chltype"))
                    if chltype:
                        ch_type[ch] = chltype.upper()
                elif full:
                    new = _INACTIVE
                else:
                    continue
                if new == ch_state.get(ch):
                    continue
                ch_state[ch] = new
                if ch in ch_open:
                    ch_open.pop(ch)["valid_to"] = when
                row = {"channel": ch, "chltype": ch_type.get(ch) or ch_deftype.get(ch), "status": new[0],
                       "xmitq": new[1], "substate": new[2], "valid_from": when, "valid_to": None,
                       "source_file": c["source_file"], "run_date": c["run_date"]}
                ch_open[ch] = row
                channels.append(row)
    return config, channels


_HISTORY_COLUMNS = ("_table", "observing_qmgr", "kind", "object_key", "attrs_hash", "seq", "channel", "chltype",
                    "status", "xmitq", "substate", "valid_from", "valid_to", "source_file", "run_date")


def _history_schema():
    from pyspark.sql.types import DateType, IntegerType, StringType, StructField, StructType, TimestampType

    types = {"seq": IntegerType(), "valid_from": TimestampType(), "valid_to": TimestampType(),
             "run_date": DateType()}
    return StructType([StructField(c, types.get(c, StringType()), True) for c in _HISTORY_COLUMNS])


def _history_group(key, objects, captures):
    """cogroup.applyInArrow body: one observing queue manager's history rows (both tables, tagged)."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    qmgr = key[0].as_py() if hasattr(key[0], "as_py") else key[0]
    config, channels = qmgr_history(objects.to_pylist(), captures.to_pylist())
    rows = [{"_table": "config", "observing_qmgr": qmgr, **r} for r in config]
    rows += [{"_table": "channel", "observing_qmgr": qmgr, **r} for r in channels]
    return pa.Table.from_pylist(rows, schema=to_arrow_schema(_history_schema()))


def build_histories(mqsc_objects, capture_files):
    """``(config_history, channel_status)`` DataFrames from bronze.mqsc_objects and bronze.capture_files rows
    (any set of observing queue managers; each is rebuilt from all the rows given for it)."""
    from pyspark.sql import functions as F

    def attr(name: str):
        return F.col("attrs").getItem(name)

    objects = mqsc_objects.where(F.col("kind") != "OTHER")
    slim = objects.select(
        "observing_qmgr", "kind", "object_key", "source_file", "seq", "attrs_hash",
        *[F.when(F.col("kind").isin("CHSTATUS", "CLUSQMGR"), attr(a)).alias(c)
          for a, c in (("CHANNEL", "channel"), ("CHLTYPE", "chltype"), ("STATUS", "status"), ("XMITQ", "xmitq"),
                       ("SUBSTATE", "substate"), ("DEFTYPE", "deftype"))])
    caps = capture_files.select("observing_qmgr", "source_file", "capture_time", "run_date", "kinds_covered",
                                "kinds_present", "complete")
    tagged = (slim.groupBy("observing_qmgr").cogroup(caps.groupBy("observing_qmgr"))
              .applyInArrow(_history_group, _history_schema()))
    return tagged


def split_histories(tagged, mqsc_objects):
    from pyspark.sql import functions as F

    attrs = mqsc_objects.select("source_file", "seq", "attrs")
    config = (tagged.where(F.col("_table") == "config")
              .join(attrs, ["source_file", "seq"], "left")
              .select(*TABLES["silver.config_history"].columns))
    channels = tagged.where(F.col("_table") == "channel").select(*TABLES["silver.channel_status"].columns)
    return config, channels
