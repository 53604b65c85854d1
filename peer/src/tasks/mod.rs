//! Task skills as real A2A tasks (DESIGN.md §2 "task", §6 "task
//! lifecycle"; the task contract): what the executor runs when
//! a call names a `task` skill (`ticket.triage`).
//!
//! The handler (`a2a-server`'s `DefaultRequestHandler`) creates the task,
//! honours `configuration.returnImmediately`, keeps the task for `GetTask`
//! and `ListTasks` and routes `CancelTask` to the executor. This module
//! decides everything else:
//!
//! * **Lifecycle.** The execute stream yields the Task `submitted`, a
//!   status update `working`, and when the work is done an artifact update
//!   (artifact `result`, one data part: the result) and the status
//!   `completed`. `failed`: an unknown ticket, or the deadline passed
//!   before the work finished (the status message says "deadline passed").
//!   `rejected`: the input, the deadline or the messageId is not valid (the
//!   status message names what). `canceled`: `CancelTask` stopped the work.
//!   A blocking `SendMessage` gets the final task; with `returnImmediately`
//!   the submitted one. A task submitted with acceptance criteria ends its
//!   work in `input-required`, its result pending the requester's decision
//!   instead of `completed` ([`acceptance`]).
//! * **Acceptance** ([`acceptance`]): a message on a pending task with a
//!   decision accepts (`completed`), rejects for another result
//!   (`working`, then pending again) or for good (`failed`); an unanswered
//!   result fails the task when its window closes.
//! * **Task metadata**: `{"idempotencyKey": <messageId>, "caller":
//!   <X-Caller-System>, "deadline": <RFC 3339 UTC>}`, so a caller finds
//!   its task by key with `ListTasks` (keys are per caller).
//! * **Deadline**: the message's metadata `deadline` (the request's
//!   metadata as a fallback), capped at submission + the skill's
//!   `max_deadline_ms`; absent, the cap ([`crate::skills::triage::deadline`]).
//! * **Idempotency at the provider.** The message's `messageId` is the key,
//!   per caller (`X-Caller-System`), in the `task_keys` table of the peer's
//!   own SQLite file, `UNIQUE(caller, message_id)`, bound to the input's
//!   digest. A second submission with the key answers the first task's
//!   current snapshot from the task store (a terminal one ends the stream)
//!   and never runs the work again; the second submission's own task is
//!   marked rejected with metadata `duplicateOf`. The same key with another
//!   input is rejected. A key whose task the store no longer holds (the
//!   peer restarted) fails the new task and runs nothing.
//! * **Trail** (the peer's own, one line each, payload-free): `task <id>
//!   accepted` (outcome connected), `task <id> duplicate submission, not
//!   executed again` (replayed), `task <id> executed` (executed: exactly
//!   one per execution, when the work starts), and at the end `task <id>
//!   completed` (connected), `failed` (not_connected), `canceled`
//!   (not_connected) or `rejected` (refused); with acceptance, `task <id>
//!   result <n> awaits the requester's acceptance until …`, then one line
//!   per decision or expiry.
//! * **One outcome.** A cancel and a finishing task race for the same task.
//!   [`PeerTaskStore`] wraps the task store and decides `begin_cancel`
//!   against the work's own state, so exactly one wins: a cancel after the
//!   work has decided its end is `TaskNotCancelable`, and work that was
//!   canceled never reports an end.
//! * **Fault `accept_stall_ms`**: the task is accepted (in the store with
//!   its metadata, findable by key) and its work starts, but the
//!   `SendMessage` answer is held back that long.
//!
//! | module | what it decides |
//! |---|---|
//! | [`acceptance`] | a result the requester accepts: parked pending, then accepted, rejected (another result, or failed) or expired, exactly one of them |
//! | [`shape`] | what a task looks like on the wire: its metadata keys, its result artifact's name, a status message |
//! | [`lifecycle`] | one task call from its key to its end: the events of each state, the deadline, a duplicate's answer, the cancel stream |
//! | [`keys`] | the idempotency keys: one per (caller, messageId), bound to the input's digest, in the `task_keys` table |
//! | [`store`] | what the executor and the handler's task store share: the running work and where it stands, the one-outcome cancel decision, the trail lines |
//! | [`bounded`] | the bounded A2A task store underneath (two generations), which every call's task goes to |
//!
//! Everything other modules use is re-exported here (`crate::tasks::Tasks`,
//! `crate::tasks::IDEMPOTENCY_KEY`, ...); the bounded store also keeps its
//! older path, `crate::task_store`.

pub mod acceptance;
pub mod bounded;
pub mod keys;
pub mod lifecycle;
pub mod shape;
pub mod store;

pub use acceptance::decision_stream;
pub use keys::{input_digest, Claim, TaskKeys};
pub use lifecycle::{cancel_stream, task_capability, task_stream};
pub use shape::{
    status_message, CALLER_KEY, DEADLINE_KEY, DEADLINE_METADATA, DUPLICATE_OF_KEY, IDEMPOTENCY_KEY,
    RESULT_ARTIFACT,
};
pub use store::{PeerTaskStore, Tasks};
