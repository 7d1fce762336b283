"""Telling somebody when a night goes wrong (not a DAG file: `.airflowignore` keeps the DAG processor from parsing
it). Parse-time cheap: the standard library and `airflow.sdk` only.

- :class:`NightlyNotifier`, clwl_nightly's `on_failure_callback` (on every task, through its default_args): a task
  that fails for good (a quality gate that blocked the day, a Spark error after its retries) sends one message with
  the date, the reason in one line (the gate's: its failed expectations and the validation results folder) and
  where the day's report is. Always a log line (WARNING, in the failed task's log); also a Slack message when the
  connection `clwl_slack` exists (a Slack incoming webhook: `AIRFLOW_CONN_CLWL_SLACK='{"conn_type":
  "slackwebhook", "password": "https://hooks.slack.com/services/T000/B000/XXXX"}'`, or the UI). The Slack
  provider (`apache-airflow-providers-slack`) sends it when it is installed; without it, the same webhook POST is
  made with the standard library (urllib), so no new dependency is needed.
- :func:`deadline_missed`, the callback of clwl_nightly's Airflow 3 `DeadlineAlert` (when CLWL_PUBLISH_BY is set):
  the run was not finished (the day not published) by the deadline; the same message paths.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import urllib.request
from typing import Any, Mapping

from airflow.sdk import BaseNotifier

log = logging.getLogger(__name__)

#: The Slack webhook connection; absent: the log line only.
SLACK_CONN_ID = "clwl_slack"
#: Slack's default webhook base, as the provider's hook has it, for a connection that holds only the token.
SLACK_HOOKS = "https://hooks.slack.com/services"
#: By when (UTC, HH:MM) a scheduled night must be published, else the deadline alert (unset: no deadline).
PUBLISH_BY_ENV = "CLWL_PUBLISH_BY"
REASON_CHARS = 400  # a Slack line, not the whole list of a badly broken day's failures


def one_line(text: object, limit: int = REASON_CHARS) -> str:
    """The text on one line, at most `limit` characters: a long one keeps its start and its end (a blocked gate's
    end names the validation results folder), cut in the middle."""
    line = " ".join(str(text or "").split())
    if len(line) <= limit:
        return line
    half = (limit - 3) // 2
    return f"{line[:half]} … {line[-half:]}"


def alert_message(*, what: str, dag_id: str, run_id: str, run_date: str | None, reason: str,
                  report: str | None) -> str:
    """The one message of a failed, blocked or late night (pure)."""
    day = run_date or "(run date unknown)"
    where = f"report: {report}" if report else "no report for that day"
    return f"clwl: {dag_id} {what} for {day}: {one_line(reason)} ({where}; Airflow run {run_id})"


def report_location(run_date: str | None) -> str | None:
    """Where the day's report is (or will be): <lake>/reports/<date>/report.html of the run's lake (the Variable
    clwl_lake, else CLWL_LAKE, as the tasks resolve it). None when the lake cannot be told."""
    if not run_date:
        return None
    try:
        from clwl_dag_support import pipeline_config  # the tasks' own resolution of the lake

        reports = pipeline_config().reports
    except Exception as exc:  # a notifier must not fail on a lake it cannot resolve
        log.info("clwl alert: no report location (%s)", one_line(exc, 200))
        return None
    return f"{reports}/{run_date}/report.html"


def slack_webhook_url(conn_id: str = SLACK_CONN_ID) -> str | None:
    """The webhook URL of the Slack connection, None when it is not configured: its password as a whole URL,
    else the token after its host (default hooks.slack.com/services), as the Slack provider reads it."""
    from airflow.sdk import Connection

    try:
        conn = Connection.get(conn_id)
    except Exception:  # not defined (AirflowNotFoundException) or no backend to ask: no Slack
        return None
    token = (conn.password or "").strip()
    if token.startswith(("http://", "https://")):
        return token
    if not token:
        return None
    host = (conn.host or "").strip().rstrip("/")
    base = host if host.startswith(("http://", "https://")) else (f"https://{host}" if host else SLACK_HOOKS)
    return f"{base}/{token.lstrip('/')}"


def send(message: str, conn_id: str = SLACK_CONN_ID) -> str:
    """Log the message, and post it to Slack when the connection is configured; which of them it did."""
    log.warning("%s", message)
    url = slack_webhook_url(conn_id)
    if url is None:
        return "log"
    try:
        from airflow.providers.slack.hooks.slack_webhook import SlackWebhookHook
    except ImportError:  # no provider: the webhook's one POST, with the standard library
        request = urllib.request.Request(url, data=json.dumps({"text": message}).encode("utf-8"),
                                         headers={"Content-Type": "application/json"}, method="POST")
        with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310 (the configured webhook)
            answer.read()
        return "slack"
    SlackWebhookHook(slack_webhook_conn_id=conn_id).send(text=message)
    return "slack"


def _run_date_of(dag_run: Any) -> str | None:
    """The run date by the DAGs' one rule, from a DagRun or the JSON of one (a deadline callback's context)."""
    from clwl_dag_support import choose_run_date

    def field(name: str) -> Any:
        value = dag_run.get(name) if isinstance(dag_run, Mapping) else getattr(dag_run, name, None)
        if isinstance(value, str) and name != "run_type":
            try:
                return dt.datetime.fromisoformat(value)
            except ValueError:
                return None
        return value

    try:
        conf = field("conf") or {}
        return choose_run_date(requested=conf.get("run_date"), run_type=field("run_type") or "",
                               logical_date=field("logical_date"), data_interval_start=field("data_interval_start"),
                               run_after=field("run_after"))[0]
    except (ValueError, TypeError, AttributeError):
        return None


class NightlyNotifier(BaseNotifier):
    """A task of the nightly failed for good: the date, the reason in one line, the report's location; a log line,
    and Slack when the connection `clwl_slack` is configured."""

    def __init__(self, slack_conn_id: str = SLACK_CONN_ID):
        super().__init__()
        self.slack_conn_id = slack_conn_id

    def notify(self, context: Mapping[str, Any]) -> None:
        dag_run = context.get("dag_run")
        ti = context.get("ti") or context.get("task_instance")
        run_date = _run_date_of(dag_run) if dag_run is not None else None
        error = context.get("exception")
        task = getattr(ti, "task_id", None) or "a task"
        blocked = error is not None and "quality gate blocked" in str(error)
        what = "was blocked by the quality gate" if blocked else f"failed at {task}"
        reason = str(error) if error is not None else str(context.get("reason") or "no reason given")
        send(alert_message(what=what, dag_id=getattr(dag_run, "dag_id", "") or "clwl_nightly",
                           run_id=getattr(dag_run, "run_id", "") or "?", run_date=run_date, reason=reason,
                           report=report_location(run_date)), self.slack_conn_id)


def publish_deadline(publish_by: str, scheduled_at: dt.time = dt.time(2, 30)) -> dt.timedelta:
    """How long after the scheduled run is queued (02:30 UTC) the day must be published: until `publish_by`
    (HH:MM UTC), the next day's when it is not later than the schedule."""
    try:
        by = dt.time.fromisoformat(publish_by.strip())
    except ValueError:
        raise ValueError(f"{PUBLISH_BY_ENV} must be a time HH:MM (UTC), got {publish_by!r}") from None
    gap = (dt.datetime.combine(dt.date.min, by) - dt.datetime.combine(dt.date.min, scheduled_at))
    return gap if gap > dt.timedelta(0) else gap + dt.timedelta(days=1)


