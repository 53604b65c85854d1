//! Submitting a task (DESIGN.md §2 "task", §6). For an unknown state,
//! retrying the write at once could execute it twice, so the hub first
//! queries by the idempotency key, and resubmits only once it knows the
//! request was not accepted.
//!
//! A `SendMessage` to a `task` capability carries the caller's idempotency
//! key (its `X-Request-Id`, i.e. its `messageId`) and, optionally, a
//! deadline (message metadata `deadline`, RFC 3339), capped by the
//! capability's `task_deadline_ms`. [`TaskSubmit::submit_task`] claims the
//! key in the hub's task record ([`TaskRecords`](crate::store::task_records),
//! `UNIQUE (caller, idempotency_key)`) and then, by what the row says:
//!
//! | the key's row | what the hub does |
//! |---|---|
//! | none (this call inserted it) | forwards; the answer's task id and state are recorded. A provider's refusal (its A2A error) frees the key; any other failure (timeout, dropped connection, a broken answer) leaves the row `unknown` |
//! | another input's digest | refuses with 409, `NOT_PERMITTED`: one key, one question |
//! | `completed` without a task id (the provider answered with a message) | refuses: send a new id; never resubmitted |
//! | `submitting` (another call is forwarding it, in this process or another replica) | waits for it, polling the row, until the call's deadline (then `TIMEOUT`, the row untouched); if the process forwarding it is gone, the row becomes `unknown` (below) |
//! | a task id (any state) | answers that task, read fresh with `GetTask`: `metadata.replayed: true`, never a second execution |
//! | `unknown` | asks the provider (`ListTasks`, the task whose metadata carries this caller and key): found → adopts it and answers it; not found → retakes the row (one caller wins) and resubmits; the provider unreachable → the same reason code, the row stays `unknown` |
//!
//! The provider keeps its own unique key as well (the reference peer's
//! `task_keys`), so even a resubmission the hub got wrong could not run
//! twice; the hub's query first means it never has to rely on that.

use std::sync::Arc;
use std::time::Duration;

use a2a::{GetTaskRequest, ListTasksRequest, SendMessageResponse, Task};
use axum::http::StatusCode;
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::Value;
use tokio::time::Instant;

use super::answer::ProviderReply;
use super::answer::{peer_error, Blame};
use super::call::{Answered, Done, TaskSend};
use super::forward::{Forwarder, Leg};
use super::tasks::{read_task_answer, refusal_reason, Read, TaskOp, TaskOps};
use crate::bridge::Method;
use crate::cluster::Cluster;
use crate::store::idempotency::input_digest;
use crate::store::task_owners::{TaskOwners, TaskOwnersError};
use crate::store::task_records::{Claim, RecordState, Submission, TaskRecords, TaskRecordsError};
use exchange::db::retry_while_unavailable;
use exchange::reason::{NotConnected, ReasonCode};
use exchange::text::clip;

/// The task metadata keys a provider stamps its tasks with, by which the
/// hub finds a task of an `unknown` submission.
pub const KEY_METADATA: &str = "idempotencyKey";
pub const CALLER_METADATA: &str = "caller";

/// How often a duplicate polls the row of a submission in flight.
const POLL: Duration = Duration::from_millis(25);
/// How long the record of a forwarded submission's answer is tried at
/// least, even past the deadline (a timed-out forward's `unknown` too).
const STORE_GRACE: Duration = Duration::from_secs(5);
/// Most pages of `ListTasks` read when looking for a key.
const MAX_LIST_PAGES: usize = 20;

/// The deadline a task runs under: the caller's, capped at `cap_ms` from
/// now; `cap_ms` from now when the caller named none. A deadline that is
/// not RFC 3339, or already past, is the caller's error.
pub fn task_deadline(
    asked: Option<&str>,
    cap_ms: u64,
    now: DateTime<Utc>,
) -> Result<String, String> {
    let cap = now + chrono::Duration::milliseconds(i64::try_from(cap_ms).unwrap_or(i64::MAX / 2));
    let deadline = match asked {
        None => cap,
        Some(text) => {
            let asked = DateTime::parse_from_rfc3339(text.trim())
                .map_err(|e| {
                    format!(
                        "metadata.deadline `{}` is not an RFC 3339 time: {e}",
                        clip(text, 64)
                    )
                })?
                .with_timezone(&Utc);
            if asked <= now {
                return Err(format!("metadata.deadline {} has passed", clip(text, 64)));
            }
            asked.min(cap)
        }
    };
    Ok(deadline.to_rfc3339_opts(SecondsFormat::Millis, true))
}

