"""The lake's own metadata files, read safely: regular files of bounded size only, and Delta logs checked for
entries that would hang a reader. Standard library only, so that clwl.lake.door and clwl.lake.published both build on it
without importing each other."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

# ------------------------------------------------------------------------------------- the lake's own metadata
# The readers (clwl query, clwl explain, the report, the publish, the run log) read the lake's metadata files
# (gold/_published.json, Delta logs, the lock and scratch notes) through these functions only, so that a damaged
# lake is one line naming the file, never a reader that hangs (a FIFO), runs out of memory (a link to /dev/zero)
# or dies with a traceback (JSON nested 100,000 deep).
#
# A symbolic link is followed (a lake may be assembled from links, e.g. a copied lake); what it names must be a
# regular file all the same, so a link to a device or a FIFO is refused like the device or FIFO itself.

#: The largest metadata file read (the pointer, a Delta commit, a lock or scratch note): far above what a
#: healthy lake writes (a pointer is a few KiB), far below what would strain a reader's memory.
MAX_METADATA_BYTES = 64 << 20


class LakeFileError(ValueError):
    """A metadata file of the lake cannot be used: one line for stderr that names the file and why."""


class StorageError(LakeFileError):
    """The lake's location or store cannot be used: one line for stderr naming the location or variable."""


class StorageConflict(StorageError):
    """A conditional write lost: the object was created or replaced by another writer since it was read."""


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def _not_regular(path: Path, mode: int) -> LakeFileError:
    link = f" (a link to {os.readlink(path)})" if os.path.islink(path) else ""
    return LakeFileError(f"{path}{link} is {_kind(mode)}, not a regular file: the lake is damaged")


def read_lake_file(path: Path | str, limit: int = MAX_METADATA_BYTES) -> bytes:
    """The bytes of the lake metadata file ``path``: a regular file (a link is followed) of at most ``limit``
    bytes. FileNotFoundError when there is none (the caller's own answer); LakeFileError for anything else."""
    path = Path(path)
    try:
        before = os.stat(path)  # refuses a device or FIFO without opening it (opening a device can act)
        if not stat.S_ISREG(before.st_mode):
            raise _not_regular(path, before.st_mode)
        # O_NONBLOCK: were it swapped for a FIFO since the stat, open() returns at once instead of waiting
        # for a writer, and fstat() below refuses it.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        if os.path.islink(path):  # not "no file": a reader would silently take the lake as having none
            raise LakeFileError(f"{path} is a link to nothing ({os.readlink(path)}): the lake is damaged") from None
        raise
    except OSError as exc:
        raise LakeFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _not_regular(path, st.st_mode)
        if st.st_size > limit:
            raise LakeFileError(f"{path} is {st.st_size} bytes, more than the {limit} a lake metadata file may "
                                f"have: the lake is damaged")
        chunks, size = [], 0
        while size <= limit:  # bounded even if the file grows while it is read
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise LakeFileError(f"{path} grew past {limit} bytes while it was read: the lake is damaged")
        return b"".join(chunks)
    except OSError as exc:
        raise LakeFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def read_lake_json(path: Path | str, limit: int = MAX_METADATA_BYTES) -> Any:
    """The JSON value of the lake metadata file ``path`` (:func:`read_lake_file`); LakeFileError when it is not
    UTF-8 JSON, including JSON nested too deeply to parse (json raises RecursionError there)."""
    raw = read_lake_file(path, limit)
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise LakeFileError(f"{path} is not UTF-8 text (byte {exc.start}): the lake is damaged") from None
    except json.JSONDecodeError as exc:
        raise LakeFileError(f"{path} is not JSON ({exc}): the lake is damaged") from None
    except ValueError:  # int() refuses more than 4,300 digits (sys.get_int_max_str_digits): no lake writes one
        raise LakeFileError(f"{path} holds an integer too long to read (over 4,300 digits): the lake is "
                            f"damaged") from None
    except RecursionError:
        raise LakeFileError(f"{path} is JSON nested too deeply to read: the lake is damaged") from None


def local_folder_exists(path: Path | str) -> bool:
    """``path`` is a folder (a link to one too); False when nothing, or a file, is there. StorageError, one line,
    when the path cannot be looked at: a name longer than the file system takes (over 255 bytes), a folder on
    the way that cannot be searched (Path.is_dir() raises those, where it answers False for "not there")."""
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        raise StorageError(f"cannot look at {path}: {exc.strerror or exc}") from None


def is_remote(path: Path | str) -> bool:
    text = str(path)
    return "://" in text and not text.startswith("file:")


def check_delta_log(table: Path | str) -> None:
    """Refuse (LakeFileError) a local Delta table whose ``_delta_log`` holds an entry that is neither a regular
    file nor a folder (a FIFO, a device, a socket, a link to one or to nothing): deltalake lists the log and
    reads its files itself, and a FIFO there (``_last_checkpoint``) would hang it. Names and file types only,
    nothing is read. A table without a log, or not on a local file system, is left to the caller."""
    if is_remote(table):
        return
    log = Path(str(table).removeprefix("file://")) / "_delta_log"
    try:
        entries = os.scandir(log)
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        raise LakeFileError(f"cannot list {log}: {exc.strerror or exc}") from None
    with entries:
        for e in entries:
            if e.is_file() or e.is_dir():  # the directory entry's type: no system call unless a link
                continue
            try:
                mode = os.stat(e.path).st_mode
            except FileNotFoundError:
                raise LakeFileError(f"{e.path} is a link to nothing ({os.readlink(e.path)}): the lake is "
                                    f"damaged") from None
            except OSError as exc:
                raise LakeFileError(f"cannot read {e.path}: {exc.strerror or exc}") from None
            raise _not_regular(Path(e.path), mode)
