"""The lake on object storage (clwl/lake/storage.py, and the pointer, lease and Delta reads built on it): locations and
their one-line errors without a server; the promises against a real S3-compatible server (the session's SeaweedFS,
tests/objectstore.py, marked ``objectstore``)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from clwl.lake.door import Lake, default_lake_location
from clwl.lake.lock import LakeBusy, LakeLockError, lake_lock, read_holder
from clwl.lake.published import PublishedConflict, read_published, write_published
from clwl.lake.s3_env import s3_settings
from clwl.lake.storage import (
    LakeLocation,
    StorageConflict,
    StorageError,
    check_conditional_writes,
    delete_object,
    lake_root,
    list_prefix,
    put_if_absent,
    read_object,
    replace_if_match,
    storage_options,
)

SERVER = pytest.mark.objectstore

CLEAN_ENV = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ALLOW_HTTP",
             "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
             "AWS_CONTAINER_CREDENTIALS_FULL_URI", "CLWL_S3_INSTANCE_CREDENTIALS")


def one_line(exc: pytest.ExceptionInfo) -> str:
    text = str(exc.value)
    assert "\n" not in text and text
    return text


# ------------------------------------------------------------------------------------------- no server needed
def test_a_lake_uri_is_a_location_and_a_path_stays_a_path():
    loc = lake_root("s3://clwl-bucket/estates/prod/")
    assert loc == LakeLocation("s3", "clwl-bucket", "estates/prod")
    assert str(loc / "gold" / "_published.json") == "s3://clwl-bucket/estates/prod/gold/_published.json"
    assert (loc / "gold").parent == loc and (loc / "gold").name == "gold"
    assert lake_root("lake") == Path("lake") and lake_root("/data/lake") == Path("/data/lake")
    assert lake_root("file:///data/lake") == Path("/data/lake")
    assert lake_root("runs/day:1") == Path("runs/day:1")  # a colon alone does not make a URI


@pytest.mark.parametrize("typo, named", [
    ("s3:/clwl-bucket/lake", "did you mean s3://clwl-bucket/lake"),
    ("s3//clwl-bucket/lake", "did you mean s3://clwl-bucket/lake"),
    ("s3:clwl-bucket", "did you mean s3://clwl-bucket"),
    ("gs://clwl-bucket/lake", "gs:// is not supported"),
    ("s3://Bad_Bucket/lake", "'Bad_Bucket' is not a valid bucket name"),
    ("s3://clwl-bucket//lake", "empty, '.' or '..' segment"),
    ("s3://clwl-bucket/a/../b", "empty, '.' or '..' segment"),
])
def test_a_mistyped_lake_uri_is_one_line_naming_it(typo, named):
    with pytest.raises(StorageError) as exc:
        lake_root(typo)
    assert typo in one_line(exc) and named in str(exc.value)


@pytest.mark.parametrize("text, shown", [
    ("s3://key:secret@clwl-bucket/lake", "s3://***@clwl-bucket/lake"),
    ("s3://secret@clwl-bucket", "s3://***@clwl-bucket"),
    ("S3:///key:secret@clwl-bucket", "S3:///***@clwl-bucket"),
])
def test_credentials_in_a_lake_uri_are_refused_and_never_shown(text, shown):
    with pytest.raises(StorageError) as exc:
        lake_root(text)
    assert one_line(exc).startswith(f"{shown}: a lake location carries no credentials") and "secret" not in one_line(exc)
    assert lake_root("s3://clwl-bucket/a@b") == LakeLocation("s3", "clwl-bucket", "a@b")  # an @ in the prefix is a name


def test_an_empty_lake_location_is_not_the_working_folder():
    with pytest.raises(StorageError, match="an empty lake location"):
        lake_root("")


def test_the_issues_local_folder_named_s3_is_refused(monkeypatch):
    """`--lake s3://bucket/lake` once became a local folder `s3:`: Path() collapses the two slashes. A Lake made from
    such a path is refused, and a location is no file-system path (os calls fail instead of writing locally)."""
    with pytest.raises(StorageError) as exc:
        Lake(Path("s3://clwl-bucket/lake"))
    assert "did you mean s3://clwl-bucket/lake" in one_line(exc)
    with pytest.raises(TypeError):
        os.fspath(lake_root("s3://clwl-bucket/lake"))
    monkeypatch.setenv("CLWL_LAKE", "s3://clwl-bucket/lake")
    assert default_lake_location() == LakeLocation("s3", "clwl-bucket", "lake")
    assert isinstance(Lake(default_lake_location()).table("gold.run_summary"), LakeLocation)
    monkeypatch.setenv("CLWL_LAKE", "s3:/clwl-bucket/lake")
    with pytest.raises(StorageError):
        default_lake_location()
    monkeypatch.setenv("CLWL_LAKE", "/data/lake")
    assert default_lake_location() == Path("/data/lake")


@pytest.mark.parametrize("env, named", [
    ({}, "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"),
    ({"AWS_ACCESS_KEY_ID": "k"}, "AWS_SECRET_ACCESS_KEY is not set"),
    ({"AWS_SECRET_ACCESS_KEY": "s"}, "AWS_ACCESS_KEY_ID is not set"),
    ({"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s", "AWS_ENDPOINT_URL": "http://127.0.0.1:9"},
     "set AWS_ALLOW_HTTP=true"),
    ({"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s", "AWS_ENDPOINT_URL": "127.0.0.1:9"},
     "not an endpoint URL"),
])
def test_missing_credentials_or_a_bad_endpoint_is_one_line(env, named):
    with pytest.raises(StorageError) as exc:
        s3_settings(env)
    assert named in one_line(exc)


def test_storage_options_come_from_the_environment_and_never_print_the_secret():
    env = {"AWS_ACCESS_KEY_ID": "key1", "AWS_SECRET_ACCESS_KEY": "very-secret", "AWS_ENDPOINT_URL": "http://h:1",
           "AWS_ALLOW_HTTP": "true", "AWS_REGION": "eu-west-1"}
    opts = storage_options(lake_root("s3://clwl-bucket/lake"), env)
    assert opts == {"AWS_REGION": "eu-west-1", "AWS_ALLOW_HTTP": "true", "AWS_VIRTUAL_HOSTED_STYLE_REQUEST": "false",
                    "AWS_ENDPOINT_URL": "http://h:1", "AWS_ACCESS_KEY_ID": "key1",
                    "AWS_SECRET_ACCESS_KEY": "very-secret"}
    assert "very-secret" not in repr(s3_settings(env)) and storage_options(Path("lake"), env) is None
    # the provider chain: a web identity needs no key in the environment
    chain = s3_settings({"AWS_WEB_IDENTITY_TOKEN_FILE": "/t", "AWS_ROLE_ARN": "arn:aws:iam::1:role/r"})
    assert chain.access_key is None


def test_the_local_operations_keep_the_same_promises(tmp_path):
    obj = tmp_path / "gold" / "_published.json"
    first = put_if_absent(obj, b"one")
    with pytest.raises(StorageConflict):
        put_if_absent(obj, b"two")
    second = replace_if_match(obj, b"two", first)
    with pytest.raises(StorageConflict):
        replace_if_match(obj, b"three", first)  # stale: the version read is gone
    assert read_object(obj).data == b"two" and read_object(obj).etag == second
    assert list_prefix(tmp_path) == [("gold/_published.json", 3)]
    delete_object(obj)
    with pytest.raises(FileNotFoundError):
        read_object(obj)


def test_a_local_pointer_is_still_replaced_by_rename(tmp_path):
    gold = tmp_path / "gold"
    write_published(gold, {"routing_replay": 1})
    first = read_published(gold)
    write_published(gold, {"routing_replay": 2})
    inode = (gold / "_published.json").stat().st_ino  # the file there while the next is written beside it
    # Locally the lake lock keeps writers apart: a pointer read before another write is no conflict here, as it
    # is on an object store (there one conditional put refuses it: test_the_pointer_is_replaced_atomically...).
    write_published(gold, {"routing_replay": 3}, expect=first)
    assert read_published(gold).tables == {"routing_replay": 3}
    assert (gold / "_published.json").stat().st_ino != inode  # a new file renamed over it, not rewritten in place
    assert sorted(p.name for p in gold.iterdir()) == ["_published.json"]  # no temporary file left


# ----------------------------------------------------------------------------------------- the real server
def _listening(pid: int) -> set[tuple[str, int]]:
    import psutil

    return {(c.laddr.ip, c.laddr.port) for c in psutil.Process(pid).net_connections(kind="inet")
            if c.status == psutil.CONN_LISTEN}


@SERVER
def test_the_server_listens_on_the_loopback_only(object_store):
    listening = _listening(object_store.pid)
    assert ("127.0.0.1", int(object_store.endpoint.rsplit(":", 1)[1])) in listening
    assert {ip for ip, _ in listening} == {"127.0.0.1"}, listening


@SERVER
def test_conditional_puts_answer_precondition_failed(object_store, monkeypatch):
    object_store.use(monkeypatch)
    lake = lake_root(object_store.lake_uri())
    obj = lake / "gold" / "_published.json"
    first = put_if_absent(obj, b"one")
    with pytest.raises(StorageConflict) as exc:
        put_if_absent(obj, b"two")  # If-None-Match: * on an existing object: 412
    assert str(obj) in one_line(exc)
    second = replace_if_match(obj, b"two", first)
    with pytest.raises(StorageConflict):
        replace_if_match(obj, b"three", first)  # If-Match with a replaced version: 412
    got = read_object(obj)
    assert (got.data, got.etag) == (b"two", second)
    assert list_prefix(lake) == [("gold/_published.json", 3)]
    delete_object(obj)
    with pytest.raises(FileNotFoundError):
        read_object(obj)
    assert list_prefix(lake) == []


@SERVER
def test_the_store_is_probed_for_conditional_writes_before_a_lease(object_store, monkeypatch):
    """SeaweedFS refuses a second If-None-Match create (412), so the probe passes and leaves its object; a store that
    ignored the header would have let the second create through, and the probe would refuse the lake."""
    object_store.use(monkeypatch)
    uri = object_store.lake_uri()
    check_conditional_writes(lake_root(uri))
    assert [name for name, _ in list_prefix(lake_root(uri))] == ["_conditional_probe"]


@SERVER
def test_a_wrong_secret_is_one_line(object_store, monkeypatch):
    object_store.use(monkeypatch)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
    obj = lake_root(object_store.lake_uri()) / "x"
    with pytest.raises(StorageError) as exc:
        put_if_absent(obj, b"x")
    assert "access denied" in one_line(exc) and "not-the-secret" not in str(exc.value)


@SERVER
def test_the_pointer_is_replaced_atomically_and_a_lost_race_is_refused(object_store, monkeypatch):
    object_store.use(monkeypatch)
    gold = Lake(object_store.lake_uri()).layer("gold")
    assert not read_published(gold).exists
    write_published(gold, {"routing_replay": 0}, {"2026-11-19": "run-a"}, run_id="run-a")
    first, second = read_published(gold), read_published(gold)  # two publishes read the same pointer
    assert first.tables == {"routing_replay": 0} and first.etag
    write_published(gold, {"routing_replay": 1}, run_id="run-b", expect=first)
    with pytest.raises(PublishedConflict) as exc:
        write_published(gold, {"routing_replay": 7}, run_id="run-c", expect=second)
    assert "_published.json was changed by another publish" in one_line(exc)
    assert read_published(gold).raw["run_id"] == "run-b" and read_published(gold).tables == {"routing_replay": 1}


_HOLDER = textwrap.dedent("""
    import sys
    from clwl.lake.lock import lake_lock
    with lake_lock(sys.argv[1], purpose="holder test"):
        print("held", flush=True)
        sys.stdin.read()