/// Task submission under the caller's key, and what it takes: the task
/// record, who owns which task, this process among the replicas (whether
/// a row's claimer still runs), the forward, and the task operations a
/// known key is answered with.
pub(super) struct TaskSubmit {
    records: TaskRecords,
    owners: TaskOwners,
    cluster: Cluster,
    forwarder: Arc<Forwarder>,
    ops: Arc<TaskOps>,
}

impl TaskSubmit {
    /// Submissions kept in `records` and `owners`, claimed as this process
    /// of `cluster`, sent by `forwarder`, joined through `ops`.
    pub(super) fn new(
        records: TaskRecords,
        owners: TaskOwners,
        cluster: Cluster,
        forwarder: Arc<Forwarder>,
        ops: Arc<TaskOps>,
    ) -> Self {
        Self {
            records,
            owners,
            cluster,
            forwarder,
            ops,
        }
    }

    /// Submits a task under the caller's key: the state machine above.
    pub(super) async fn submit_task(&self, leg: &Leg<'_>, input: Value, cap_ms: u64) -> Done {
        let call = leg.call;
        let ask = &call.task;
        let caller = call.caller.as_str();
        let provider = leg.route.system.id.as_str();
        let key = call.envelope.request_id.as_str();
        let deadline = match task_deadline(ask.deadline.as_deref(), cap_ms, Utc::now()) {
            Ok(d) => d,
            Err(why) => {
                return Done::refused(
                    StatusCode::BAD_REQUEST,
                    NotConnected::new(
                        ReasonCode::NotPermitted,
                        format!("{}: {why}", call.capability),
                    ),
                )
            }
        };
        let digest = input_digest(&input);
        let send = TaskSend {
            return_immediately: ask.return_immediately,
            deadline: deadline.clone(),
            criteria: ask.criteria.clone(),
        };
        let submission = Submission {
            caller,
            idempotency_key: key,
            provider,
            capability: &call.capability,
            input_digest: &digest,
            deadline: &deadline,
        };
        let store_failed = |e: crate::store::task_records::TaskRecordsError| {
            tracing::warn!(error = %e, "task record");
            // Nothing is forwarded that the record could not hold.
            Done::fail(peer_error("the hub could not write its task record".into()))
        };
        let mut row = match self.records.claim(&submission).await {
            Err(e) => return store_failed(e),
            Ok(Claim::New) => return self.forward_task(leg, input, &send).await,
            Ok(Claim::Existing(row)) => row,
        };
        if row.input_digest != digest {
            return Done::refused(
                StatusCode::CONFLICT,
                NotConnected::new(
                    ReasonCode::NotPermitted,
                    format!(
                        "request id {} was already used for another {} input: a retry repeats its input, a new task needs a new id",
                        clip(key, 64),
                        call.capability
                    ),
                ),
            );
        }
        loop {
            match (&row.task_id, row.state) {
                (Some(task_id), _) => return self.join_task(leg, task_id).await,
                (None, RecordState::Submitting)
                    if !self.cluster.claimer_runs(row.claimed_by.as_deref()).await =>
                {
                    // Its hub process is gone (a replica killed mid-call,
                    // this hub before a restart): nobody will learn the
                    // answer; the row is `unknown`, and the next turn asks
                    // the provider by key.
                    if let Err(e) = self.records.orphan(row.claimed_by.as_deref()).await {
                        return store_failed(e);
                    }
                }
                (None, RecordState::Submitting) => {
                    if Instant::now() + POLL > leg.deadline {
                        return Done::fail(NotConnected::new(
                            ReasonCode::Timeout,
                            format!(
                                "a submission with request id {} is still in flight at the hub",
                                clip(key, 64)
                            ),
                        ));
                    }
                    tokio::time::sleep(POLL).await;
                }
                (None, RecordState::Unknown) => match self.find_by_key(leg).await {
                    Err(nc) => return Done::fail(nc),
                    Ok(Some(task)) => {
                        let state = RecordState::of_task(&task.status.state);
                        if let Err(e) = self.records.accepted(caller, key, &task.id, state).await {
                            return store_failed(e);
                        }
                        return answered_task(task, true, "found the key's task at the provider");
                    }
                    Ok(None) => match self.records.retake(caller, key).await {
                        Err(e) => return store_failed(e),
                        Ok(true) => {
                            let mut done = self.forward_task(leg, input, &send).await;
                            done.note =
                                "resubmitted: the provider holds no task for this key".into();
                            return done;
                        }
                        // Another call retook it first: follow it.
                        Ok(false) => {}
                    },
                },
                // A row with a provider state but no task id: the provider
                // answered with a message; that answer is not stored.
                (None, _) => {
                    return Done::fail(NotConnected::new(
                        ReasonCode::PeerError,
                        format!(
                            "request id {} was answered without a task; send a new id",
                            clip(key, 64)
                        ),
                    ))
                }
            }
            row = match self.records.get(caller, key).await {
                Err(e) => return store_failed(e),
                Ok(Some(row)) => row,
                // Released by the call that held it (the provider refused
                // it): this one is as refused; the caller may resubmit.
                Ok(None) => {
                    return Done::fail(NotConnected::new(
                        ReasonCode::PeerError,
                        format!(
                            "the submission with request id {} was refused",
                            clip(key, 64)
                        ),
                    ))
                }
            };
        }
    }

