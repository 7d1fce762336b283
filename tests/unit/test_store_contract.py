"""One contract, two stores (clwl/lake/stores.py, clwl/lake/s3_store.py): the same promises of LocalStore on a
temporary folder and of S3Store on the session's S3-compatible server (tests/objectstore.py, SeaweedFS), each
test run against both. Where the two differ by design (a local condition is checked, then the file replaced,
since the lake lock's flock keeps local writers apart) the test says so through ``atomic_conditions``."""

from __future__ import annotations

import pytest

from clwl.lake.s3_store import S3Store
from clwl.lake.storage import LakeLocation, StorageConflict, lake_root, store_for
from clwl.lake.stores import LocalStore


@pytest.fixture(params=["local", pytest.param("s3", marks=pytest.mark.objectstore)])
def where(request, tmp_path, monkeypatch):
    """(the store, a fresh folder of it) for each kind, chosen by store_for from the location as the lake does."""
    if request.param == "local":
        root = lake_root(str(tmp_path / "lake"))
    else:
        server = request.getfixturevalue("object_store")
        server.use(monkeypatch)
        root = lake_root(server.lake_uri("contract"))
    store = store_for(root)
    assert isinstance(store, S3Store if isinstance(root, LakeLocation) else LocalStore)
    return store, root


def test_put_if_absent_creates_once_and_refuses_the_second(where):
    store, root = where
    obj = root / "gold" / "_published.json"
    with pytest.raises(FileNotFoundError):
        store.get(obj)
    etag = store.put_if_absent(obj, b"first")
    with pytest.raises(StorageConflict, match="exists already"):
        store.put_if_absent(obj, b"second")
    got = store.get(obj)
    assert (got.data, got.etag) == (b"first", etag)  # the refused write changed nothing


def test_put_if_match_refuses_a_version_replaced_or_removed_since(where):
    store, root = where
    obj = root / "_lock"
    first = store.put_if_absent(obj, b"one")
    second = store.put_if_match(obj, b"two", first)  # another writer, from the version both read
    assert second != first
    with pytest.raises(StorageConflict, match="replaced by another writer"):
        store.put_if_match(obj, b"three", first)  # the version read is gone
    assert store.get(obj).data == b"two"
    store.delete(obj)
    with pytest.raises(StorageConflict):
        store.put_if_match(obj, b"four", second)  # removed since
    store.delete(obj)  # nothing there: no error


def test_list_and_list_folders_under_a_prefix(where):
    store, root = where
    for name, data in (("a/x", b"abc"), ("a/b/y", b"12345"), ("ab/z", b"z"), ("other/w", b"w")):
        store.put(root / name, data)
    # only what is under "a/" (not "ab/", whose name merely starts alike), relative to it, sorted, with sizes
    assert store.list(root / "a") == [("b/y", 5), ("x", 3)]
    assert store.list_folders(root) == ["a", "ab", "other"]
    assert store.list_folders(root / "a") == ["b"]
    assert store.list(root / "nothing") == [] and store.list_folders(root / "nothing") == []
    assert store.exists(root / "a") and not store.exists(root / "nothing")


def test_delete_prefix_removes_the_folder_and_nothing_beside_it(where):
    store, root = where
    for name in ("scratch/run-1/_owner.json", "scratch/run-1/k/part.parquet", "scratch/run-10/_owner.json"):
        store.put(root / name, b"x")
    removed = store.delete_prefix(root / "scratch" / "run-1")
    # an object store counts the objects removed; a local disk the folder (documented on Store.delete_prefix)
    assert removed == (2 if store.atomic_conditions else 1)
    assert store.list(root / "scratch") == [("run-10/_owner.json", 1)]
    assert not store.is_folder(root / "scratch" / "run-1")
    assert store.delete_prefix(root / "scratch" / "run-1") == 0  # gone: nothing to remove


def test_replace_is_whole_and_conditional_where_the_store_checks_conditions(where):
    store, root = where
    gold = root / "gold"
    pointer = gold / "_published.json"
    store.replace(pointer, b'{"v": 1}', None)  # none read: created
    first = store.get(pointer)
    store.replace(pointer, b'{"v": 2}', first.etag)
    assert store.get(pointer).data == b'{"v": 2}'
    if store.atomic_conditions:  # S3: a conditional put on the version read; a stale one is refused
        with pytest.raises(StorageConflict):
            store.replace(pointer, b'{"v": 3}', first.etag)
        with pytest.raises(StorageConflict):
            store.replace(pointer, b'{"v": 3}', None)  # "there was none" while there is one
        assert store.get(pointer).data == b'{"v": 2}'
    else:  # locally a rename over it: the lake lock keeps writers apart, the version is not checked
        store.replace(pointer, b'{"v": 3}', first.etag)
        assert store.get(pointer).data == b'{"v": 3}'
    assert store.temporaries(gold) == []  # no half-written file left beside it
    assert [name for name, _ in store.list(gold)] == ["_published.json"]
