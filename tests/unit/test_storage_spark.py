"""The lake on object storage, Spark's side without a JVM: the URI -> Spark settings mapping (spark/session.py
object_store_settings) and the S3A connector's jar list (spark/jars.py). No server, no Spark started."""

from __future__ import annotations

import hashlib

import pytest

from clwl.lake.storage import StorageError
from spark.jars import (
    AWS_SDK_FOR_HADOOP,
    PROVIDED_BY_PYSPARK,
    S3A_PROVIDED_BY_PYSPARK,
    SparkStartError,
    jar_cache_root,
    local_jar_folder,
    pyspark_hadoop_version,
    s3a_packages,
)
from spark.session import CHAIN_CREDENTIALS, ENV_CREDENTIALS, S3A_FILESYSTEM, object_store_settings

KEY, SECRET = "AKIAEXAMPLEKEY", "s3cr3t-never-in-spark-conf"
SERVER = {"AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_ENDPOINT_URL": "http://127.0.0.1:8333",
          "AWS_ALLOW_HTTP": "true", "AWS_REGION": "eu-west-1"}
H = "spark.hadoop.fs."


def test_a_local_lake_gets_no_object_store_settings():
    assert object_store_settings("/data/lake", env=SERVER) == {}
    assert object_store_settings("lake", env={}) == {}  # no credentials needed for a folder


def test_an_s3_lake_maps_both_schemes_to_s3a_with_the_environments_endpoint():
    conf = object_store_settings("s3://bucket/lake", env=SERVER)
    # the lake's own s3:// URIs go to S3A unchanged: no s3a:// rewriting anywhere
    assert conf[f"{H}s3.impl"] == conf[f"{H}s3a.impl"] == S3A_FILESYSTEM
    assert conf[f"{H}s3a.endpoint"] == "http://127.0.0.1:8333"
    assert conf[f"{H}s3a.connection.ssl.enabled"] == "false"  # AWS_ALLOW_HTTP with an http:// endpoint
    assert conf[f"{H}s3a.path.style.access"] == "true"  # S3-compatible servers: host/bucket/key
    assert conf[f"{H}s3a.endpoint.region"] == "eu-west-1"
    assert conf[f"{H}s3a.aws.credentials.provider"] == ENV_CREDENTIALS


def test_no_secret_ever_goes_into_sparks_settings():
    conf = object_store_settings("s3://bucket/lake", env={**SERVER, "AWS_SESSION_TOKEN": "tok3n"})
    text = repr(conf)
    assert KEY not in text and SECRET not in text and "tok3n" not in text
    assert not any("secret" in k.lower() or "access.key" in k.lower() for k in conf)


def test_virtual_hosted_addressing_and_tls_on_aws():
    env = {"AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_VIRTUAL_HOSTED_STYLE_REQUEST": "true"}
    conf = object_store_settings("s3://bucket/lake", env=env)
    assert conf[f"{H}s3a.path.style.access"] == "false"
    assert f"{H}s3a.endpoint" not in conf and f"{H}s3a.connection.ssl.enabled" not in conf
    assert conf[f"{H}s3a.endpoint.region"] == "us-east-1"


def test_credentials_from_the_provider_chain_use_the_sdks_default_chain():
    env = {"AWS_WEB_IDENTITY_TOKEN_FILE": "/var/run/token", "AWS_ROLE_ARN": "arn:aws:iam::1:role/r"}
    assert object_store_settings("s3://bucket/lake", env=env)[f"{H}s3a.aws.credentials.provider"] == CHAIN_CREDENTIALS


@pytest.mark.parametrize("env, named", [
    ({}, "no S3 credentials"),
    ({"AWS_ACCESS_KEY_ID": KEY}, "AWS_SECRET_ACCESS_KEY is not set"),
    ({**SERVER, "AWS_ALLOW_HTTP": "false"}, "plain HTTP"),
])
def test_a_store_that_cannot_be_used_is_one_line_before_spark(env, named):
    with pytest.raises(StorageError, match=named):
        object_store_settings("s3://bucket/lake", env=env)


def test_a_typo_of_the_lake_uri_is_refused_not_a_folder():
    with pytest.raises(StorageError, match="did you mean s3://bucket/lake"):
        object_store_settings("s3:/bucket/lake", env=SERVER)


def test_the_s3a_jars_match_pysparks_hadoop_and_leave_out_the_sdk_bundle():
    hadoop = pyspark_hadoop_version()
    assert hadoop in AWS_SDK_FOR_HADOOP  # a pyspark upgrade to another Hadoop must add its SDK version
    packages = s3a_packages(hadoop)
    assert packages[0] == f"org.apache.hadoop:hadoop-aws:{hadoop}"
    sdk = AWS_SDK_FOR_HADOOP[hadoop]
    assert set(packages[1:]) == {f"software.amazon.awssdk:{m}:{sdk}" for m in
                                 ("s3", "s3-transfer-manager", "apache-client", "netty-nio-client", "sts")}
    assert not any(":bundle:" in p for p in packages)
    assert "software.amazon.awssdk:bundle" in S3A_PROVIDED_BY_PYSPARK  # hadoop-aws declares it: excluded


def test_pyspark_413_is_hadoop_342_with_sdk_2_29_52():
    """The pair the issue measured: pyspark 4.1.3 ships Hadoop 3.4.2, whose hadoop-project declares AWS SDK v2
    2.29.52."""
    assert s3a_packages("3.4.2")[:2] == ["org.apache.hadoop:hadoop-aws:3.4.2", "software.amazon.awssdk:s3:2.29.52"]


def test_a_hadoop_without_a_known_sdk_is_one_line():
    with pytest.raises(SparkStartError, match="no AWS SDK version known for Hadoop 9.9.9"):
        s3a_packages("9.9.9")


def test_the_s3a_jars_have_a_folder_of_their_own_and_the_delta_folder_is_unchanged():
    coordinate = "io.delta:delta-spark_4.1_2.13:4.4.0"
    # the Delta folder's name as before the S3A jars existed: an existing cache stays valid
    digest = hashlib.sha256("\n".join((coordinate, *PROVIDED_BY_PYSPARK)).encode()).hexdigest()[:10]
    assert local_jar_folder(coordinate) == jar_cache_root() / "delta-jars" / f"delta-spark_4.1_2.13-4.4.0-{digest}"
    packages = s3a_packages("3.4.2")
    s3a = local_jar_folder(packages[0], "s3a-jars", tuple(packages[1:]), S3A_PROVIDED_BY_PYSPARK)
    assert s3a.parent == jar_cache_root() / "s3a-jars" and s3a.name.startswith("hadoop-aws-3.4.2-")


@pytest.mark.objectstore
def test_a_folder_of_the_lake_on_the_store_exists_once_something_is_under_it(object_store, monkeypatch):
    """The report asks ``exists()`` of the validation folder it names: on the store, a non-empty prefix."""
    from clwl.lake.storage import lake_root, put_object

    object_store.use(monkeypatch)
    lake = lake_root(object_store.lake_uri())
    folder = lake / "validation" / "run-1"
    assert not folder.exists()
    put_object(folder / "_publish.json", b"{}\n")
    assert folder.exists() and (lake / "validation").exists() and not (lake / "validation" / "run-2").exists()
