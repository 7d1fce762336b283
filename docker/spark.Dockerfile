# The Spark image for docker-compose.yml (spark-master, spark-worker): the official apache/spark 4.1.3 image
# (Scala 2.13, Java 17; the same Spark version as the pinned pyspark), plus Python 3.11 (the project's and
# the Airflow image's Python minor version, which PySpark requires of driver and executors alike), this
# project installed under the pinned constraints (executors import `clwl` for the replay), and the Delta
# Lake jars and the S3A connector's jars (a lake on an object store) resolved HERE, at build time, into
# /opt/clwl/jars and /opt/clwl/s3a-jars and linked into Spark's own jars folder.
#
# Build context: the repository root (docker compose does this):
#   docker build -f docker/spark.Dockerfile -t clwl-analytics-spark:0.1.0 .
FROM apache/spark:4.1.3-scala2.13-java17-ubuntu

USER root
ARG DEBIAN_FRONTEND=noninteractive

# Python 3.11 (the base image is Ubuntu 22.04, whose python3 is 3.10) from the deadsnakes archive; curl for
# the compose health checks.
RUN set -eux; \
    apt-get update; \
    apt-get install -y --no-install-recommends software-properties-common gpg-agent curl; \
    add-apt-repository -y ppa:deadsnakes/ppa; \
    apt-get update; \
    apt-get install -y --no-install-recommends python3.11 python3.11-venv; \
    rm -rf /var/lib/apt/lists/*; \
    python3.11 -m venv /opt/clwl/venv

ENV VIRTUAL_ENV=/opt/clwl/venv \
    PATH=/opt/clwl/venv/bin:${PATH}

COPY pyproject.toml constraints.txt README.md /opt/clwl/src/
COPY clwl /opt/clwl/src/clwl
COPY spark /opt/clwl/src/spark
RUN pip install --no-cache-dir -c /opt/clwl/src/constraints.txt "/opt/clwl/src[pipeline]" \
    && pip check

# Delta Lake jars, resolved now with Spark's Ivy (needs Maven Central, or a mirror as CLWL_MAVEN_REPO).
# The script fails the build if this coordinate is not the one the installed pyspark + delta-spark need,
# or if /opt/spark is not the pinned pyspark's Spark version. Linked into /opt/spark/jars too, so every
# executor has Delta on its class path from the image.
ARG DELTA_PACKAGE=io.delta:delta-spark_4.1_2.13:4.4.0
ARG CLWL_MAVEN_REPO=
COPY docker/bake-delta-jars.sh /opt/clwl/docker/
RUN set -eux; \
    CLWL_MAVEN_REPO="${CLWL_MAVEN_REPO}" bash /opt/clwl/docker/bake-delta-jars.sh "${DELTA_PACKAGE}" /opt/clwl/jars; \
    ln -s /opt/clwl/jars/*.jar /opt/spark/jars/

# The S3A connector's jars, which spark/jars.py names (hadoop-aws for pyspark's Hadoop and the AWS SDK modules
# S3A uses: no build argument to go stale). Linked into /opt/spark/jars too, so the executors (and a driver
# started from this image) read and write an s3:// lake with the image's classes alone.
COPY docker/bake-s3a-jars.sh /opt/clwl/docker/
RUN set -eux; \
    CLWL_MAVEN_REPO="${CLWL_MAVEN_REPO}" bash /opt/clwl/docker/bake-s3a-jars.sh /opt/clwl/s3a-jars; \
    ln -s /opt/clwl/s3a-jars/*.jar /opt/spark/jars/

# Mount points (the landing folder; a local lake's, when an override mounts one: the default lake is on the
# object store) and the worker's scratch folder; the compose file runs these containers as AIRFLOW_UID:0, the
# same user as the Airflow containers, so both can write a local lake's Delta tables.
RUN mkdir -p /opt/clwl/lake /opt/clwl/landing /opt/clwl/work \
    && chown -R 50000:0 /opt/clwl/lake /opt/clwl/landing /opt/clwl/work \
    && chmod -R g+rwX /opt/clwl/lake /opt/clwl/landing /opt/clwl/work

ENV CLWL_DELTA_JARS=/opt/clwl/jars \
    CLWL_S3A_JARS=/opt/clwl/s3a-jars \
    PYSPARK_PYTHON=python3.11 \
    SPARK_WORKER_DIR=/opt/clwl/work

WORKDIR /opt/clwl/work
USER spark
