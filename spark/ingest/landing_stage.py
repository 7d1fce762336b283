"""The landing files a run parses, where its parse tasks can read them.

A parse task opens its files by path on the executor that runs it. In local mode that is the driver's own disk;
on a cluster whose nodes share nothing but the lake's object store (docs/deploying-cluster.md) a worker has no
landing folder, so the driver puts each file it is about to parse under the run's scratch prefix
(``<lake>/_ingest/<run_id>/landing/<date>/<qmgr>/<file>``, removed with the scratch) and the task copies it to its
own disk before parsing it: the parsers stay what they are, reading a local file, and the rows, positions and
quarantine are the same as in local mode. A file a task should read on its own disk and cannot find is an error
of the deployment, not of the file: the task fails naming the host and the path, instead of the file being
quarantined as unreadable (and skipped as unchanged by every later run).
"""

from __future__ import annotations

import contextlib
import os
import socket
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Iterator

from clwl.lake.storage import Location, get_file, is_object_store, lake_root, put_file
from clwl.landing.discovery import LandingFile
from spark.session import is_remote, session_master

#: Under the run's scratch folder: the staged copies of the landing files.
STAGED = "landing"


class LandingNotHere(RuntimeError):
    """A landing file the driver listed is not on the executor that should parse it."""


def tasks_read_the_store(spark, lake: Location) -> bool:
    """Whether the parse tasks must read the landing from the lake's store: the lake is on an object store and the
    executors may run on other hosts (a cluster master, or a Spark Connect server, whose hosts this process does
    not know). In local mode the executors are this process's JVM, on this disk."""
    if not is_object_store(lake_root(lake)):
        return False
    return is_remote(spark) or not session_master(spark).startswith("local")


def stage_landing(todo: list[LandingFile], scratch: Location, progress=lambda m: None) -> list[LandingFile]:
    """Put each file of ``todo`` that is read (not a skipped item) under ``<scratch>/landing/`` and return the
    files with their staged location as ``path`` (its name in the landing, ``source_file``, unchanged)."""
    staged, count, size = [], 0, 0
    for f in todo:
        if f.skipped or not f.path:
            staged.append(f)
            continue
        target = lake_root(scratch) / STAGED / f.source_file
        put_file(target, Path(f.path))
        count, size = count + 1, size + f.size_bytes
        staged.append(replace(f, path=str(target)))
    progress(f"staged {count} landing files ({size / 2**20:,.1f} MiB) on the lake's store for the executors")
    return staged


@contextlib.contextmanager
def readable_here(spec: LandingFile) -> Iterator[LandingFile]:
    """``spec`` as this executor reads it: a staged file copied to a local temporary file for the parse (removed
    after), a local one as it is; LandingNotHere when a local file the driver listed is not here."""
    if spec.skipped or not spec.path:
        yield spec
        return
    if is_object_store(lake_root(spec.path)):
        fd, local = tempfile.mkstemp(prefix="clwl-landing-", suffix="-" + Path(spec.source_file).name)
        os.close(fd)
        try:
            get_file(lake_root(spec.path), Path(local))
            yield replace(spec, path=local)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(local)
        return
    if not os.path.exists(spec.path):
        raise LandingNotHere(
            f"landing file {spec.source_file} is not at {spec.path} on {socket.gethostname()}, the executor that "
            "parses it: on a cluster, put the lake on an object store (the landing is then staged there) or mount "
            "the landing folder at the same path on every worker (docs/deploying-cluster.md)")
    yield spec