""")


@SERVER
def test_a_second_writer_is_refused_naming_the_holder(object_store, monkeypatch):
    object_store.use(monkeypatch)
    uri = object_store.lake_uri()
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, uri], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, env={**os.environ})
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(LakeBusy) as exc:
            with lake_lock(uri, purpose="second"):
                pass
        assert f"pid {holder.pid} on {socket.gethostname()} (holder test)" in one_line(exc)
        assert exc.value.holder["pid"] == holder.pid
    finally:
        holder.communicate("", timeout=30)
    assert holder.returncode == 0
    assert read_holder(uri).get("released")
    with lake_lock(uri, purpose="after") as path:  # released: the next writer takes it at once
        assert read_holder(uri)["purpose"] == "after" and str(path) == f"{uri}/_lock"


@SERVER
def test_a_stale_lease_is_taken_over_and_a_live_one_is_not(object_store, monkeypatch):
    object_store.use(monkeypatch)
    uri = object_store.lake_uri()
    lease = lake_root(uri) / "_lock"
    live = {"pid": 4242, "host": "other-host", "purpose": "clwl run", "since": "2026-11-20T02:00:00+00:00",
            "expires_at": time.time() + 600, "expires": "later"}
    etag = put_if_absent(lease, json.dumps(live).encode())
    with pytest.raises(LakeBusy) as exc:
        with lake_lock(uri):
            pass
    assert "pid 4242 on other-host (clwl run)" in one_line(exc)
    replace_if_match(lease, json.dumps({**live, "expires_at": time.time() - 1}).encode(), etag)  # its holder died
    with lake_lock(uri, purpose="takeover"):
        assert read_holder(uri)["pid"] == os.getpid() and read_holder(uri)["purpose"] == "takeover"


@SERVER
def test_a_held_lease_is_renewed_and_one_taken_over_is_reported(object_store, monkeypatch):
    object_store.use(monkeypatch)
    uri = object_store.lake_uri()
    with lake_lock(uri, lease_seconds=1.5):
        first = read_holder(uri)["expires_at"]
        time.sleep(2.0)  # past the first expiry: only a renewal keeps it
        assert read_holder(uri)["expires_at"] > max(first, time.time())
    with pytest.raises(LakeLockError) as exc:
        with lake_lock(uri, lease_seconds=30):
            current = read_object(lake_root(uri) / "_lock")
            replace_if_match(lake_root(uri) / "_lock", json.dumps({"pid": 1, "host": "thief"}).encode(), current.etag)
    assert "was taken over" in one_line(exc)


@SERVER
def test_a_delta_table_on_the_store_is_read_through_the_door(object_store, monkeypatch):
    import pyarrow as pa
    from deltalake import write_deltalake

    object_store.use(monkeypatch)
    lake = Lake(object_store.lake_uri())
    table = lake.table("gold.run_summary")
    assert not lake.exists("gold.run_summary") and lake.version("gold.run_summary") is None
    rows = pa.table({"run_date": ["2026-11-19", "2026-11-20", "2026-11-20"], "messages": [3, 5, 8]})
    write_deltalake(str(table), rows, partition_by=["run_date"], storage_options=storage_options(table))
    write_deltalake(str(table), rows.slice(0, 1), mode="append", storage_options=storage_options(table))
    assert lake.exists("gold.run_summary") and lake.version("gold.run_summary") == 1
    day = lake.rows("gold.run_summary", ["messages"], [("run_date", "=", "2026-11-20")])
    assert sorted(day.column("messages").to_pylist()) == [5, 8]
    assert lake.rows("gold.run_summary", version=0).num_rows == 3
    assert lake.rows_committed("gold.run_summary", 1) == 1
    write_published(lake.layer("gold"), {"run_summary": 0})
    assert lake.published_version("gold.run_summary") == 0
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name)
    with pytest.raises(StorageError) as exc:
        lake.version("gold.run_summary")
    assert "no S3 credentials" in one_line(exc)


def test_a_lake_command_without_credentials_never_calls_out(monkeypatch):
    """Without credentials in the environment, nothing is asked of the network (no instance metadata call from a
    machine that has none): the first operation refuses in one line."""
    for name in CLEAN_ENV:
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(StorageError) as exc:
        read_object(lake_root("s3://clwl-bucket/lake") / "gold" / "_published.json")
    assert "no S3 credentials" in one_line(exc)


def test_the_lease_comes_from_clwl_lease_seconds(object_store, monkeypatch):
    """$CLWL_LEASE_SECONDS sets the lease a writer takes (the expiry it writes is that far ahead); a value that is
    not a number, or outside 15-3600 s (a renewal every third must fit a store's round trip), is one line."""
    from clwl.lake.lock import MIN_LEASE_SECONDS

    object_store.use(monkeypatch)
    uri = object_store.lake_uri("lease-env")
    monkeypatch.setenv("CLWL_LEASE_SECONDS", "20")
    with lake_lock(uri, purpose="short"):
        holder = read_holder(uri)
        assert 15 < holder["expires_at"] - time.time() <= 20
    for bad in ("soon", str(MIN_LEASE_SECONDS - 1), "7200"):
        monkeypatch.setenv("CLWL_LEASE_SECONDS", bad)
        with pytest.raises(LakeLockError, match="CLWL_LEASE_SECONDS"):
            with lake_lock(object_store.lake_uri("lease-bad")):
                pass
