//! Tasks through the hub (DESIGN.md §4, "Peer to peer"; A2A v1.0 §3.1.3 to
//! §3.1.5): `GetTask`, `ListTasks` and `CancelTask` reach the provider that
//! holds the task, with the same door as a message: version, auth chain,
//! provider known, one audit record per operation.
//!
//! What is decided here and nowhere else: a caller only ever sees and
//! cancels the tasks it created ([`TaskOwners`](crate::store::task_owners)).
//! Another caller's task id is answered exactly like an id that does not
//! exist, *before* anything is forwarded, so the provider never learns of
//! the attempt and nothing changes there; a `ListTasks` answer is filtered
//! to the caller's own tasks.
//!
//! The connection rules are not asked again: a task is the answer to a
//! message the rules let through, and its owner may read it after a rule
//! is removed, the way a stored answer may be replayed.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use axum::http::HeaderMap;
use serde_json::{json, Value};
use tokio::time::Instant;

use super::answer::{peer_error, Failure};
use super::call::Call;
use super::forward::{Forwarder, Rpc};
use crate::bridge::Method;
use crate::net::listen::Peer;
use crate::push::PushRelay;
use crate::registry::model::System;
use crate::registry::Loaded;
use crate::store::task_owners::TaskOwners;
use crate::store::task_records::{RecordState, TaskRecords};
use a2a::{
    CancelTaskRequest, DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest, GetTaskRequest, ListTaskPushNotificationConfigsRequest,
    ListTasksRequest, SendMessageRequest, SendMessageResponse, Task, TaskPushNotificationConfig,
};
use exchange::envelope::Envelope;
use exchange::reason::{NotConnected, ReasonCode};
use exchange::text::clip;

/// A task operation.
#[derive(Debug, Clone)]
pub enum TaskOp {
    /// `GetTask`.
    Get(GetTaskRequest),
    /// `CancelTask`.
    Cancel(CancelTaskRequest),
    /// `ListTasks`.
    List(ListTasksRequest),
    /// `CreateTaskPushNotificationConfig`: kept by the hub's push relay.
    CreatePush(TaskPushNotificationConfig),
    /// `GetTaskPushNotificationConfig`.
    GetPush(GetTaskPushNotificationConfigRequest),
    /// `ListTaskPushNotificationConfigs`.
    ListPush(ListTaskPushNotificationConfigsRequest),
    /// `DeleteTaskPushNotificationConfig`.
    DeletePush(DeleteTaskPushNotificationConfigRequest),
    /// A `SendMessage` on a task whose result awaits acceptance, carrying
    /// the requester's decision ([`super::acceptance`]).
    Decide(Box<SendMessageRequest>),
}

impl TaskOp {
    /// The A2A method.
    pub fn method(&self) -> Method {
        match self {
            TaskOp::Get(_) => Method::GetTask,
            TaskOp::Cancel(_) => Method::CancelTask,
            TaskOp::List(_) => Method::ListTasks,
            TaskOp::CreatePush(_) => Method::CreatePushConfig,
            TaskOp::GetPush(_) => Method::GetPushConfig,
            TaskOp::ListPush(_) => Method::ListPushConfigs,
            TaskOp::DeletePush(_) => Method::DeletePushConfig,
            TaskOp::Decide(_) => Method::SendMessage,
        }
    }

