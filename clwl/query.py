"""``clwl query SQL [--lake DIR] [--json]``: SQL over the lake's Delta tables, without a JVM.

Every Delta table at ``<lake>/<layer>/<table>`` (a folder with a ``_delta_log``) is addressable by its bare name
(``routing_replay``, ``quarantine``, ...); when two layers hold the same name the bare name is the gold one,
then silver, then bronze, and every table is also addressable as ``<layer>_<table>`` (``silver_message_events``).

The engine is the ``deltalake`` package's ``QueryBuilder`` (Apache DataFusion SQL over delta-rs): no JVM and
no pyspark import. Its SQL is DataFusion's (PostgreSQL-like), not Spark SQL.
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import decimal
import json
import math
import os
import sys
from pathlib import Path
from typing import Any, Iterable, Sequence, TextIO

EXIT_OK, EXIT_INPUT = 0, 2
LAYER_PRIORITY = ("gold", "silver", "bronze")  # who gets the bare name when two layers share a table name
MAX_CELL = 60  # characters of a cell in the readable table


class QueryError(Exception):
    """A lake that cannot be used or SQL that cannot be answered: one line for stderr."""


def default_lake() -> Path:
    raw = os.environ.get("CLWL_LAKE", "").strip()
    return Path(raw or "lake")


def discover_tables(lake: Path) -> dict[str, Path]:
    """Bare name (and ``<layer>_<table>``) -> table folder, for every ``<lake>/<layer>/<table>/_delta_log``."""
    found: list[tuple[str, str, Path]] = []
    for layer_dir in sorted(p for p in lake.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
        for table_dir in sorted(p for p in layer_dir.iterdir() if p.is_dir()):
            if (table_dir / "_delta_log").is_dir():
                found.append((layer_dir.name, table_dir.name, table_dir))

    def rank(layer: str) -> int:
        return LAYER_PRIORITY.index(layer) if layer in LAYER_PRIORITY else len(LAYER_PRIORITY)

    names: dict[str, Path] = {}
    for layer, table, path in sorted(found, key=lambda f: (rank(f[0]), f[0], f[1])):
        names.setdefault(table, path)
    for layer, table, path in found:
        names.setdefault(f"{layer}_{table}", path)
    return names


def run_query(sql: str, lake: Path):
    """The answer as a pyarrow Table."""
    lake = Path(lake)
    if not lake.is_dir():
        raise QueryError(f"no lake at {lake} (give --lake DIR, or set CLWL_LAKE)")
    try:
        import pyarrow as pa
        from deltalake import DeltaTable, QueryBuilder
    except ImportError as exc:
        raise QueryError(f"the deltalake and pyarrow packages are needed ({exc}); install the 'pipeline' extra") \
            from None
    qb = QueryBuilder({"datafusion.catalog.information_schema": "true"})  # SHOW TABLES, information_schema
    tables = discover_tables(lake)
    for name, path in tables.items():
        try:
            qb.register(name, DeltaTable(str(path)))
        except Exception as exc:
            raise QueryError(f"cannot read the Delta table {path}: {_one_line(exc)}") from None
    try:
        return pa.RecordBatchReader.from_stream(qb.execute(sql)).read_all()
    except Exception as exc:
        hint = ""
        if "not found" in str(exc):
            hint = f" (tables in {lake}: {', '.join(sorted(tables)) or 'none'})"
        raise QueryError(f"bad SQL: {_one_line(exc)}{hint}") from None


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 400 else text[:397] + "..."


# ------------------------------------------------------------------------------------------------ output


def to_jsonable(v: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, dt.datetime):
        return v.isoformat()
    if isinstance(v, (dt.date, dt.time)):
        return v.isoformat()
    if isinstance(v, dt.timedelta):
        return v.total_seconds()
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, decimal.Decimal):
        return float(v) if v.is_finite() else None
    if isinstance(v, bytes):
        return base64.b64encode(v).decode("ascii")
    if isinstance(v, dict):
        return {str(k): to_jsonable(x) for k, x in v.items()}
    if isinstance(v, list):
        if v and all(isinstance(p, tuple) and len(p) == 2 for p in v):  # an Arrow map: [(key, value), ...]
            return {str(k): to_jsonable(x) for k, x in v}
        return [to_jsonable(x) for x in v]
    if isinstance(v, tuple):
        return [to_jsonable(x) for x in v]
    return v


def _map_columns(table) -> set[str]:
    import pyarrow.types as pt

    return {f.name for f in table.schema if pt.is_map(f.type)}


def _value(v: Any, is_map: bool) -> Any:
    if is_map and isinstance(v, list):  # Arrow maps come back as [(key, value), ...]
        return {str(k): to_jsonable(x) for k, x in v}
    return to_jsonable(v)


def write_json(table, out: TextIO) -> None:
    maps = _map_columns(table)
    for row in table.to_pylist():
        out.write(json.dumps({k: _value(v, k in maps) for k, v in row.items()}, ensure_ascii=False) + "\n")


def _cell(v: Any) -> str:
    if v is None:
        return "NULL"
    text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 3] + "..."


def write_readable(table, out: TextIO) -> None:
    header = list(table.column_names)
    maps = _map_columns(table)
    rows = [[_cell(_value(v, k in maps)) for k, v in row.items()] for row in table.to_pylist()]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]
    numeric = [_is_numeric(table.schema.field(i).type) for i in range(len(header))]

    def line(cells: Iterable[str]) -> str:
        return "  ".join(c.rjust(widths[i]) if numeric[i] else c.ljust(widths[i])
                         for i, c in enumerate(cells)).rstrip() + "\n"

    out.write(line(header))
    out.write(line("-" * w for w in widths))
    for r in rows:
        out.write(line(r))
    out.write(f"({len(rows)} row{'' if len(rows) == 1 else 's'})\n")


def _is_numeric(t) -> bool:
    import pyarrow.types as pt

    return pt.is_integer(t) or pt.is_floating(t) or pt.is_decimal(t)


# ------------------------------------------------------------------------------------------------ command


def add_query_command(subparsers) -> argparse.ArgumentParser:
    """Register ``clwl query`` on the ``clwl`` subparsers; the handler is ``cmd_query``."""
    q = subparsers.add_parser(
        "query", help="answer SQL on the lake's Delta tables (no JVM)",
        description="Run SQL on the lake's Delta tables without starting a JVM. Every table at "
                    "<lake>/<layer>/<table> is addressable by its bare name (routing_replay, stuck_messages, "
                    "distribution, run_summary, quarantine, ...; gold wins, then silver, then bronze, when "
                    "names clash) and as <layer>_<table>. The SQL dialect is Apache DataFusion's (through the "
                    "deltalake package); SHOW TABLES lists what is there.",
        epilog="example: clwl query \"SELECT qmgr, count(*) AS n FROM routing_replay GROUP BY qmgr ORDER BY qmgr\"")
    q.add_argument("sql", metavar="SQL", help="the query")
    q.add_argument("--lake", type=Path, default=None, metavar="DIR",
                   help="the lake root (default: $CLWL_LAKE, else ./lake)")
    q.add_argument("--json", action="store_true", help="one JSON object per row (timestamps ISO-8601)")
    q.set_defaults(func=cmd_query)
    return q


def cmd_query(args: argparse.Namespace) -> int:
    lake = args.lake if args.lake is not None else default_lake()
    try:
        table = run_query(args.sql, lake)
    except QueryError as exc:
        print(f"clwl query: {exc}", file=sys.stderr)
        return EXIT_INPUT
    if args.json:
        write_json(table, sys.stdout)
    else:
        write_readable(table, sys.stdout)
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m clwl.query`` runs the command on its own (before it is wired into ``clwl``)."""
    parser = argparse.ArgumentParser(prog="clwl")
    add_query_command(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["query", *(sys.argv[1:] if argv is None else argv)])
    try:
        return args.func(args)
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
