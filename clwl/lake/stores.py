"""The lake's two stores behind one interface, :class:`Store`: :class:`LocalStore` (a local or mounted folder, here)
and :class:`~clwl.lake.s3_store.S3Store` (an S3 bucket or an S3-compatible server, clwl/lake/s3_store.py), as Great
Expectations' store backends or delta-rs' storage options do. :func:`clwl.lake.storage.store_for` chooses
one from a location, once; the callers then ask the store, never "is this s3://?".

A store takes locations of its own kind: a :class:`~pathlib.Path` for the local one, a
:class:`clwl.lake.storage.LakeLocation` of its bucket for S3. An ETag names the version of an object that was read; a
conditional write succeeds only while the object is still that version (``If-None-Match: *`` to create, ``If-Match:
<etag>`` to replace: the server answers 412 otherwise, raised as :class:`StorageConflict`). Locally the same
operations run over files (create: a finished file linked into place; replace: ``os.replace``; the ETag is the file's
inode, size and modification time), but a condition is checked and then the file replaced, not in one step: local
writers are serialised by the lake lock's ``flock`` (:attr:`Store.atomic_conditions` says which kind a store is).

No location parsing here (clwl/lake/storage.py) and no import of it: storage builds on this module.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from clwl.lake.lake_files import MAX_METADATA_BYTES, StorageConflict, local_folder_exists, read_lake_file


@dataclass(frozen=True)
class StoredObject:
    data: bytes
    etag: str  # the version read; give it to put_if_match or replace


class Store(ABC):
    """What the lake asks of where it is stored. ``location`` is a Path (LocalStore) or a LakeLocation (S3Store)."""

    #: Whether the store checks a write's condition in the same step as the write (S3's If-None-Match / If-Match).
    #: False locally: two writers must be kept apart otherwise (the lake lock takes ``flock`` there, a lease here).
    atomic_conditions: bool

    # -- one object
    @abstractmethod
    def get(self, location: Any, limit: int = MAX_METADATA_BYTES) -> StoredObject:
        """The bytes and ETag of the object, at most ``limit`` bytes (a lake metadata object). FileNotFoundError
        when there is none; StorageError (a LakeFileError) for anything else."""

    @abstractmethod
    def put(self, location: Any, data: bytes) -> None:
        """Write the object whole, unconditionally (a file only the lake's writer writes: a validation result, a
        report, a scratch note). Readers see the old object or the new one, never a part."""

    def append(self, location: Any, data: bytes, limit: int = MAX_METADATA_BYTES) -> None:
        """Add ``data`` at the end of the object (a log of the lake's own writer: the run's lineage events). An
        object store keeps whole objects only: the object so far (at most ``limit`` bytes) and ``data``, put
        whole; a local file is appended to."""
        try:
            before = self.get(location, limit).data
        except FileNotFoundError:
            before = b""
        self.put(location, before + data)

    @abstractmethod
    def put_if_absent(self, location: Any, data: bytes) -> str:
        """Create the object unless it exists; its ETag. StorageConflict when it exists."""

    @abstractmethod
    def put_if_match(self, location: Any, data: bytes, etag: str) -> str:
        """Replace the object only while it is still the version ``etag``; the new ETag. StorageConflict when it
        was replaced, or removed, since."""

    @abstractmethod
    def replace(self, location: Any, data: bytes, etag: str | None) -> None:
        """Replace a commit point (the published pointer) in one atomic step: locally a finished file renamed
        over it (writers are serialised by the lake lock; ``etag`` is not checked); on S3, which has no rename,
        a conditional put on ``etag``, the version read (None: there was none, create it). StorageConflict when
        another writer changed it since."""

    @abstractmethod
    def put_file(self, location: Any, source: Path) -> None:
        """Write the local file ``source`` as the object, streamed (never whole in memory)."""

    @abstractmethod
    def get_file(self, location: Any, target: Path) -> None:
        """Write the object into the local file ``target``, streamed."""

    @abstractmethod
    def copy(self, source: Any, target: Any) -> int | None:
        """Copy one object to another location of this store, no byte passing through this process where the
        store allows (a hard link locally, a server-side copy on S3); the copy's modification time in
        milliseconds when the store keeps one apart from the source's (None: the caller's clock)."""

    @abstractmethod
    def delete(self, location: Any) -> None:
        """Remove the object (nothing when there is none)."""

    # -- a folder (a prefix)
    @abstractmethod
    def list(self, location: Any) -> list[tuple[str, int]]:
        """Every object under the folder, as (name relative to it, size), sorted; [] when none."""

    @abstractmethod
    def list_folders(self, location: Any) -> list[str]:
        """The names of the folders directly under it, sorted; [] when none."""

    @abstractmethod
    def exists(self, location: Any) -> bool:
        """Whether anything is there (a local file or folder; on S3 a non-empty prefix)."""

    @abstractmethod
    def is_folder(self, location: Any) -> bool:
        """Whether a folder of the lake is there (locally a folder: StorageError, one line, for a path that cannot
        be looked at; on S3 a non-empty prefix)."""

    @abstractmethod
    def delete_prefix(self, location: Any) -> int:
        """Remove everything under the folder; the number of objects removed (locally: 1 when it was there)."""

    @abstractmethod
    def remove_if_empty(self, location: Any) -> None:
        """Remove the folder when nothing is left in it (an object store has no empty folders: nothing to do)."""

    @abstractmethod
    def folder_time(self, location: Any) -> float | None:
        """When the folder was last changed (seconds since the epoch), or None where the store keeps no folder
        times (S3). OSError when it cannot be looked at."""

    @abstractmethod
    def temporaries(self, folder: Any) -> list[Any]:
        """What a killed atomic replace left in ``folder`` (locally its ``.*.tmp`` files; a put on S3 is whole or
        absent: none)."""

    # -- naming it to others
    @abstractmethod
    def absolute(self, location: Any, *, resolve: bool = False) -> Any:
        """The location as another process names it: a local path made absolute (``resolve``: links resolved
        too), since Spark executors, deltalake and Airflow tasks may not share this one's working folder."""

    @abstractmethod
    def uri(self, location: Any) -> str:
        """``file:///...`` or ``s3://bucket/key``: what Spark, deltalake and Airflow's assets take."""

    @abstractmethod
    def storage_options(self, env: Mapping[str, str] | None = None) -> dict[str, str] | None:
        """deltalake's ``storage_options`` (None locally). It holds the secrets: pass it on, never print it."""

    @abstractmethod
    def arrow_filesystem(self, location: Any) -> Any:
        """A ``pyarrow.fs`` file system rooted at the folder (Arrow's own, no Python in its I/O threads)."""

    @abstractmethod
    def check_writable(self, root: Any) -> None:
        """Refuse (StorageError, one line) a lake this store cannot keep its promises for, before anything is
        written: on S3 missing credentials, a missing bucket, a server that ignores conditional writes."""


