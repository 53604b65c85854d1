//! What a task skill's task looks like on the wire, for every room of
//! [`super`] that writes or reads one: the metadata keys a task carries,
//! the name of its result artifact, and an agent's status message.

use a2a::{Message, Part};

/// Task metadata key: the messageId the task was submitted under.
pub const IDEMPOTENCY_KEY: &str = "idempotencyKey";
/// Task metadata key: the caller (`X-Caller-System`) the key belongs to.
pub const CALLER_KEY: &str = "caller";
/// Task metadata key: when the task fails if unfinished (RFC 3339 UTC).
pub const DEADLINE_KEY: &str = "deadline";
/// Task metadata key of a duplicate submission's own (rejected) task: the
/// task that answered it.
pub const DUPLICATE_OF_KEY: &str = "duplicateOf";
/// Message (or request) metadata key a caller sets its deadline with.
pub const DEADLINE_METADATA: &str = "deadline";
/// The name of a task's result artifact.
pub const RESULT_ARTIFACT: &str = "result";

/// An agent status message about task `task_id`.
pub fn status_message(task_id: &str, context_id: &str, text: String) -> Message {
    let mut m = Message::new(a2a::Role::Agent, vec![Part::text(text)]);
    m.task_id = Some(task_id.to_string());
    m.context_id = Some(context_id.to_string());
    m
}
