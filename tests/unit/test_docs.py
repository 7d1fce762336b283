"""The project's documentation stays true and the repository stands alone.

(a) docs/tables.md documents every table of spark/tables.py: a section per table, its partitioning and keys, and
    every column with its type and nullability (a column added without docs, or removed with its docs left
    behind, fails); docs/landing.md names every column of the put file schema.
(b) Every relative link in README.md and docs/*.md points to a file of the repository.
(c) No file of the repository (tracked, or new and not ignored) points outside it: no path to the reference
    folder the project was written from, no mention of the notes file kept there.

Imports spark.tables (pyspark.sql.types only: no JVM) and the pure-Python put schema.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from clwl.parse.put_record import PUT_COLUMNS
from spark.tables import TABLES

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

# ---------------------------------------------------------------------------------------------------------------
# Markdown helpers

_FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.M | re.S)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)


def _without_code(text: str) -> str:
    """The text with fenced blocks and inline code blanked out (same length, so offsets stay)."""
    blank = lambda m: re.sub(r"[^\n]", " ", m.group(0))  # noqa: E731
    return _INLINE_CODE.sub(blank, _FENCE.sub(blank, text))


def _sections(text: str) -> dict[str, str]:
    """Heading text -> the section's text: from the heading to the next heading of the same or a higher level
    (headings inside fenced code are not headings)."""
    plain = _FENCE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    found = [(m.start(), len(m.group(1)), m.group(2).strip()) for m in _HEADING.finditer(plain)]
    out: dict[str, str] = {}
    for i, (start, level, title) in enumerate(found):
        end = next((s for s, lv, _ in found[i + 1:] if lv <= level), len(text))
        out[title] = text[start:end]
    return out


# ---------------------------------------------------------------------------------------------------------------
# (a) docs/tables.md against the table registry

# A column row of a table section: | `name` | type | yes/no | meaning |
_COLUMN_ROW = re.compile(r"^\|\s*`([A-Za-z_][A-Za-z0-9_]*)`\s*\|\s*([^|]+?)\s*\|\s*(yes|no)\s*\|", re.M)
_LISTED = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`")


def _table_sections() -> dict[str, str]:
    sections = _sections((DOCS / "tables.md").read_text(encoding="utf-8"))
    return {title: body for title, body in sections.items() if title in TABLES}


def _listed_after(section: str, label: str) -> tuple[str, ...] | None:
    """The backquoted names on the ``- <label>: ...`` line of a section (``()`` for "none"; None: no such line)."""
    m = re.search(rf"^- {re.escape(label)}:(.*)$", section, re.M)
    if m is None:
        return None
    return tuple(_LISTED.findall(m.group(1)))


def test_every_table_has_a_section_in_tables_md():
    sections = _table_sections()
    missing = [key for key in TABLES if key not in sections]
    assert not missing, f"docs/tables.md has no '### <layer>.<table>' heading for {missing}"


def test_tables_md_names_no_table_the_registry_lacks():
    # A heading that looks like a table key but is not one is a table removed or renamed, its docs left behind.
    text = (DOCS / "tables.md").read_text(encoding="utf-8")
    headings = {m.group(2).strip() for m in _HEADING.finditer(_FENCE.sub("", text))}
    stale = sorted(h for h in headings if re.fullmatch(r"(bronze|silver|gold)\.\w+", h) and h not in TABLES)
    assert not stale, f"docs/tables.md documents tables spark/tables.py does not have: {stale}"


@pytest.mark.parametrize("key", list(TABLES))
def test_every_column_is_documented_with_its_type(key):
    table = TABLES[key]
    section = _table_sections().get(key)
    if section is None:
        pytest.fail(f"docs/tables.md has no section for {key}")
    documented = {name: (dtype.strip(), nullable) for name, dtype, nullable in _COLUMN_ROW.findall(section)}
    missing = [c for c in table.columns if c not in documented]
    assert not missing, f"docs/tables.md, {key}: columns not documented: {missing}"
    extra = [c for c in documented if c not in table.columns]
    assert not extra, f"docs/tables.md, {key}: documents columns the table does not have: {extra}"
    for field in table.schema.fields:
        dtype, nullable = documented[field.name]
        assert dtype == field.dataType.simpleString(), (
            f"docs/tables.md, {key}.{field.name}: type {dtype!r}, the schema says {field.dataType.simpleString()!r}")
        assert nullable == ("yes" if field.nullable else "no"), (
            f"docs/tables.md, {key}.{field.name}: null {nullable!r}, the schema says nullable={field.nullable}")


@pytest.mark.parametrize("key", list(TABLES))
def test_partitioning_and_keys_are_documented(key):
    table = TABLES[key]
    section = _table_sections().get(key)
    if section is None:
        pytest.fail(f"docs/tables.md has no section for {key}")
    assert _listed_after(section, "Partitioned by") == table.partition_by, (
        f"docs/tables.md, {key}: '- Partitioned by:' should list {table.partition_by or 'none'}")
    assert _listed_after(section, "Key") == table.keys, f"docs/tables.md, {key}: '- Key:' should list {table.keys}"


def test_landing_md_documents_every_put_column():
    section = _sections((DOCS / "landing.md").read_text(encoding="utf-8")).get("Put records")
    assert section is not None, "docs/landing.md has no '## Put records' section"
    documented = set(re.findall(r"^\|\s*`([a-z_]+)`\s*\|", section, re.M))
    missing = [c.name for c in PUT_COLUMNS if c.name not in documented]
    assert not missing, f"docs/landing.md, Put records: columns not documented: {missing}"


def test_the_section_parser_sees_a_missing_column():
    # The checks above rely on _COLUMN_ROW: a section without a column's row must be seen as missing it.
    body = "### silver.x\n\n| column | type | null | meaning |\n| --- | --- | --- | --- |\n| `a` | string | no | A. |\n"
    assert {n for n, _, _ in _COLUMN_ROW.findall(body)} == {"a"}
    assert _sections(body + "\n## Next\n\n| `b` | int | yes | B. |\n")["silver.x"].count("`b`") == 0


# ---------------------------------------------------------------------------------------------------------------
# (b) relative links in the Markdown documentation

_INLINE_LINK = re.compile(r"!?\[(?:[^\]\n]|\][^(\n])*\]\(\s*<?([^)\s>]+)>?(?:\s+[\"'(][^)]*)?\)")
_REFERENCE_LINK = re.compile(r"^[ \t]{0,3}\[[^\]\n]+\]:[ \t]*<?(\S+?)>?(?:[ \t]+.*)?$", re.M)
_EXTERNAL = re.compile(r"^(?:[a-zA-Z][a-zA-Z0-9+.-]*:|//|#)")  # http:, mailto:, //host, #anchor in the same page


def _markdown_files() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def _links_in(text: str) -> list[tuple[int, str]]:
    """(line, target) of every link to a file of the repository (not a URL, not an anchor of the same page),
    outside code."""
    text = _without_code(text)
    found = sorted((m.start(), m.group(1)) for pattern in (_INLINE_LINK, _REFERENCE_LINK)
                   for m in pattern.finditer(text) if not _EXTERNAL.match(m.group(1)))
    return [(text.count("\n", 0, start) + 1, target) for start, target in found]


def test_link_scanner_finds_inline_and_reference_links():
    text = ("See [a](tables.md#x), ![b](img/c.png \"t\"), [web](https://x), [here](#y), `[code](no.md)`.\n"
            "```\n[fenced](no.md)\n```\n[r]: ../README.md\n")
    assert [t for _, t in _links_in(text)] == ["tables.md#x", "img/c.png", "../README.md"]


@pytest.mark.parametrize("doc", _markdown_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_point_to_files_that_exist(doc):
    broken = []
    for line, target in _links_in(doc.read_text(encoding="utf-8")):
        rel = target.split("#", 1)[0].split("?", 1)[0]
        if not rel:
            continue
        resolved = (doc.parent / rel).resolve()
        if not resolved.exists() or not resolved.is_relative_to(ROOT):
            broken.append(f"{doc.relative_to(ROOT)}:{line}: {target}")
    assert not broken, "links to files that do not exist in the repository:\n" + "\n".join(broken)


# ---------------------------------------------------------------------------------------------------------------
# (c) the repository stands alone

# Spelled in pieces, so that this file does not contain what it looks for.
FORBIDDEN = ("mq-domain" + "-notes", "../" + "shared/", "/work/" + "shared")


def _repository_files() -> list[Path]:
    """The files of the repository as they would be committed: tracked ones (still present) and new ones not
    ignored by .gitignore."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                             capture_output=True, check=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        pytest.skip("not a git checkout (or no git): the repository's file list is unknown")
    names = sorted({n for n in out.decode("utf-8", "surrogateescape").split("\0") if n})
    return [ROOT / n for n in names if (ROOT / n).is_file()]


