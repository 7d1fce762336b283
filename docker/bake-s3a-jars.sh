#!/usr/bin/env bash
# Resolve the S3A connector's jars (a lake on an object store) at image BUILD time, so no container ever downloads
# them at run time.
#
#   bake-s3a-jars.sh <dest-dir>
#
# Which jars is spark/jars.py's to say, not this script's: hadoop-aws at the Hadoop version the installed pyspark
# ships, and the AWS SDK modules S3A uses at the SDK version that Hadoop release declares (s3a_packages), without
# the jars pyspark already has (S3A_PROVIDED_BY_PYSPARK). local_s3a_jars resolves them with Spark's own Ivy, as a
# workstation does on its first run on a store; this script copies what it resolved into <dest-dir>, then checks
# the folder the way a container will read it (CLWL_S3A_JARS=<dest-dir>: the hadoop-aws jar must be there).
# Needs: java on PATH, and `python` with this project (and so pyspark) installed. An extra Maven repository (a
# mirror of Maven Central) can be given as CLWL_MAVEN_REPO; CLWL_IVY_DIR names a jar cache to resolve into
# (default: a temporary one, removed afterwards).
set -euo pipefail

dest="${1:?usage: bake-s3a-jars.sh <dest-dir>}"
py="$(command -v python)"

own_cache=""
if [[ -z "${CLWL_IVY_DIR:-}" ]]; then
    own_cache="$(mktemp -d)"
    export CLWL_IVY_DIR="$own_cache"
    trap 'rm -rf "$own_cache"' EXIT
fi

mkdir -p "$dest"
# CLWL_S3A_JARS unset here: local_s3a_jars must resolve, not answer with a baked folder.
env -u CLWL_S3A_JARS CLWL_SPARK_VERBOSE=1 "$py" - "$dest" <<'PY'
import shutil
import sys
from pathlib import Path

from spark.jars import local_s3a_jars, s3a_packages

dest = Path(sys.argv[1])
jars = local_s3a_jars(progress=print)
for jar in jars:
    shutil.copy2(jar, dest / Path(jar).name)
print(f"bake-s3a-jars: {len(jars)} jars of {s3a_packages()[0]} in {dest}")
PY

# The check a container makes when its lake is on a store (spark/jars.py _baked_jars): a folder that lacks the
# hadoop-aws jar of this pyspark fails the build here, not the first run.
CLWL_S3A_JARS="$dest" "$py" -c 'from spark.jars import local_s3a_jars; print(len(local_s3a_jars()), "jars baked")'
ls -1 "$dest"
