"""Parsers for what MQ administrators can export: runmqsc text, MQ REST JSON, transmission queue
browses (amqsbcg, dmpmqmsg), amqsmon accounting and the project's message put records.

Every parser returns what it could read *and* a problem for everything it could not, with the file and
line; nothing is dropped silently.
"""

from __future__ import annotations

from pathlib import Path

from clwl.parse.common import InputError, MqscRecord, ParsedCapture, ParseProblem

__all__ = ["InputError", "MqscRecord", "ParsedCapture", "ParseProblem", "parser_modules"]


def parser_modules(*also: str) -> tuple[str, ...]:
    """The modules whose code decides what the parsers return, sorted: every module of this package and the clwl
    modules ``also`` names, with every clwl module they import, directly or not, at the top or in a function.
    Found from their source (with :mod:`ast`, nothing imported), so that a new parser module or helper is in
    without anyone listing it: the ingest reads every file again when one of them changes
    (:func:`spark.ingest.run_log.code_version`)."""
    import ast

    root = Path(__file__).resolve().parents[2]  # the folder holding the clwl package

    def source(name: str) -> Path:
        path = root.joinpath(*name.split("."))
        return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")

    todo = [*also, *(f"clwl.parse.{p.stem}".removesuffix(".__init__") for p in Path(__file__).parent.glob("*.py"))]
    seen = set(todo)
    while todo:
        name = todo.pop()
        package = name if source(name).name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(source(name).read_bytes())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):  # from a import b: a, and a.b when b is a module
                base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
                module = ".".join(base + ([node.module] if node.module else []))
                names = [module, *(f"{module}.{alias.name}" for alias in node.names)]
            else:
                continue
            for imported in names:
                if imported.split(".")[0] == "clwl" and imported not in seen and source(imported).is_file():
                    seen.add(imported)
                    todo.append(imported)
    return tuple(sorted(seen))
