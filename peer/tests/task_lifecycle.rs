//! `ticket.triage` as a real A2A task, against the real `peer serve`
//! binary (DESIGN.md §2 "task", §6): a temp copy of the
//! shipped Helpdesk config on a free port, driven with raw JSON-RPC the
//! way the hub forwards (the peer's bearer token, `X-Caller-System`,
//! `A2A-Version`, `X-Request-Id` = the messageId).
//!
//! Each test proves one end of the lifecycle: completed with its `result`
//! artifact (returnImmediately then GetTask, and blocking), failed (unknown
//! ticket; deadline passed), rejected (bad input), canceled (CancelTask
//! while working), one execution for a repeated messageId (counted in the
//! peer's own audit trail), and the `accept_stall_ms` fault. No assertion
//! is about how long anything took: waits poll for a state, bounded only
//! so that a broken peer fails the test instead of hanging it.

use exchange::audit::{AuditRecord, AuditTrail, Outcome};
use serde_json::{json, Value};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const TOKEN: &str = "task-lifecycle-test-token";
const TOKEN_ENV: &str = "WS_TOKEN_HELPDESK";
const CALLER: &str = "buyercorp";

/// A port nobody listens on right now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("no free loopback port")
}

/// One Helpdesk process, killed when the test lets go of it.
struct Helpdesk {
    _dir: tempfile::TempDir,
    database: PathBuf,
    log: PathBuf,
    port: u16,
    child: Child,
    http: reqwest::Client,
}