    /// The name the audit trail records in place of a capability.
    pub(super) fn audit_name(&self) -> &'static str {
        match self {
            TaskOp::Get(_) => "GetTask",
            TaskOp::Cancel(_) => "CancelTask",
            TaskOp::List(_) => "ListTasks",
            TaskOp::CreatePush(_) => "CreateTaskPushNotificationConfig",
            TaskOp::GetPush(_) => "GetTaskPushNotificationConfig",
            TaskOp::ListPush(_) => "ListTaskPushNotificationConfigs",
            TaskOp::DeletePush(_) => "DeleteTaskPushNotificationConfig",
            TaskOp::Decide(r) => {
                match exchange::acceptance::Decision::from_metadata(r.message.metadata.as_ref()) {
                    Ok(Some(d)) if d.action == exchange::acceptance::Action::Accept => {
                        "acceptance.accept"
                    }
                    Ok(Some(_)) => "acceptance.reject",
                    // A decision that cannot be read (refused).
                    _ => "acceptance.decide",
                }
            }
        }
    }

    /// The task it is about (none for a list).
    pub(super) fn task_id(&self) -> Option<&str> {
        match self {
            TaskOp::Get(r) => Some(&r.id),
            TaskOp::Cancel(r) => Some(&r.id),
            TaskOp::List(_) => None,
            TaskOp::CreatePush(c) => Some(&c.task_id),
            TaskOp::GetPush(r) => Some(&r.task_id),
            TaskOp::ListPush(r) => Some(&r.task_id),
            TaskOp::DeletePush(r) => Some(&r.task_id),
            TaskOp::Decide(r) => r.message.task_id.as_deref(),
        }
    }

    fn params(&self) -> Result<Value, serde_json::Error> {
        match self {
            TaskOp::Get(r) => serde_json::to_value(r),
            TaskOp::Cancel(r) => serde_json::to_value(r),
            TaskOp::List(r) => serde_json::to_value(r),
            TaskOp::CreatePush(r) => serde_json::to_value(r),
            TaskOp::GetPush(r) => serde_json::to_value(r),
            TaskOp::ListPush(r) => serde_json::to_value(r),
            TaskOp::DeletePush(r) => serde_json::to_value(r),
            TaskOp::Decide(r) => serde_json::to_value(r),
        }
    }
}

/// What a binding hands the gateway about one task operation.
#[derive(Debug, Clone)]
pub struct TaskIncoming {
    /// The calling system, as the binding identified it.
    pub caller: String,
    /// The TCP peer, for the IP allowlist.
    pub peer: Peer,
    /// Request headers (envelope, token).
    pub headers: HeaderMap,
    /// The provider the task is at.
    pub provider: String,
    /// The operation.
    pub op: TaskOp,
    /// The registry generation the door already read, if it did.
    pub registry: Option<Arc<Loaded>>,
}

/// Why a task operation has no answer.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskRefusal {
    /// Refused or failed like any call: one of the nine reason codes.
    NotConnected(NotConnected),
    /// No task of this caller has this id (A2A `TaskNotFoundError`): also
    /// the answer for another caller's task.
    NotFound(String),
    /// The caller's params are not ones the hub takes (a `pageToken` the
    /// hub did not issue): A2A's invalid params, nothing forwarded.
    InvalidParams(String),
    /// The provider answered with an A2A error (say, a task that can no
    /// longer be canceled): its code and its words, clipped.
    Provider {
        /// The JSON-RPC error code.
        code: i64,
        /// The provider's message.
        message: String,
    },
}

/// What a binding gets back.
#[derive(Debug)]
pub struct TaskHandled {
    /// The envelope, for the answer's headers and error details.
    pub envelope: Envelope,
    /// The v1.0 result (a `Task`, or a `ListTasksResponse`), or why not.
    pub result: Result<Value, TaskRefusal>,
    /// The hub's signed receipt of the operation.
    pub receipt: Option<exchange::audit::Stamp>,
}

/// The task operations at a provider, and what they read: who owns which
/// task, the hub's record of the tasks it forwarded, and the forward.
pub(super) struct TaskOps {
    owners: TaskOwners,
    records: TaskRecords,
    pub(super) forwarder: Arc<Forwarder>,
    /// The push relay the push-config operations are kept by.
    pub(super) push: Arc<PushRelay>,
}

impl TaskOps {
    /// Operations checked against `owners`, observed into `records`, sent
    /// by `forwarder`.
    pub(super) fn new(
        owners: TaskOwners,
        records: TaskRecords,
        forwarder: Arc<Forwarder>,
        push: Arc<PushRelay>,
    ) -> Self {
        Self {
            owners,
            records,
            push,
            forwarder,
        }
    }

    /// The provider call of a task operation of `call` at `system`, under
    /// the hub's default deadline.
    pub(super) fn rpc<'a>(call: &'a Call, system: &'a System) -> Rpc<'a> {
        let deadline_ms = call.registry.topology.hub.default_deadline_ms;
        Rpc {
            system,
            token: call.registry.tokens.of(&system.id),
            caller: &call.caller,
            envelope: &call.envelope,
            deadline: Instant::now() + Duration::from_millis(deadline_ms),
            deadline_ms,
        }
    }