    /// Forwards a submission this call holds the row of, and records what
    /// the answer says.
    async fn forward_task(&self, leg: &Leg<'_>, input: Value, send: &TaskSend) -> Done {
        let (caller, key) = (
            leg.call.caller.as_str(),
            leg.call.envelope.request_id.as_str(),
        );
        let task_leg = Leg {
            task: Some(send),
            ..*leg
        };
        let result = self.forwarder.forward_checked(&task_leg, input).await;
        // The task's owner first: once the row names the task, a duplicate
        // waiting on it reads the task, and ownership is checked then
        // (`finish` records it again, harmlessly, for every task answer).
        if let Some(t) = result.as_ref().ok().and_then(|r| r.response.task()) {
            let owned = retry_while_unavailable(
                leg.deadline.max(Instant::now() + STORE_GRACE),
                |e: &TaskOwnersError| e.is_unavailable(),
                || {
                    self.owners
                        .record(&leg.route.system.id, &t.id, caller, &leg.call.capability)
                },
            )
            .await;
            if let Err(e) = owned {
                tracing::warn!(error = %e, "could not record a task's owner");
            }
        }
        // Recorded before the caller is answered; a store that is away (a
        // PostgreSQL restart) is waited for until the deadline. A row left
        // `submitting` by a live process would hold every retry of the key
        // until its deadline.
        let record = || async {
            match &result {
                Ok(reply) => match reply.response.task() {
                    Some(t) => {
                        self.records
                            .accepted(caller, key, &t.id, RecordState::of_task(&t.status.state))
                            .await
                    }
                    // Answered at once, without a task: done, and never to
                    // be resubmitted (a retry is told to use a new id).
                    None => self.records.answered(caller, key).await,
                },
                Err(f) if f.blame == Blame::Caller => self.records.release(caller, key).await,
                Err(_) => self.records.unknown(caller, key).await,
            }
        };
        let until = leg.deadline.max(Instant::now() + STORE_GRACE);
        let recorded =
            retry_while_unavailable(until, TaskRecordsError::is_unavailable, record).await;
        if let Err(e) = recorded {
            tracing::warn!(error = %e, "could not record a task submission's answer");
        }
        Done::forwarded(result)
    }

    /// The task a key already has, read fresh from the provider.
    async fn join_task(&self, leg: &Leg<'_>, task_id: &str) -> Done {
        let op = TaskOp::Get(GetTaskRequest {
            id: task_id.to_string(),
            history_length: Some(0),
            tenant: None,
        });
        match self.ops.task_op(&leg.rpc(), &op).await {
            Ok(value) => match serde_json::from_value::<Task>(value) {
                Ok(task) => {
                    if let Err(e) = self
                        .records
                        .observe(
                            &leg.route.system.id,
                            &task.id,
                            RecordState::of_task(&task.status.state),
                        )
                        .await
                    {
                        tracing::warn!(error = %e, "could not record a task's state");
                    }
                    answered_task(task, true, "the key's task, not executed again")
                }
                Err(e) => Done::fail(peer_error(format!(
                    "{}'s task is not an A2A task: {}",
                    leg.route.system.id,
                    clip(&e.to_string(), 200)
                ))),
            },
            Err(refusal) => Done::fail(refusal_reason(
                &leg.call.caller,
                &leg.route.system.id,
                refusal,
            )),
        }
    }

