//! The push-config operations at the task door ([`super::TaskOp`]'s
//! `CreatePush`, `GetPush`, `ListPush`, `DeletePush`), once the caller's
//! ownership of the task is checked: kept by the hub's push relay
//! ([`crate::push`]), never forwarded as the caller sent them. Creating
//! the first configuration of a task registers the hub's own webhook with
//! the provider (one A2A `CreateTaskPushNotificationConfig` there, with
//! the hub's token for the provider); a provider that cannot push answers
//! with its A2A error, which the caller gets.

use serde_json::{json, Value};

use super::forward::Rpc;
use super::tasks::{TaskOp, TaskOps, TaskRefusal};
use crate::push::PushError;
use exchange::reason::{NotConnected, ReasonCode};
use exchange::text::clip;

impl TaskOps {
    /// One push-config operation of `rpc.caller` on its own task.
    pub(super) async fn push_op(&self, rpc: &Rpc<'_>, op: &TaskOp) -> Result<Value, TaskRefusal> {
        let provider = rpc.system.id.as_str();
        let push = &self.push;
        match op {
            TaskOp::CreatePush(config) => {
                push.check_url(&config.url).await.map_err(refusal)?;
                if push
                    .relay_of(provider, &config.task_id)
                    .await
                    .map_err(refusal)?
                    .is_none()
                {
                    let (relay, at_provider) = push.new_relay(provider, &config.task_id);
                    self.ask(rpc, &TaskOp::CreatePush(at_provider)).await?;
                    push.keep_relay(&relay).await.map_err(refusal)?;
                }
                let kept = push
                    .keep_config(provider, rpc.caller, config.clone())
                    .await
                    .map_err(refusal)?;
                serde_json::to_value(kept).map_err(|e| store(e.to_string()))
            }
            TaskOp::GetPush(asked) => {
                let configs = push
                    .configs(provider, &asked.task_id)
                    .await
                    .map_err(refusal)?;
                let found = configs
                    .into_iter()
                    .find(|c| c.id.as_deref() == Some(asked.id.as_str()))
                    .ok_or_else(|| no_config(&asked.id))?;
                serde_json::to_value(found).map_err(|e| store(e.to_string()))
            }
            TaskOp::ListPush(asked) => {
                let configs = push
                    .configs(provider, &asked.task_id)
                    .await
                    .map_err(refusal)?;
                Ok(json!({ "configs": configs }))
            }
            TaskOp::DeletePush(asked) => {
                if push
                    .delete(provider, &asked.task_id, &asked.id)
                    .await
                    .map_err(refusal)?
                {
                    Ok(Value::Null)
                } else {
                    Err(no_config(&asked.id))
                }
            }
            _ => Err(TaskRefusal::InvalidParams(
                "not a push-config operation".into(),
            )),
        }
    }
}

fn refusal(e: PushError) -> TaskRefusal {
    match e {
        PushError::Url(why) => TaskRefusal::InvalidParams(why),
        PushError::Store(e) => store(e.to_string()),
    }
}

fn store(why: String) -> TaskRefusal {
    tracing::warn!(error = %why, "push relay: the store failed");
    TaskRefusal::NotConnected(NotConnected::new(
        ReasonCode::PeerError,
        "the hub could not keep its push configurations; try again",
    ))
}

fn no_config(id: &str) -> TaskRefusal {
    TaskRefusal::InvalidParams(format!(
        "no push configuration `{}` on this task",
        clip(id, 64)
    ))
}