def deadline_missed(context: Mapping[str, Any] | None = None, **_: Any) -> str:
    """The DeadlineAlert's callback: the run was not done by its deadline. ``context`` is what Airflow hands a
    deadline callback: {"dag_run": <the run as JSON>, "deadline": {"deadline_time": ...}}."""
    context = context or {}
    dag_run = context.get("dag_run") or {}
    run_date = _run_date_of(dag_run)
    deadline = (context.get("deadline") or {}).get("deadline_time")
    message = alert_message(what="is not published by its deadline", dag_id=dag_run.get("dag_id") or "clwl_nightly",
                            run_id=dag_run.get("dag_run_id") or dag_run.get("run_id") or "?", run_date=run_date,
                            reason=f"the run was still {dag_run.get('state') or 'unfinished'} at {deadline}",
                            report=report_location(run_date))
    return send(message)


def deadline_alert():
    """clwl_nightly's Airflow 3 DeadlineAlert when CLWL_PUBLISH_BY is set (read when the DAG file is parsed, like
    CLWL_LAKE): a run queued at 02:30 UTC not finished by then calls :func:`deadline_missed`. None when it is not
    set: opt-in, because Airflow 3.3.2's `dag.test()` (and so `airflow dags test`) fails at the end of any run
    of a DAG with a DeadlineAlert (it looks the alert up by id before storing it)."""
    publish_by = os.environ.get(PUBLISH_BY_ENV, "").strip()
    if not publish_by:
        return None
    from airflow.sdk import DeadlineAlert, DeadlineReference, SyncCallback

    return DeadlineAlert(reference=DeadlineReference.DAGRUN_QUEUED_AT, interval=publish_deadline(publish_by),
                         callback=SyncCallback(f"{__name__}.deadline_missed"), name="clwl_nightly published by")