impl Drop for Helpdesk {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Helpdesk {
    /// Starts `peer serve` with the shipped helpdesk.yaml, its listen
    /// address, database and (test-only) faults replaced.
    async fn start(faults: Value) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let port = free_port();
        let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/peers/helpdesk.yaml");
        let mut cfg: serde_yaml_ng::Value =
            serde_yaml_ng::from_str(&std::fs::read_to_string(shipped).expect("read helpdesk.yaml"))
                .expect("yaml");
        let database = dir.path().join("helpdesk.db");
        let m = cfg.as_mapping_mut().expect("a mapping");
        let s = |v: &str| serde_yaml_ng::Value::String(v.to_string());
        m.insert(s("listen"), s(&format!("127.0.0.1:{port}")));
        m.insert(s("token_env"), s(TOKEN_ENV));
        m.insert(s("database"), s(&database.display().to_string()));
        m.insert(
            s("faults"),
            serde_yaml_ng::to_value(&faults).expect("faults as yaml"),
        );
        let config = dir.path().join("helpdesk.yaml");
        std::fs::write(&config, serde_yaml_ng::to_string(&cfg).expect("yaml")).expect("write");
        let log = dir.path().join("serve.log");
        let child = Command::new(env!("CARGO_BIN_EXE_peer"))
            .arg("serve")
            .arg("--config")
            .arg(&config)
            .arg("--database")
            .arg(&database)
            .env(TOKEN_ENV, TOKEN)
            .env_remove("PEER_LISTEN")
            .env_remove("PEER_DATABASE")
            .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("log file"))
            .spawn()
            .expect("spawn peer serve");
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(20))
            .build()
            .expect("client");
        let peer = Helpdesk {
            _dir: dir,
            database,
            log,
            port,
            child,
            http,
        };
        peer.wait_healthy().await;
        peer
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    async fn wait_healthy(&self) {
        let bound = Instant::now() + Duration::from_secs(30);
        loop {
            let r = self
                .http
                .get(format!("http://127.0.0.1:{}/health", self.port))
                .send()
                .await;
            if r.is_ok_and(|r| r.status().is_success()) {
                return;
            }
            assert!(
                Instant::now() < bound,
                "the peer never became healthy:\n{}",
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// One JSON-RPC call to `/a2a` as the hub makes it, with `client`.
    async fn rpc_with(
        &self,
        client: &reqwest::Client,
        method: &str,
        request_id: &str,
        params: Value,
    ) -> reqwest::Result<Value> {
        client
            .post(format!("http://127.0.0.1:{}/a2a", self.port))
            .bearer_auth(TOKEN)
            .header("A2A-Version", "1.0")
            .header("X-Caller-System", CALLER)
            .header("X-Request-Id", request_id)
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
            .send()
            .await?
            .json()
            .await
    }

    async fn rpc(&self, method: &str, params: Value) -> Value {
        self.rpc_with(
            &self.http,
            method,
            &uuid::Uuid::new_v4().to_string(),
            params,
        )
        .await
        .unwrap_or_else(|e| panic!("{method}: {e}\n{}", self.log()))
    }

    /// The SendMessage params of a triage call.
    fn triage_params(
        message_id: &str,
        input: Value,
        deadline: Option<&str>,
        return_immediately: bool,
    ) -> Value {
        let mut message = json!({
            "messageId": message_id,
            "role": "ROLE_USER",
            "parts": [{"data": {"capability": "ticket.triage", "input": input}}],
        });
        if let Some(d) = deadline {
            message["metadata"] = json!({ "deadline": d });
        }
        let mut params = json!({ "message": message });
        if return_immediately {
            params["configuration"] = json!({"returnImmediately": true});
        }
        params
    }

    /// Submits a triage and returns the task it answers with.
    async fn submit(
        &self,
        message_id: &str,
        input: Value,
        deadline: Option<&str>,
        return_immediately: bool,
    ) -> Value {
        let answer = self
            .rpc_with(
                &self.http,
                "SendMessage",
                message_id,
                Self::triage_params(message_id, input, deadline, return_immediately),
            )
            .await
            .unwrap_or_else(|e| panic!("SendMessage: {e}\n{}", self.log()));
        let task = answer["result"]["task"].clone();
        assert!(task.is_object(), "not a task: {answer}");
        task
    }

    async fn get_task(&self, id: &str) -> Value {
        let answer = self.rpc("GetTask", json!({ "id": id })).await;
        assert!(answer["result"].is_object(), "GetTask {id}: {answer}");
        answer["result"].clone()
    }

    /// Polls GetTask until the task is in `state` (or in a terminal state,
    /// which then must be `state`).
    async fn wait_for(&self, id: &str, state: &str) -> Value {
        let bound = Instant::now() + Duration::from_secs(60);
        loop {
            let task = self.get_task(id).await;
            let now = state_of(&task);
            if now == state {
                return task;
            }
            assert!(
                !is_terminal(&now),
                "task {id} ended {now}, not {state}: {task}"
            );
            assert!(
                Instant::now() < bound,
                "task {id} never reached {state}: {task}\n{}",
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// The peer's own trail, oldest first.
    async fn trail(&self) -> Vec<AuditRecord> {
        let pool = exchange::db::Store::open_read_only(&self.database)
            .await
            .expect("open the peer's store");
        let mut records = AuditTrail::read_only(pool, "helpdesk")
            .recent(10_000)
            .await
            .expect("read the trail");
        records.reverse();
        records
    }

    /// The trail's lines about task `id`: (outcome, detail).
    async fn lines_of(&self, id: &str) -> Vec<(Outcome, String)> {
        let prefix = format!("task {id} ");
        self.trail()
            .await
            .into_iter()
            .filter(|r| r.detail.starts_with(&prefix))
            .map(|r| (r.outcome, r.detail))
            .collect()
    }

    /// How many `task <id> executed` lines (outcome executed) the trail holds.
    async fn executions_of(&self, id: &str) -> usize {
        let line = format!("task {id} executed");
        self.trail()
            .await
            .iter()
            .filter(|r| r.detail == line && r.outcome == Outcome::Executed)
            .count()
    }
}

fn state_of(task: &Value) -> String {
    task["status"]["state"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn is_terminal(state: &str) -> bool {
    matches!(
        state,
        "TASK_STATE_COMPLETED"
            | "TASK_STATE_FAILED"
            | "TASK_STATE_CANCELED"
            | "TASK_STATE_REJECTED"
    )
}

/// The text of a task's status message.
fn status_text(task: &Value) -> String {
    task["status"]["message"]["parts"]
        .as_array()
        .map(|parts| {
            parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

fn id_of(task: &Value) -> String {
    task["id"].as_str().expect("a task id").to_string()
}

fn new_key() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Whether the lines' details, in order, start with `want` (each a
/// suffix after `task <id> `).
#[track_caller]
fn assert_lines(id: &str, lines: &[(Outcome, String)], want: &[(Outcome, &str)]) {
    let got: Vec<(Outcome, &str)> = lines
        .iter()
        .map(|(o, d)| (*o, d.strip_prefix(&format!("task {id} ")).unwrap_or(d)))
        .collect();
    assert_eq!(got.len(), want.len(), "{got:#?}");
    for ((o, d), (wo, wd)) in got.iter().zip(want) {
        assert_eq!(o, wo, "{got:#?}");
        assert!(d.starts_with(wd), "{wd} in {got:#?}");
    }
}

#[tokio::test]
async fn a_triage_completes_with_its_result_artifact() {
    let peer = Helpdesk::start(json!({})).await;
    let key = new_key();
    let submitted = peer
        .submit(
            &key,
            json!({"ticket_id": "T-1003", "work_ms": 300}),
            None,
            true,
        )
        .await;
    let id = id_of(&submitted);
    // returnImmediately: the task as accepted, not its end.
    assert!(
        matches!(
            state_of(&submitted).as_str(),
            "TASK_STATE_SUBMITTED" | "TASK_STATE_WORKING"
        ),
        "{submitted}"
    );
    assert_eq!(submitted["metadata"]["idempotencyKey"], key.as_str());
    let deadline = submitted["metadata"]["deadline"]
        .as_str()
        .expect("a deadline in the metadata");
    assert!(
        chrono::DateTime::parse_from_rfc3339(deadline).is_ok() && deadline.ends_with('Z'),
        "{deadline}"
    );

    let done = peer.wait_for(&id, "TASK_STATE_COMPLETED").await;
    let artifacts = done["artifacts"].as_array().expect("artifacts");
    assert_eq!(artifacts.len(), 1, "{done}");
    assert_eq!(artifacts[0]["name"], "result");
    let parts = artifacts[0]["parts"].as_array().expect("parts");
    assert_eq!(parts.len(), 1, "{done}");
    let result = &parts[0]["data"];
    let ticket = &peer::datasets::generate_tickets(42, 40)[2];
    assert_eq!(result["ticket_id"], "T-1003");
    assert_eq!(result["subject"], ticket.subject.as_str());
    assert_eq!(result["category"], "billing");
    assert_eq!(result["priority"], "high");
    assert_eq!(result["queue"], "billing");
    // Numbers cross A2A as doubles.
    assert_eq!(result["sla_hours"].as_f64(), Some(4.0));
    assert_eq!(result["requester_email"], ticket.requester_email.as_str());
    assert_eq!(done["metadata"]["idempotencyKey"], key.as_str());
    assert!(status_text(&done).contains("queue billing"), "{done}");

    assert_lines(
        &id,
        &peer.lines_of(&id).await,
        &[
            (Outcome::Connected, "accepted"),
            (Outcome::Executed, "executed"),
            (Outcome::Connected, "completed"),
        ],
    );

    // A blocking SendMessage answers the final task.
    let blocking = peer
        .submit(
            &new_key(),
            json!({"ticket_id": "T-1005", "work_ms": 0}),
            None,
            false,
        )
        .await;
    assert_eq!(state_of(&blocking), "TASK_STATE_COMPLETED", "{blocking}");
    assert_eq!(
        blocking["artifacts"][0]["parts"][0]["data"]["queue"],
        "incident-response"
    );
    assert_eq!(
        blocking["artifacts"][0]["parts"][0]["data"]["priority"],
        "critical"
    );
}

#[tokio::test]
async fn an_unknown_ticket_fails_the_task() {
    let peer = Helpdesk::start(json!({})).await;
    let task = peer
        .submit(
            &new_key(),
            json!({"ticket_id": "T-9999", "work_ms": 0}),
            None,
            true,
        )
        .await;
    let id = id_of(&task);
    let failed = peer.wait_for(&id, "TASK_STATE_FAILED").await;
    assert!(
        status_text(&failed).contains("unknown ticket T-9999"),
        "{failed}"
    );
    assert!(failed["artifacts"].is_null(), "{failed}");
    assert_lines(
        &id,
        &peer.lines_of(&id).await,
        &[
            (Outcome::Connected, "accepted"),
            (Outcome::Executed, "executed"),
            (Outcome::NotConnected, "failed: unknown ticket"),
        ],
    );
}

#[tokio::test]
async fn an_invalid_input_is_rejected_naming_what_is_wrong() {
    let peer = Helpdesk::start(json!({})).await;
    let cases = [
        (json!({}), None, "`ticket_id` is required"),
        (json!({"ticket_id": "T-12"}), None, "`ticket_id` must match"),
        (
            json!({"ticket_id": "T-1003", "work_ms": 70000}),
            None,
            "`work_ms` must be an integer between 0 and 60000",
        ),
        (
            json!({"ticket_id": "T-1003", "urgency": "high"}),
            None,
            "unknown field \"urgency\"",
        ),
        (
            json!({"ticket_id": "T-1003"}),
            Some("next tuesday"),
            "metadata `deadline` must be an RFC 3339 time",
        ),
    ];
    for (input, deadline, want) in cases {
        let task = peer.submit(&new_key(), input.clone(), deadline, true).await;
        // Rejected at once: returnImmediately sees the end already.
        assert_eq!(state_of(&task), "TASK_STATE_REJECTED", "{input}: {task}");
        assert!(status_text(&task).contains(want), "{want} in {task}");
        let id = id_of(&task);
        assert_eq!(state_of(&peer.get_task(&id).await), "TASK_STATE_REJECTED");
        let lines = peer.lines_of(&id).await;
        assert_lines(
            &id,
            &lines,
            &[(Outcome::Refused, "rejected: invalid params: ")],
        );
        assert_eq!(peer.executions_of(&id).await, 0);
    }
}

#[tokio::test]
async fn cancel_task_stops_the_work() {
    let peer = Helpdesk::start(json!({})).await;
    let task = peer
        .submit(
            &new_key(),
            json!({"ticket_id": "T-1001", "work_ms": 30000}),
            None,
            true,
        )
        .await;
    let id = id_of(&task);
    peer.wait_for(&id, "TASK_STATE_WORKING").await;
    let answer = peer.rpc("CancelTask", json!({ "id": id })).await;
    let canceled = &answer["result"];
    assert_eq!(state_of(canceled), "TASK_STATE_CANCELED", "{answer}");
    assert!(status_text(canceled).contains("canceled"), "{answer}");
    let stored = peer.get_task(&id).await;
    assert_eq!(state_of(&stored), "TASK_STATE_CANCELED", "{stored}");
    assert!(stored["artifacts"].is_null(), "{stored}");
    // The line is written before CancelTask answers.
    assert_lines(
        &id,
        &peer.lines_of(&id).await,
        &[
            (Outcome::Connected, "accepted"),
            (Outcome::Executed, "executed"),
            (Outcome::NotConnected, "canceled"),
        ],
    );
    // Canceling again answers the canceled task.
    let again = peer.rpc("CancelTask", json!({ "id": id })).await;
    assert_eq!(state_of(&again["result"]), "TASK_STATE_CANCELED", "{again}");

    // A finished task is not cancelable.
    let done = peer
        .submit(
            &new_key(),
            json!({"ticket_id": "T-1002", "work_ms": 0}),
            None,
            false,
        )
        .await;
    assert_eq!(state_of(&done), "TASK_STATE_COMPLETED", "{done}");
    let refused = peer.rpc("CancelTask", json!({ "id": id_of(&done) })).await;
    assert_eq!(
        refused["error"]["code"],
        a2a::error_code::TASK_NOT_CANCELABLE,
        "{refused}"
    );
    assert_eq!(
        state_of(&peer.get_task(&id_of(&done)).await),
        "TASK_STATE_COMPLETED"
    );
    // The canceled work never reports an end of its own.
    let lines = peer.lines_of(&id).await;
    assert!(
        !lines
            .iter()
            .any(|(_, d)| d.ends_with(" completed") || d.contains(" failed")),
        "{lines:#?}"
    );
}

#[tokio::test]
async fn a_deadline_that_passes_first_fails_the_task_and_a_late_one_is_capped() {
    let peer = Helpdesk::start(json!({})).await;
    let deadline = (chrono::Utc::now() + chrono::Duration::milliseconds(300))
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let task = peer
        .submit(
            &new_key(),
            json!({"ticket_id": "T-1003", "work_ms": 2000}),
            Some(&deadline),
            true,
        )
        .await;
    let id = id_of(&task);
    assert_eq!(task["metadata"]["deadline"], deadline.as_str(), "{task}");
    let failed = peer.wait_for(&id, "TASK_STATE_FAILED").await;
    assert!(status_text(&failed).contains("deadline passed"), "{failed}");
    assert!(failed["artifacts"].is_null(), "{failed}");
    // Accepted, executed unless the deadline had passed by the time the
    // peer accepted (a loaded machine), and failed, never completed.
    let lines = peer.lines_of(&id).await;
    let suffixes: Vec<&str> = lines
        .iter()
        .map(|(_, d)| d.strip_prefix(&format!("task {id} ")).unwrap_or(d))
        .collect();
    assert!(
        suffixes.first().is_some_and(|l| l.starts_with("accepted")),
        "{lines:#?}"
    );
    assert!(
        suffixes
            .last()
            .is_some_and(|l| l.starts_with("failed: deadline passed")),
        "{lines:#?}"
    );
    assert!(
        suffixes.len() <= 3 && peer.executions_of(&id).await <= 1,
        "{lines:#?}"
    );
    assert!(
        !suffixes.iter().any(|l| l.starts_with("completed")),
        "{lines:#?}"
    );

    // A deadline a day away is capped at the skill's max_deadline_ms
    // (30000) from submission.
    let before = chrono::Utc::now();
    let far = (before + chrono::Duration::days(1)).to_rfc3339();
    let task = peer
        .submit(
            &new_key(),
            json!({"ticket_id": "T-1003", "work_ms": 0}),
            Some(&far),
            true,
        )
        .await;
    let after = chrono::Utc::now();
    let got = chrono::DateTime::parse_from_rfc3339(
        task["metadata"]["deadline"].as_str().expect("deadline"),
    )
    .expect("RFC 3339");
    let cap = chrono::Duration::milliseconds(30_000);
    // (The metadata keeps milliseconds.)
    let slack = chrono::Duration::milliseconds(1);
    assert!(
        got >= before + cap - slack && got <= after + cap,
        "{got} not within [{}, {}]",
        before + cap,
        after + cap
    );
    peer.wait_for(&id_of(&task), "TASK_STATE_COMPLETED").await;
}

#[tokio::test]
async fn a_repeated_message_id_answers_the_same_task_and_runs_once() {
    let peer = Helpdesk::start(json!({})).await;
    let key = new_key();
    let input = json!({"ticket_id": "T-1009", "work_ms": 800});
    let first = peer.submit(&key, input.clone(), None, true).await;
    let id = id_of(&first);
    // While it works, and after it completed: the same task, never again.
    let second = peer.submit(&key, input.clone(), None, true).await;
    assert_eq!(id_of(&second), id, "{second}");
    peer.wait_for(&id, "TASK_STATE_COMPLETED").await;
    let third = peer.submit(&key, input.clone(), None, false).await;
    assert_eq!(id_of(&third), id, "{third}");
    assert_eq!(state_of(&third), "TASK_STATE_COMPLETED", "{third}");
    assert_eq!(
        third["artifacts"][0]["parts"][0]["data"]["ticket_id"],
        "T-1009"
    );

    assert_eq!(peer.executions_of(&id).await, 1);
    let lines = peer.lines_of(&id).await;
    let duplicates = lines
        .iter()
        .filter(|(o, d)| {
            *o == Outcome::Replayed
                && d.starts_with(&format!(
                    "task {id} duplicate submission, not executed again"
                ))
        })
        .count();
    assert_eq!(duplicates, 2, "{lines:#?}");
    assert_eq!(
        lines
            .iter()
            .filter(|(_, d)| d.starts_with(&format!("task {id} accepted")))
            .count(),
        1,
        "{lines:#?}"
    );

    // The same key with another input is a caller bug, refused.
    let other = peer
        .submit(&key, json!({"ticket_id": "T-1010"}), None, true)
        .await;
    assert_eq!(state_of(&other), "TASK_STATE_REJECTED", "{other}");
    assert!(status_text(&other).contains("different input"), "{other}");
    assert_ne!(id_of(&other), id);
    assert_eq!(peer.executions_of(&id).await, 1);

    // Found by its key: exactly one task carries it.
    let listed = peer.rpc("ListTasks", json!({"pageSize": 100})).await;
    let tasks = listed["result"]["tasks"].as_array().expect("tasks");
    let by_key: Vec<&Value> = tasks
        .iter()
        .filter(|t| t["metadata"]["idempotencyKey"] == key.as_str())
        .collect();
    assert_eq!(by_key.len(), 1, "{listed}");
    assert_eq!(id_of(by_key[0]), id);
    assert_eq!(state_of(by_key[0]), "TASK_STATE_COMPLETED");
    // The duplicates' own tasks point at the task that answered them.
    let pointing = tasks
        .iter()
        .filter(|t| t["metadata"]["duplicateOf"] == id.as_str())
        .count();
    assert_eq!(pointing, 2, "{listed}");
}

#[tokio::test]
async fn accept_stall_holds_the_answer_not_the_work() {
    let peer = Helpdesk::start(json!({"accept_stall_ms": 4000})).await;
    let key = new_key();
    let input = json!({"ticket_id": "T-1004", "work_ms": 0});
    // A caller that gives up long before the answer comes.
    let impatient = reqwest::Client::builder()
        .timeout(Duration::from_millis(300))
        .build()
        .expect("client");
    let gave_up = peer
        .rpc_with(
            &impatient,
            "SendMessage",
            &key,
            Helpdesk::triage_params(&key, input.clone(), None, true),
        )
        .await;
    assert!(
        gave_up.is_err_and(|e| e.is_timeout()),
        "the answer was not held back"
    );

    // The task was accepted all the same: found by its key, worked on.
    let bound = Instant::now() + Duration::from_secs(30);
    let id = loop {
        let listed = peer.rpc("ListTasks", json!({"pageSize": 100})).await;
        let found = listed["result"]["tasks"].as_array().and_then(|tasks| {
            tasks
                .iter()
                .find(|t| t["metadata"]["idempotencyKey"] == key.as_str())
                .map(id_of)
        });
        if let Some(id) = found {
            break id;
        }
        assert!(
            Instant::now() < bound,
            "never listed: {listed}\n{}",
            peer.log()
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    };
    // The retry with the same key answers that task (not stalled: it is
    // not a new acceptance) and runs nothing again.
    let retry = peer.submit(&key, input, None, true).await;
    assert_eq!(id_of(&retry), id, "{retry}");
    peer.wait_for(&id, "TASK_STATE_COMPLETED").await;
    assert_eq!(peer.executions_of(&id).await, 1);
    assert_lines(
        &id,
        &peer
            .lines_of(&id)
            .await
            .into_iter()
            .filter(|(o, _)| *o != Outcome::Replayed)
            .collect::<Vec<_>>(),
        &[
            (Outcome::Connected, "accepted"),
            (Outcome::Executed, "executed"),
            (Outcome::Connected, "completed"),
        ],
    );
}