    /// What an answer to `op` at `provider` says of the task: its state
    /// kept in the record, and the capability it was submitted for (what
    /// traffic counts the operation under).
    pub(super) async fn about(
        &self,
        provider: &str,
        op: &TaskOp,
        result: &Result<Value, TaskRefusal>,
    ) -> Option<String> {
        let id = op.task_id()?;
        if let Ok(v) = result {
            if let Some(state) = v
                .get("status")
                .and_then(|s| serde_json::from_value::<a2a::TaskStatus>(s.clone()).ok())
            {
                let state = RecordState::of_task(&state.state);
                if let Err(e) = self.records.observe(provider, id, state).await {
                    tracing::warn!(error = %e, "could not record a task's state");
                }
            }
        }
        self.capability_of(provider, id).await
    }

    /// A task operation of `rpc.caller` at `rpc.system`: only on the
    /// caller's own tasks, checked before anything is forwarded.
    pub(super) async fn task_op(&self, rpc: &Rpc<'_>, op: &TaskOp) -> Result<Value, TaskRefusal> {
        let (provider, caller) = (rpc.system.id.as_str(), rpc.caller);
        if let Some(id) = op.task_id() {
            self.check_owner(rpc, id).await?;
        }
        match op {
            TaskOp::List(asked) => {
                let owned = self
                    .owners
                    .owned(provider, caller)
                    .await
                    .map_err(owners_unreadable)?;
                self.list_owned(rpc, asked, &owned).await
            }
            TaskOp::CreatePush(_)
            | TaskOp::GetPush(_)
            | TaskOp::ListPush(_)
            | TaskOp::DeletePush(_) => self.push_op(rpc, op).await,
            // Decisions take the acceptance door, which knows the
            // contracts (`Gateway::task`).
            TaskOp::Decide(_) => Err(TaskRefusal::InvalidParams(
                "a decision is taken through the acceptance door".into(),
            )),
            _ => self.ask(rpc, op).await,
        }
    }

    /// Whether `rpc.caller` owns task `id` at `rpc.system`: another
    /// caller's task is answered exactly like one that does not exist.
    pub(super) async fn check_owner(&self, rpc: &Rpc<'_>, id: &str) -> Result<(), TaskRefusal> {
        if self
            .owners
            .owns(&rpc.system.id, id, rpc.caller)
            .await
            .map_err(owners_unreadable)?
        {
            Ok(())
        } else {
            Err(TaskRefusal::NotFound(id.to_string()))
        }
    }

    /// The capability task `id` at `provider` was submitted for, as the
    /// hub recorded it.
    pub(super) async fn capability_of(&self, provider: &str, id: &str) -> Option<String> {
        self.records
            .capability_of(provider, id)
            .await
            .ok()
            .flatten()
            .map(|(_, capability)| capability)
    }

    /// One task operation at the provider: its result, its A2A error, or
    /// why nothing usable came back (the status board hears of it).
    pub(super) async fn ask(&self, rpc: &Rpc<'_>, op: &TaskOp) -> Result<Value, TaskRefusal> {
        let provider = rpc.system.id.as_str();
        let params = op
            .params()
            .map_err(|e| TaskRefusal::NotConnected(peer_error(format!("encoding: {e}"))))?;
        let answer = match self.forwarder.rpc(rpc, op.method(), params).await {
            Ok((status, body)) => read_task_answer(provider, status, &body, op),
            Err(failure) => Err(failure),
        };
        self.forwarder.heard(provider, answer.as_ref().map(|_| ()));
        match answer {
            Ok(Read::Result(v)) => Ok(v),
            Ok(Read::Error { code, message }) => Err(TaskRefusal::Provider { code, message }),
            Err(failure) => Err(TaskRefusal::NotConnected(failure.nc)),
        }
    }

