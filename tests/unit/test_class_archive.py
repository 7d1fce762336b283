"""The JVM's class archive (spark.session.class_archive_options): the first JVM dumps its classes to a file of its
own when it exits, a later start moves the largest finished dump into place and maps it, another JDK or other jars
get another archive, and CLWL_JVM_CLASS_ARCHIVE=off turns it off. No JVM is started here: the options are text,
and the dumps are files made by hand with the names and ages the JVM's would have."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from spark import session


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("CLWL_IVY_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(session.CLASS_ARCHIVE_ENV, raising=False)
    return tmp_path / "cache" / "jvm-classes"


@pytest.fixture
def jars(tmp_path) -> list[str]:
    jar = tmp_path / "delta-spark.jar"
    jar.write_bytes(b"x" * 10)
    return [str(jar)]


def _java(tmp_path) -> str:
    java = tmp_path / "bin" / "java"
    java.parent.mkdir(exist_ok=True)
    java.write_text("#!/bin/sh\n")
    return str(java)


def _dump(options: str, size: int, age_s: float, n: int = 0) -> Path:
    """The file the JVM started with ``options`` would write at its exit (``n``: another JVM of the same key)."""
    part = Path(options.split("-XX:ArchiveClassesAtExit=")[1].split()[0])
    if n:
        part = part.with_name(part.name.split(".jsa.")[0] + f".jsa.{n}-{n}.part")
    part.write_bytes(b"j" * size)
    past = time.time() - age_s
    os.utime(part, (past, past))
    return part


def test_first_start_dumps_a_later_start_maps_the_largest_settled_dump(cache, jars, tmp_path):
    java = _java(tmp_path)
    first = session.class_archive_options(jars, java)
    assert "-XX:ArchiveClassesAtExit=" in first and "-XX:SharedArchiveFile" not in first
    assert "-Xlog:cds=off" in first and "-XX:+IgnoreUnrecognizedVMOptions" in first
    # three JVMs started before any dump existed; the third is still writing its dump
    small, large, young = _dump(first, 100, 120), _dump(first, 300, 120, n=2), _dump(first, 500, 1, n=3)
    options = session.class_archive_options(jars, java)
    archive = Path(options.split("-XX:SharedArchiveFile=")[1].split()[0])
    assert archive.stat().st_size == 300 and "-Xshare:auto" in options
    assert not small.exists() and not large.exists() and young.exists()
    # the archive stays; the young dump, once settled, is removed without replacing it
    os.utime(young, (time.time() - 120, time.time() - 120))
    assert session.class_archive_options(jars, java) == options
    assert not young.exists() and archive.stat().st_size == 300


def test_other_jars_or_another_jdk_get_their_own_archive(cache, jars, tmp_path):
    java = _java(tmp_path)
    _dump(session.class_archive_options(jars, java), 100, age_s=120)
    mapped = session.class_archive_options(jars, java)
    assert "-XX:SharedArchiveFile=" in mapped
    Path(jars[0]).write_bytes(b"y" * 11)  # another jar (size)
    assert "-XX:ArchiveClassesAtExit=" in session.class_archive_options(jars, java)
    other_java = tmp_path / "jdk21" / "bin" / "java"
    other_java.parent.mkdir(parents=True)
    other_java.write_text("#!/bin/sh\n")
    assert "-XX:ArchiveClassesAtExit=" in session.class_archive_options(jars, str(other_java))


def test_off_and_unwritable(cache, jars, tmp_path, monkeypatch):
    monkeypatch.setenv(session.CLASS_ARCHIVE_ENV, "off")
    assert session.class_archive_options(jars, _java(tmp_path)) == ""
    monkeypatch.delenv(session.CLASS_ARCHIVE_ENV)
    assert session.class_archive_options([str(tmp_path / "missing.jar")], _java(tmp_path)) == ""
