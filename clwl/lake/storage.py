"""Where the lake is: a local (or mounted) folder, or an object store (``s3://bucket/prefix``), and the store that
keeps it (clwl/lake/stores.py), chosen here once from the location.

The lake as a location (:class:`LakeLocation`, :func:`lake_root`):

- ``/data/lake``, ``lake``, ``file:///data/lake``: a local folder; callers keep a :class:`pathlib.Path`;
- ``s3://bucket/prefix``: an S3 bucket or an S3-compatible server. A :class:`LakeLocation` joins like a path
  (``root / "gold" / "_published.json"``) and prints as its URI, but it is not a file-system path: a call of
  ``os``/``open`` on it fails with TypeError instead of writing a local folder named ``s3:``;
- a typo (``s3:/bucket``, ``s3//bucket``, ``s3:bucket``), an unknown scheme (``gs://``, ``s3a://``) or a bad bucket
  name: :class:`StorageError`, one line naming it.

:func:`store_for` gives the :class:`~clwl.lake.stores.Store` of a location: a
:class:`~clwl.lake.stores.LocalStore` for a Path, an :class:`~clwl.lake.s3_store.S3Store` of its bucket for a
LakeLocation. It is the one place that asks which kind a location is; a caller asks the store (get, put,
put_if_absent, put_if_match, replace, list, delete, ...). The functions below (:func:`read_object`,
:func:`put_if_absent`, :func:`replace_if_match`, ...) are the same operations for a caller that holds one location:
each asks :func:`store_for` and delegates.

Credentials and endpoint come from the environment only (never from a file of the repository or an argument that
a log would print); :mod:`clwl.lake.s3_env` reads them, docs/object-storage.md says what each does. The
same values go to deltalake (:func:`storage_options`), pyarrow (:func:`arrow_filesystem`) and the store's own
operations (obstore: the Rust ``object_store`` crate deltalake itself uses, so the three agree).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from clwl.lake.lake_files import MAX_METADATA_BYTES, StorageConflict, StorageError
from clwl.lake.s3_env import ENV_ACCESS_KEY, ENV_SECRET_KEY
from clwl.lake.s3_store import S3Store, no_bucket, one_line
from clwl.lake.stores import LocalStore, Store, StoredObject

# Names callers import from here: the errors, the stores and the obstore error's one line.
__all__ = ["LakeLocation", "Location", "LocalStore", "S3Store", "Store", "StoredObject", "StorageConflict",
           "StorageError", "no_bucket", "one_line", "lake_root", "is_object_store", "store_for"]

#: Schemes of an object store this lake can live on.
OBJECT_SCHEMES = ("s3",)
#: Scheme names that a mistyped or unsupported lake URI starts with: ``s3:/x`` or ``gs://x`` is refused, never
#: taken as a local folder named ``s3:`` or ``gs:``.
KNOWN_SCHEMES = ("s3", "s3a", "s3n", "gs", "gcs", "abfs", "abfss", "az", "adl", "wasb", "wasbs", "hdfs", "http",
                 "https", "file", "oss", "r2", "minio")

_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")  # S3's bucket naming rules (3-63 characters)
#: ``user[:password]@`` before the host of a URI.
_USER_INFO = re.compile(r"/*[^/@]*@")


# ----------------------------------------------------------------------------------------------- locations
@dataclass(frozen=True)
class LakeLocation:
    """A location on an object store: ``s3://<bucket>/<key>`` (key: no leading or trailing slash, may be empty).
    Joins like a path (``loc / "gold"``), prints as its URI; deliberately no ``__fspath__``."""

    scheme: str
    bucket: str
    key: str = ""

    @classmethod
    def parse(cls, text: str) -> "LakeLocation":
        """The object-store location ``text`` (``s3://bucket/prefix``); StorageError for anything else."""
        root = lake_root(text)
        if not isinstance(root, LakeLocation):
            raise StorageError(f"{text}: not an object-store location (s3://bucket/prefix)")
        return root

    def __str__(self) -> str:
        return f"{self.scheme}://{self.bucket}/{self.key}" if self.key else f"{self.scheme}://{self.bucket}"

    @property
    def uri(self) -> str:
        return str(self)

    def __truediv__(self, part: str | os.PathLike) -> "LakeLocation":
        parts = [p for p in str(part).split("/") if p]
        if not parts or any(p in (".", "..") for p in parts):
            raise StorageError(f"{self} / {part!r}: not a name within the lake")
        return LakeLocation(self.scheme, self.bucket, "/".join(filter(None, (self.key, *parts))))

    @property
    def name(self) -> str:
        return self.key.rsplit("/", 1)[-1]

    @property
    def parent(self) -> "LakeLocation":
        return LakeLocation(self.scheme, self.bucket, self.key.rsplit("/", 1)[0] if "/" in self.key else "")

    @property
    def is_remote(self) -> bool:
        return True

    def exists(self) -> bool:
        """Whether anything is stored under this location (a "folder": a non-empty prefix), as a reader that
        asks ``Path.exists()`` of a folder of the lake means it (the report's validation folder)."""
        return has_prefix(self)


Location = Path | LakeLocation


def lake_root(text: str | os.PathLike | LakeLocation) -> Location:
    """The lake named by ``text`` (``--lake``, ``$CLWL_LAKE``): a :class:`LakeLocation` for ``s3://bucket/prefix``,
    else a :class:`~pathlib.Path` exactly as given (``file://`` removed). StorageError, one line, for a typo of a
    URI (``s3:/bucket``, ``s3//bucket``), a scheme this lake does not support or a bad bucket name."""
    if isinstance(text, LakeLocation):
        return text
    raw = os.fspath(text) if isinstance(text, os.PathLike) else str(text)
    if not raw:  # Path("") is the working folder: a lake nobody named
        raise StorageError("an empty lake location: give a folder or s3://bucket/prefix")
    if raw.startswith("file://"):
        return Path(raw.removeprefix("file://") or "/")
    match = re.match(r"([A-Za-z][A-Za-z0-9+.-]*)(:/{0,3}|/{2})(.*)\Z", raw, re.S)
    if match is None or (match.group(1).lower() not in KNOWN_SCHEMES and match.group(2) != "://"):
        return Path(raw)  # a plain path (one that merely contains a colon, like "day:1", stays a path)
    scheme, sep, rest = match.group(1), match.group(2), match.group(3)
    if _USER_INFO.match(rest):  # s3://user:password@bucket: never printed, never used
        raw = f"{raw[:match.start(3)]}***@{rest.split('@', 1)[1]}"
        raise StorageError(f"{raw}: a lake location carries no credentials (they were not used); give them in "
                           f"{ENV_ACCESS_KEY} and {ENV_SECRET_KEY} (docs/object-storage.md)")
    if sep != "://":
        fixed = f"{scheme.lower()}://{rest.lstrip(':/')}"
        raise StorageError(f"{raw}: not a lake location; did you mean {fixed}? (an object store is "
                           f"scheme://bucket/prefix, a local lake a folder path)")
    if scheme not in OBJECT_SCHEMES:
        raise StorageError(f"{raw}: the scheme {scheme}:// is not supported for a lake (supported: "
                           f"{', '.join(s + '://' for s in OBJECT_SCHEMES)} or a local folder path)")
    bucket, _, key = rest.partition("/")
    if not _BUCKET.fullmatch(bucket) or ".." in bucket:
        raise StorageError(f"{raw}: {bucket!r} is not a valid bucket name (3-63 lowercase letters, digits, dots, "
                           f"hyphens)")
    parts = key.split("/")
    if "" in parts[:-1] or any(p in (".", "..") for p in parts):
        raise StorageError(f"{raw}: the prefix {key!r} has an empty, '.' or '..' segment")
    return LakeLocation(scheme, bucket, key.strip("/"))


def is_object_store(location: Any) -> bool:
    return isinstance(location, LakeLocation)


# ----------------------------------------------------------------------------------------------- the store
_LOCAL = LocalStore()


def store_for(location: Any) -> Store:
    """The store that keeps ``location``: an S3Store of its bucket for an object-store location, else the local
    one. The one place that asks which kind a location is."""
    if isinstance(location, LakeLocation):
        return S3Store(location.bucket)
    return _LOCAL


def storage_options(location: Any, env: Mapping[str, str] | None = None) -> dict[str, str] | None:
    """deltalake's ``storage_options`` for a table at ``location`` (None for a local one): the environment's
    settings spelled as deltalake's keys. It holds the secrets: pass it on, never print it."""
    return store_for(location).storage_options(env)


def arrow_filesystem(location: LakeLocation, env: Mapping[str, str] | None = None) -> Any:
    """A ``pyarrow.fs.SubTreeFileSystem`` over ``location`` on Arrow's own S3 file system (no Python in Arrow's
    I/O threads: clwl.lake.door.open_delta says why that matters), with the same settings."""
    return S3Store(location.bucket).arrow_filesystem(location, env)


def arrow_paths(paths: list[str]) -> tuple[Any, list[str]]:
    """Files named by absolute paths or ``s3://`` URIs (a Delta table's data files), as Arrow reads them: (None,
    the paths) for local files; for files on an object store, Arrow's own S3 file system over their bucket and
    the keys in it (``pyarrow.dataset.dataset(keys, filesystem=fs)``)."""
    remote = [p for p in paths if str(p).startswith("s3://")]
    if not remote:
        return None, list(paths)
    locations = [lake_root(str(p)) for p in paths]
    buckets = {loc.bucket for loc in locations if isinstance(loc, LakeLocation)}
    if len(buckets) != 1 or len(remote) != len(paths):
        raise StorageError(f"{paths[0]}: files of one read must all be in one bucket")
    return arrow_filesystem(LakeLocation("s3", buckets.pop())), [loc.key for loc in locations]


def check_bucket(root: LakeLocation) -> None:
    """Refuse (StorageError, one line) a lake whose bucket is not there, before anything is written
    (:meth:`S3Store.check_bucket`)."""
    S3Store(root.bucket).check_bucket(root)


def check_conditional_writes(root: LakeLocation) -> None:
    """Refuse (StorageError, one line) a store that ignores ``If-None-Match`` (:meth:`S3Store.check_conditional_writes`)."""
    S3Store(root.bucket).check_conditional_writes(root)


#: An obstore error as one line naming the location (kept under its old name for the tests of its wording).
_one_line = one_line


# ------------------------------------------------------------------------------- the operations, by location
def read_object(location: Location, limit: int = MAX_METADATA_BYTES) -> StoredObject:
    """The bytes and ETag of the object at ``location``, at most ``limit`` bytes (a lake metadata object).
    FileNotFoundError when there is none; StorageError (LakeFileError) for anything else."""
    return store_for(location).get(location, limit)


def put_if_absent(location: Location, data: bytes) -> str:
    """Create the object ``location`` with ``data`` unless it exists (``If-None-Match: *``); its ETag.
    StorageConflict when it exists."""
    return store_for(location).put_if_absent(location, data)


def replace_if_match(location: Location, data: bytes, etag: str) -> str:
    """Replace the object ``location`` with ``data`` only while it is still the version ``etag``
    (``If-Match``); the new ETag. StorageConflict when it was replaced, or deleted, since."""
    return store_for(location).put_if_match(location, data, etag)


def delete_object(location: Location) -> None:
    """Remove the object ``location`` (nothing when there is none)."""
    store_for(location).delete(location)


def list_prefix(location: Location) -> list[tuple[str, int]]:
    """Every object under ``location`` (a folder), as (name relative to it, size), sorted; [] when none."""
    return store_for(location).list(location)


def has_prefix(location: Location) -> bool:
    """Whether anything is stored under ``location`` (a local folder that exists, or a non-empty prefix)."""
    return store_for(location).exists(location)


def put_object(location: Location, data: bytes) -> None:
    """Write the object ``location`` whole (no condition: a result file of the lake's own, e.g. a validation
    result or a report, that only the lake's writer writes). Locally: beside it, then ``os.replace``."""
    store_for(location).put(location, data)


def put_file(location: Location, source: Path) -> None:
    """Write the local file ``source`` as the object ``location``, streamed from the file (a multipart upload when
    large: never whole in memory); to a local location, a copy."""
    store_for(location).put_file(location, source)


def get_file(location: Location, target: Path) -> None:
    """Write the object ``location`` into the local file ``target``, streamed (never whole in memory); from a
    local location, a copy."""
    store_for(location).get_file(location, target)


def list_folders(location: Location) -> list[str]:
    """The names of the folders directly under ``location`` (on an object store: the common prefixes), sorted;
    [] when there is none."""
    return store_for(location).list_folders(location)


def delete_prefix(location: Location) -> int:
    """Remove everything under ``location`` (a folder: a scratch folder, a table a killed first publish left);
    the number of objects removed (locally: the folder, 1 when it was there)."""
    return store_for(location).delete_prefix(location)


def copy_object(source: LakeLocation, target: LakeLocation) -> None:
    """A server-side copy of one object within the bucket (no byte passes through this process)."""
    store_for(source).copy(source, target)


def absolute_location(location: Location, *, resolve: bool = False) -> Location:
    """The location as another process names it: a local path made absolute (``resolve``: links resolved too);
    an object-store location as it is."""
    return store_for(location).absolute(location, resolve=resolve)


def location_uri(location: Location) -> str:
    """``file:///...`` for a local (absolute) path, ``s3://bucket/key`` for an object-store location."""
    return store_for(location).uri(location)


#: The operations by name, for a caller that takes a store as a parameter (tests run them over both kinds).
OPERATIONS: Mapping[str, Callable[..., Any]] = {
    "read_object": read_object, "put_if_absent": put_if_absent, "replace_if_match": replace_if_match,
    "delete_object": delete_object, "list_prefix": list_prefix, "put_object": put_object,
    "list_folders": list_folders, "delete_prefix": delete_prefix,
}