    /// `ListTasks` for one caller: the provider's list, every page of it
    /// (at most [`LIST_PAGES`] of [`LIST_PAGE`] tasks, within the call's
    /// deadline), cut down to the caller's own tasks, then paged by the
    /// hub with tokens of its own. The provider's paging never reaches the
    /// caller: a page emptied by the cut, or a token that counts past
    /// other callers' tasks, would tell it that they exist.
    async fn list_owned(
        &self,
        rpc: &Rpc<'_>,
        asked: &ListTasksRequest,
        owned: &HashSet<String>,
    ) -> Result<Value, TaskRefusal> {
        let provider = rpc.system.id.as_str();
        let start = match asked.page_token.as_deref().filter(|t| !t.is_empty()) {
            None => 0,
            Some(token) => token.parse::<usize>().map_err(|_| {
                TaskRefusal::InvalidParams(format!(
                    "pageToken `{}` was not issued by this hub",
                    clip(token, 64)
                ))
            })?,
        };
        let size = asked
            .page_size
            .and_then(|n| usize::try_from(n).ok())
            .filter(|n| *n > 0)
            .unwrap_or(LIST_PAGE)
            .min(LIST_PAGE);
        let mut query = asked.clone();
        query.page_size = i32::try_from(LIST_PAGE).ok();
        query.page_token = None;
        let mut mine: Vec<Value> = Vec::new();
        for _ in 0..LIST_PAGES {
            let page = self.ask(rpc, &TaskOp::List(query.clone())).await?;
            let next = page
                .get("nextPageToken")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let kept = only_owned(page, owned).map_err(|e| {
                TaskRefusal::NotConnected(peer_error(format!(
                    "{provider}'s task list holds a malformed task: {}",
                    clip(&e, 200)
                )))
            })?;
            if let Some(Value::Array(tasks)) = kept.get("tasks") {
                mine.extend(tasks.iter().cloned());
            }
            if next.is_empty() {
                break;
            }
            query.page_token = Some(next);
        }
        let total = mine.len();
        let page: Vec<Value> = mine.into_iter().skip(start).take(size).collect();
        let end = start.saturating_add(page.len());
        Ok(json!({
            "tasks": page,
            "nextPageToken": if end < total { end.to_string() } else { String::new() },
            "pageSize": size,
            "totalSize": total,
        }))
    }
}

/// The largest page the hub asks a provider for, and gives a caller.
const LIST_PAGE: usize = 100;
/// How many pages of a provider's task list the hub reads for one
/// `ListTasks` (a reference peer keeps at most 1,024 tasks).
const LIST_PAGES: usize = 20;

/// The reason code and detail of a task operation's refusal.
pub(super) fn refusal_reason(caller: &str, provider: &str, refusal: TaskRefusal) -> NotConnected {
    match refusal {
        TaskRefusal::NotConnected(nc) => nc,
        TaskRefusal::NotFound(id) => NotConnected::new(
            ReasonCode::NotPermitted,
            format!("no task {} of {caller} at {provider}", clip(&id, 64)),
        ),
        TaskRefusal::InvalidParams(why) => peer_error(why),
        TaskRefusal::Provider { code, message } => {
            peer_error(format!("{provider} answered error {code}: {message}"))
        }
    }
}

/// The hub's task table could not be read: nothing is forwarded.
fn owners_unreadable(e: crate::store::task_owners::TaskOwnersError) -> TaskRefusal {
    tracing::warn!(error = %e, "task ownership lookup failed");
    TaskRefusal::NotConnected(peer_error("the hub could not read its task table".into()))
}

/// A provider's answer to a task operation: its result, or its A2A error.
pub(super) enum Read {
    Result(Value),
    Error { code: i64, message: String },
}

/// Reads a provider's JSON-RPC answer to a task operation: a `Task` for
/// get and cancel, a task list for list; an A2A error passes on with its
/// code; anything else is `PEER_ERROR`.
pub(super) fn read_task_answer(
    id: &str,
    status: http::StatusCode,
    body: &[u8],
    op: &TaskOp,
) -> Result<Read, Failure> {
    let fail = |m: String| Failure::provider(peer_error(m));
    let Ok(parsed) = serde_json::from_slice::<Value>(body) else {
        return Err(fail(format!(
            "{id}'s answer (HTTP {}) is not JSON",
            status.as_u16()
        )));
    };
    if let Some(error) = parsed.get("error").filter(|e| !e.is_null()) {
        let code = error.get("code").and_then(Value::as_i64).unwrap_or(-32603);
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("(no message)");
        return Ok(Read::Error {
            code,
            message: clip(message, super::MAX_PEER_DETAIL),
        });
    }
    if !status.is_success() {
        return Err(fail(format!("{id} answered HTTP {}", status.as_u16())));
    }
    let Some(mut result) = parsed.get("result").cloned() else {
        return Err(fail(format!("{id}'s JSON-RPC answer has no result")));
    };
    match op {
        // A list is read as far as filtering needs (an object whose
        // `tasks`, if any, is a list: ProtoJSON leaves an empty list
        // out); each task the caller keeps is checked in `only_owned`, so
        // one malformed task of someone else's cannot break the caller's
        // list.
        TaskOp::List(_) => {
            let Some(obj) = result.as_object_mut() else {
                return Err(fail(format!("{id}'s task list is not an object")));
            };
            let tasks = obj
                .entry("tasks")
                .or_insert_with(|| Value::Array(Vec::new()));
            if !tasks.is_array() {
                return Err(fail(format!("{id}'s task list has no list of tasks")));
            }
        }
        // A decision's answer is a SendMessage result: the task is what
        // passes on.
        TaskOp::Decide(_) => match serde_json::from_value::<SendMessageResponse>(result) {
            Ok(SendMessageResponse::Task(task)) => {
                result = serde_json::to_value(task).map_err(|e| fail(e.to_string()))?;
            }
            Ok(SendMessageResponse::Message(_)) => {
                return Err(fail(format!(
                    "{id} answered a decision with a message, not the task"
                )))
            }
            Err(e) => {
                return Err(fail(format!(
                    "{id}'s answer to a decision is not an A2A task: {}",
                    clip(&e.to_string(), 200)
                )))
            }
        },
        TaskOp::CreatePush(_) => {
            serde_json::from_value::<TaskPushNotificationConfig>(result.clone()).map_err(|e| {
                fail(format!(
                    "{id}'s answer is not a push configuration: {}",
                    clip(&e.to_string(), 200)
                ))
            })?;
        }
        _ => {
            serde_json::from_value::<Task>(result.clone()).map_err(|e| {
                fail(format!(
                    "{id}'s answer is not an A2A task: {}",
                    clip(&e.to_string(), 200)
                ))
            })?;
        }
    }
    Ok(Read::Result(result))
}