    /// Asks the provider for the task of this caller's key (`ListTasks`,
    /// matched on the metadata the provider stamps its tasks with).
    async fn find_by_key(&self, leg: &Leg<'_>) -> Result<Option<Task>, NotConnected> {
        let key = leg.call.envelope.request_id.as_str();
        let rpc = leg.rpc();
        let mut page_token = None;
        for _ in 0..MAX_LIST_PAGES {
            let list = ListTasksRequest {
                context_id: None,
                status: None,
                page_size: Some(100),
                page_token: page_token.take(),
                history_length: Some(0),
                status_timestamp_after: None,
                include_artifacts: Some(true),
                tenant: None,
            };
            let params =
                serde_json::to_value(&list).map_err(|e| peer_error(format!("encoding: {e}")))?;
            let op = TaskOp::List(list);
            let (status, body) = self
                .forwarder
                .rpc(&rpc, Method::ListTasks, params)
                .await
                .map_err(|f| f.nc)?;
            let value = match read_task_answer(&rpc.system.id, status, &body, &op) {
                Ok(Read::Result(v)) => v,
                Ok(Read::Error { code, message }) => {
                    return Err(peer_error(format!(
                        "{} answered ListTasks with error {code}: {message}",
                        rpc.system.id
                    )))
                }
                Err(f) => return Err(f.nc),
            };
            let tasks = value
                .get("tasks")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for t in tasks {
                let Ok(task) = serde_json::from_value::<Task>(t) else {
                    continue;
                };
                let stamped = |k: &str| {
                    task.metadata
                        .as_ref()
                        .and_then(|m| m.get(k))
                        .and_then(Value::as_str)
                        .map(str::to_string)
                };
                if stamped(KEY_METADATA).as_deref() == Some(key)
                    && stamped(CALLER_METADATA).as_deref() == Some(leg.call.caller.as_str())
                {
                    return Ok(Some(task));
                }
            }
            match value.get("nextPageToken").and_then(Value::as_str) {
                Some(next) if !next.is_empty() => page_token = Some(next.to_string()),
                _ => return Ok(None),
            }
        }
        Ok(None)
    }
}

/// A task the hub already knew, answered as the provider's task (its
/// result read from its artifact once completed).
fn answered_task(task: Task, retry: bool, note: &str) -> Done {
    let response = SendMessageResponse::Task(task);
    let result = exchange::wire::parse_answer(&response).unwrap_or(Value::Null);
    Done {
        result: Ok(Answered {
            result,
            replayed: retry,
            reply: Some(ProviderReply::Typed(response)),
        }),
        note: note.into(),
        status: None,
        provider_code: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_is_capped_and_checked() {
        let now = DateTime::parse_from_rfc3339("2026-12-01T10:00:00Z")
            .expect("time")
            .with_timezone(&Utc);
        assert_eq!(
            task_deadline(None, 30_000, now).as_deref(),
            Ok("2026-12-01T10:00:30.000Z")
        );
        assert_eq!(
            task_deadline(Some("2026-12-01T10:00:05Z"), 30_000, now).as_deref(),
            Ok("2026-12-01T10:00:05.000Z")
        );
        // Later than the capability allows: capped.
        assert_eq!(
            task_deadline(Some("2026-12-01T11:00:00Z"), 30_000, now).as_deref(),
            Ok("2026-12-01T10:00:30.000Z")
        );
        let past = task_deadline(Some("2026-12-01T09:00:00Z"), 30_000, now).unwrap_err();
        assert!(past.contains("has passed"), "{past}");
        let garbage = task_deadline(Some("tomorrow"), 30_000, now).unwrap_err();
        assert!(
            garbage.contains("`tomorrow` is not an RFC 3339 time"),
            "{garbage}"
        );
    }
}
