"""What a table of the lake is: its columns (name, Spark SQL type, nullability), partitioning, keys, statistics
columns, CHECK constraints and change data feed (:class:`TableSpec`), and the types a column may have.

The tables themselves are spelled in clwl/lake/registry.py (bronze and silver, and the lookups) and
clwl/lake/registry_gold.py (gold); both build them with :func:`column` and :func:`table`. Importing it loads
nothing beyond the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter
from typing import Callable, Iterable

S, I, L, B, TS, NTZ, D, DBL = ("string", "int", "bigint", "boolean", "timestamp", "timestamp_ntz",  # noqa: E741
                               "date", "double")
NAMES = "array<string>"  # elements never null
ATTRS = "map<string,string>"  # bare keyword (CURRENT) -> null value
VERSIONS = "map<string,bigint>"  # values may be null
#: Every type a column may have.
TYPES = frozenset({S, I, L, B, TS, NTZ, D, DBL, NAMES, ATTRS, VERSIONS})


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # one of TYPES
    nullable: bool = True


@dataclass(frozen=True)
class TableSpec:
    layer: str  # bronze | silver | gold
    name: str
    fields: tuple[Column, ...]
    partition_by: tuple[str, ...]
    keys: tuple[str, ...]
    description: str
    # Columns Delta keeps min/max statistics of (delta.dataSkippingStatsColumns); empty: Delta's default, the
    # first 32 columns. On the message-sized tables the statistics of 32 columns were a third of a write.
    stats_columns: tuple[str, ...] = ()
    # Delta CHECK constraints, (name, Spark SQL expression) pairs: Delta stores each as the table property
    # ``delta.constraints.<name>`` (names lower case). An expression that may be null says what null means.
    checks: tuple[tuple[str, str], ...] = ()
    change_data_feed: bool = False  # delta.enableChangeDataFeed

    @property
    def key(self) -> str:
        return f"{self.layer}.{self.name}"

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.fields)

    @property
    def constraints(self) -> dict[str, str]:
        """The CHECK constraints, name -> expression, as Delta keeps them (``delta.constraints.<name>``)."""
        return dict(self.checks)

    @property
    def properties(self) -> dict[str, str]:
        """The Delta table properties the registry sets on the table (constraints aside): statistics columns and
        the change data feed."""
        props = {}
        if self.stats_columns:
            props["delta.dataSkippingStatsColumns"] = ",".join(self.stats_columns)
        if self.change_data_feed:
            props["delta.enableChangeDataFeed"] = "true"
        return props

    def index(self, column: str) -> int:
        """The 0-based position of ``column`` in a row of the table (KeyError naming the table if none)."""
        try:
            return self.columns.index(column)
        except ValueError:
            raise KeyError(f"{self.key} has no column {column!r}") from None

    def value_checks(self) -> tuple[tuple[int, str, str, int, int], ...]:
        """(index, column, what, lo, hi) of the columns whose values Arrow may refuse: "int" for integers beyond
        the column's range [lo, hi] (int: 32 bits, bigint: 64), "text" (lo = hi = 0) for text that may hold a lone
        surrogate (strings, string maps and string arrays). What the ingest's parse body checks each row against,
        from the registry alone (no pyspark)."""
        bounds = {"int": (-(1 << 31), (1 << 31) - 1), "bigint": (-(1 << 63), (1 << 63) - 1)}
        texts = {"string", "array<string>", "map<string,string>", "map<string,bigint>"}
        return tuple((i, c.name, "int", *bounds[c.type]) if c.type in bounds else (i, c.name, "text", 0, 0)
                     for i, c in enumerate(self.fields) if c.type in bounds or c.type in texts)

    def row(self, **values: object) -> tuple:
        """A tuple in schema order from keyword values; every column must be given (None for null)."""
        cols = self.columns
        if len(values) != len(cols) or any(c not in values for c in cols):
            missing = [c for c in cols if c not in values]
            extra = [k for k in values if k not in cols]
            raise ValueError(f"{self.key}: row missing {missing}, unknown {extra}")
        return tuple(values[c] for c in cols)

    def row_from(self, **constants: object) -> Callable[[object], tuple]:
        """A function ``obj -> tuple in schema order``: each column is ``constants[column]`` when given, else the
        attribute of ``obj`` of the same name. Rows are built by column name, so a column added, removed or moved
        in the schema can never shift the values of the others."""
        cols = self.columns
        from_obj = [c for c in cols if c not in constants]
        unknown = sorted(set(constants) - set(cols))
        if unknown:
            raise ValueError(f"{self.key}: no column {unknown}")
        get = attrgetter(*from_obj) if len(from_obj) > 1 else (lambda o, g=attrgetter(*from_obj): (g(o),))
        if not constants:
            return get
        template = [constants.get(c) for c in cols]
        slots = [i for i, c in enumerate(cols) if c not in constants]

        def build(obj: object) -> tuple:
            out = template.copy()
            for i, v in zip(slots, get(obj)):
                out[i] = v
            return tuple(out)

        return build


def column(name: str, dtype: str, nullable: bool = True) -> Column:
    """A column of a table spec: its name, Spark SQL type and nullability."""
    return Column(name, dtype, nullable)


def table(layer: str, name: str, fields: list[Column], partition_by: Iterable[str], keys: Iterable[str],
          description: str, stats_columns: Iterable[str] = (), checks: dict[str, str] | None = None,
          change_data_feed: bool = False) -> TableSpec:
    """A table spec from lists: how the registries spell their tables."""
    return TableSpec(layer, name, tuple(fields), tuple(partition_by), tuple(keys), description, tuple(stats_columns),
                     tuple((checks or {}).items()), change_data_feed)
