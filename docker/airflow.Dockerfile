# The Airflow image for docker-compose.yml: the official Airflow 3.3.2 image (Python 3.11) with this project
# installed under the project's pinned constraints, a Java 17 runtime for the PySpark driver (Airflow tasks
# drive Spark in client mode against spark://spark-master:7077), and the Delta Lake jars and the S3A connector's
# jars (a lake on an object store) resolved HERE, at build time, into /opt/clwl/jars (CLWL_DELTA_JARS) and
# /opt/clwl/s3a-jars (CLWL_S3A_JARS): a container never downloads a jar at run time.
#
# Build context: the repository root (docker compose does this):
#   docker build -f docker/airflow.Dockerfile -t clwl-analytics-airflow:0.1.0 .
FROM apache/airflow:3.3.2-python3.11

USER root

# Java 17 for the Spark driver: the very JDK the Spark image runs (Eclipse Temurin 17 from apache/spark),
# so driver and executors share one JVM build.
COPY --from=apache/spark:4.1.3-scala2.13-java17-ubuntu /opt/java/openjdk /opt/java/openjdk
ENV JAVA_HOME=/opt/java/openjdk \
    PATH=/opt/java/openjdk/bin:${PATH}

# /opt/clwl: sources to install, the baked jars, the landing folder's mount point and a local lake's (the
# default lake is on the object store; docs/deploying-compose.md says how to mount a volume there instead).
# Group 0 and group-writable, as the Airflow image expects for an arbitrary AIRFLOW_UID.
RUN mkdir -p /opt/clwl/src /opt/clwl/jars /opt/clwl/s3a-jars /opt/clwl/docker /opt/clwl/lake /opt/clwl/landing \
    && chown -R airflow:0 /opt/clwl \
    && chmod -R g+rwX /opt/clwl

USER airflow

# The project, with exactly the dependency set measured together (constraints.txt); apache-airflow is named
# at the image's own version so a conflict fails the build instead of silently moving Airflow.
COPY --chown=airflow:0 pyproject.toml constraints.txt README.md /opt/clwl/src/
COPY --chown=airflow:0 clwl /opt/clwl/src/clwl
COPY --chown=airflow:0 spark /opt/clwl/src/spark
RUN pip install --no-cache-dir -c /opt/clwl/src/constraints.txt \
        "apache-airflow==${AIRFLOW_VERSION}" "/opt/clwl/src[pipeline,airflow]"

# Delta Lake jars, resolved now with Spark's Ivy (needs Maven Central, or a mirror as CLWL_MAVEN_REPO).
# The script fails the build if this coordinate is not the one the installed pyspark + delta-spark need.
ARG DELTA_PACKAGE=io.delta:delta-spark_4.1_2.13:4.4.0
ARG CLWL_MAVEN_REPO=
COPY --chown=airflow:0 docker/bake-delta-jars.sh docker/bake-s3a-jars.sh docker/airflow-init.sh /opt/clwl/docker/
RUN CLWL_MAVEN_REPO="${CLWL_MAVEN_REPO}" bash /opt/clwl/docker/bake-delta-jars.sh "${DELTA_PACKAGE}" /opt/clwl/jars

# The S3A connector's jars: which ones (hadoop-aws for pyspark's Hadoop, the AWS SDK modules S3A uses) is
# spark/jars.py's to say, so there is no build argument to go stale.
RUN CLWL_MAVEN_REPO="${CLWL_MAVEN_REPO}" bash /opt/clwl/docker/bake-s3a-jars.sh /opt/clwl/s3a-jars

# Run time: spark/session.py takes the jars from here (spark.jars), never Ivy/Maven. The Python that Spark
# executors start is named, not a path, so it resolves on the Spark image too (its venv's python3.11).
ENV CLWL_DELTA_JARS=/opt/clwl/jars \
    CLWL_S3A_JARS=/opt/clwl/s3a-jars \
    PYSPARK_PYTHON=python3.11