def _is_binary(data: bytes) -> bool:
    return b"\0" in data[:8192]


def test_no_file_points_outside_the_repository():
    offenders = []
    for path in _repository_files():
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if _is_binary(data):
            continue
        text = data.decode("utf-8", "replace")
        for number, line in enumerate(text.splitlines(), start=1):
            hits = [w for w in FORBIDDEN if w in line]
            if hits:
                offenders.append(f"{path.relative_to(ROOT).as_posix()}:{number}: {', '.join(hits)}")
    assert not offenders, ("files that refer to material outside the repository (the project's own docs are in "
                           "docs/):\n" + "\n".join(offenders))


def test_the_readme_names_every_airflow_variable_and_the_nightly_schedule():
    """What an administrator sets up for the DAGs: every Variable they read (dags/clwl_dag_support.VARIABLES, read
    from its source) and the nightly cron, as the README's Airflow section says them."""
    import ast

    root = Path(__file__).resolve().parents[2]
    readme = (root / "README.md").read_text(encoding="utf-8")
    support = ast.parse((root / "dags" / "clwl_dag_support.py").read_text(encoding="utf-8"))
    (variables,) = [ast.literal_eval(n.value) for n in support.body if isinstance(n, ast.Assign)
                    and any(getattr(t, "id", None) == "VARIABLES" for t in n.targets)]
    for variable in variables.values():
        assert f"`{variable}`" in readme, variable
    nightly = (root / "dags" / "clwl_nightly.py").read_text(encoding="utf-8")
    assert 'CronDataIntervalTimetable("30 2 * * *", timezone="UTC")' in nightly
    assert "runs at 02:30 UTC every day, for the previous day" in readme


def test_the_explain_help_example_is_a_message_of_the_samples():
    """`clwl explain --help` shows an id a new user can paste after `make demo`: it is put on its date in the
    samples."""
    import argparse

    from clwl.cli.explain import add_explain_command

    sub = argparse.ArgumentParser(prog="clwl").add_subparsers()
    epilog = add_explain_command(sub).epilog
    msg_id, day = re.search(r"clwl explain ([0-9A-F]{48}) --date (\S+)", epilog).groups()
    puts = "".join(p.read_text() for p in (ROOT / "samples" / "landing" / day).glob("*/puts*.csv"))
    assert f",{msg_id}," in puts