# ------------------------------------------------------------------------------------------------- local disk
def _local_etag(path: Path) -> str:
    st = os.stat(path)
    return f"{st.st_ino:x}-{st.st_size:x}-{st.st_mtime_ns:x}"


def _write_beside(path: Path, data: bytes) -> str:
    """``data`` in a finished (fsynced) temporary file beside ``path``; its name."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        _unlink(tmp)
        raise
    return tmp


def _unlink(path: str | Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _replace_local(path: Path, data: bytes) -> None:
    """Write ``data`` beside ``path``, fsync, then ``os.replace``: readers see the old file or the new one."""
    tmp = _write_beside(path, data)
    try:
        os.replace(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise


def _fsync_folder(folder: Path) -> None:
    try:
        dfd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:  # pragma: no cover - a file system without directory fsync
        pass


class LocalStore(Store):
    """A local (or mounted) folder: files, written beside and renamed or linked into place."""

    atomic_conditions = False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LocalStore)

    def __hash__(self) -> int:
        return hash(LocalStore)

    def get(self, location, limit=MAX_METADATA_BYTES):
        path = Path(location)
        data = read_lake_file(path, limit)  # bounded, a regular file only: never a FIFO's hang
        return StoredObject(data, _local_etag(path))

    def put(self, location, data):
        path = Path(location)
        path.parent.mkdir(parents=True, exist_ok=True)
        _replace_local(path, data)

    def append(self, location, data, limit=MAX_METADATA_BYTES):
        path = Path(location)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "ab") as f:
            f.write(data)

    def put_if_absent(self, location, data):
        # A finished file linked onto the name: the link fails when the name exists, and no reader sees a part.
        path = Path(location)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = _write_beside(path, data)
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise StorageConflict(f"{path} exists already (created by another writer)") from None
        finally:
            _unlink(tmp)
        return _local_etag(path)

    def put_if_match(self, location, data, etag):
        path = Path(location)
        try:
            if _local_etag(path) != etag:  # checked, then replaced: local writers are serialised by flock
                raise StorageConflict(f"{path} was replaced by another writer since it was read")
        except FileNotFoundError:
            raise StorageConflict(f"{path} was removed by another writer since it was read") from None
        _replace_local(path, data)
        return _local_etag(path)

    def replace(self, location, data, etag):
        path = Path(location)
        path.parent.mkdir(parents=True, exist_ok=True)
        _replace_local(path, data)
        _fsync_folder(path.parent)  # the rename itself survives a crash

    def put_file(self, location, source):
        target = Path(location)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)

    def get_file(self, location, target):
        shutil.copyfile(Path(location), target)

    def copy(self, source, target):
        target = Path(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(Path(source), target)
        except OSError:  # another file system, or links not allowed: a byte copy
            shutil.copyfile(Path(source), target)
        return int(target.stat().st_mtime * 1000)

    def delete(self, location):
        try:
            os.unlink(Path(location))
        except FileNotFoundError:
            pass

    def list(self, location):
        root = Path(location)
        if not root.is_dir():
            return []
        return sorted((p.relative_to(root).as_posix(), p.stat().st_size) for p in root.rglob("*") if p.is_file())

    def list_folders(self, location):
        root = Path(location)
        return sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []

    def exists(self, location):
        return Path(location).exists()

    def is_folder(self, location):
        return local_folder_exists(location)

    def delete_prefix(self, location):
        there = Path(location).exists()
        shutil.rmtree(Path(location), ignore_errors=True)
        return int(there)

    def remove_if_empty(self, location):
        try:
            Path(location).rmdir()  # only when empty
        except OSError:
            pass

    def folder_time(self, location):
        return Path(location).stat().st_mtime

    def temporaries(self, folder):
        folder = Path(folder)
        return sorted(folder.glob(".*.tmp")) if folder.is_dir() else []

    def absolute(self, location, *, resolve=False):
        path = Path(location).expanduser()
        return path.resolve() if resolve else path.absolute()

    def uri(self, location):
        return Path(location).as_uri()

    def storage_options(self, env=None):
        return None

    def arrow_filesystem(self, location):
        import pyarrow.fs as pafs

        return pafs.SubTreeFileSystem(str(location), pafs.LocalFileSystem())

    def check_writable(self, root):
        return None
