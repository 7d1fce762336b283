"""The lake, read and guarded without Spark: where every table lives and the one door to its rows.

The map of the lake and its reader (``door``: :class:`clwl.lake.door.Lake`), the storage under it, local disk or
an object store (``storage``, ``s3_env``), the writer's lock (``lock``), the published pointer readers trust
(``published``), the put-records view (``put_records``), the replay's inputs from silver (``silver``), the lake's
files and digest (``lake_files``, ``fingerprint``) and ``clwl query`` (``query``).
"""