/// A `ListTasks` answer cut down to the tasks in `owned`, each of them
/// checked to be an A2A task (`totalSize` counts what is left).
fn only_owned(mut list: Value, owned: &HashSet<String>) -> Result<Value, String> {
    if let Some(tasks) = list.get_mut("tasks").and_then(Value::as_array_mut) {
        tasks.retain(|t| {
            t.get("id")
                .and_then(Value::as_str)
                .is_some_and(|id| owned.contains(id))
        });
        for t in tasks.iter() {
            serde_json::from_value::<Task>(t.clone()).map_err(|e| e.to_string())?;
        }
        let kept = tasks.len();
        list["totalSize"] = Value::from(kept);
    }
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_list_keeps_only_the_callers_tasks() {
        let task = |id: &str| json!({"id": id, "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}});
        // Someone else's malformed task does not matter; the caller's is checked.
        let list = json!({"tasks": [task("a"), task("b"), {"id": "x", "broken": true}, {"noid": 1}],
                          "nextPageToken": "", "pageSize": 3, "totalSize": 3});
        let owned = HashSet::from(["b".to_string()]);
        let kept = only_owned(list.clone(), &owned).expect("well formed");
        assert_eq!(kept["tasks"], json!([task("b")]));
        assert_eq!(kept["totalSize"], 1);
        assert!(only_owned(list, &HashSet::from(["x".to_string()])).is_err());
        // An empty list, as ProtoJSON writes it (no `tasks`), is empty.
        let op = TaskOp::List(serde_json::from_value(json!({})).expect("params"));
        let empty = br#"{"jsonrpc":"2.0","id":1,"result":{"nextPageToken":"","pageSize":50}}"#;
        match read_task_answer("p", http::StatusCode::OK, empty, &op) {
            Ok(Read::Result(v)) => assert_eq!(v["tasks"], json!([])),
            _ => panic!("an empty list is a list"),
        }
    }

    #[test]
    fn provider_errors_pass_on_and_garbage_is_peer_error() {
        let op = TaskOp::Get(GetTaskRequest {
            id: "t".into(),
            history_length: None,
            tenant: None,
        });
        let ok = http::StatusCode::OK;
        let err = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"task is not cancelable"}}"#;
        match read_task_answer("p", ok, err, &op) {
            Ok(Read::Error { code, message }) => {
                assert_eq!((code, message.as_str()), (-32002, "task is not cancelable"))
            }
            _ => panic!("expected the provider's error"),
        }
        for garbage in [
            &b"<html>"[..],
            br#"{"jsonrpc":"2.0","id":1}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{"id":5}}"#,
        ] {
            match read_task_answer("p", ok, garbage, &op) {
                Err(f) => assert_eq!(f.nc.reason, ReasonCode::PeerError),
                Ok(_) => panic!("garbage accepted: {}", String::from_utf8_lossy(garbage)),
            }
        }
    }
}
