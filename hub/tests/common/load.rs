//! A mixed, open-loop load of the hub's writes, retried by their keys: what
//! the durability fault tests run while they kill a hub (`tests/faults.rs`).
//!
//! Every operation is one the hub must not lose once it answered it:
//! * a **consult** under its own `X-Request-Id` (an idempotency record),
//!   BuyerCorp asking a provider the test names (a slow one keeps calls in
//!   flight when the hub dies);
//! * a **task** submission under its own `messageId`, answered when the
//!   task has run (~150 ms of work: in flight when the hub dies), with a
//!   task record and one execution at the provider;
//! * a **position** saved from the canvas (a row of `node_positions`);
//! * a **decision**: a drawer's consult whose proposal lands in the hub's
//!   inbox, then approved (an inbox entry decided once, and its plan).
//!
//! A caller that gets no answer — the hub process died under it, the
//! balancer said 502, the connection was refused — retries with the same
//! key, as an A2A client must, until the retry budget is spent. Afterwards
//! [`Run::verify`] reads the hub's store and the providers' trails: every
//! acknowledged operation must be there, once.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{json, Value};

use super::a2a::unique;
use super::{Stack, UiClient};

/// How long a caller keeps retrying one operation.
pub const RETRY_BUDGET: Duration = Duration::from_secs(15);

/// The kinds of operation, in the order the load cycles through them
/// (consults are half of it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Consult,
    Task,
    Position,
    Decision,
}

const CYCLE: [Kind; 8] = [
    Kind::Consult,
    Kind::Task,
    Kind::Consult,
    Kind::Position,
    Kind::Consult,
    Kind::Task,
    Kind::Consult,
    Kind::Decision,
];

/// What became of one operation.
#[derive(Debug, Clone)]
pub struct Done {
    pub kind: Kind,
    /// The consult's request id, the task's message id, the node, or the
    /// inbox entry.
    pub key: String,
    /// The hub acknowledged it.
    pub acknowledged: bool,
    /// Sends it took beyond its steps (0: no retry; a decision is two
    /// steps, everything else one).
    pub retries: u32,
    /// From the first send to the acknowledgement (or giving up).
    pub elapsed: Duration,
    /// Seconds after the load started that it began.
    pub at: f64,
    /// The task id, or the position's x, or the decision's status.
    pub detail: String,
    /// The last failure seen, if any.
    pub last_failure: String,
}

/// Everything a load sends with, taken from the stack up front (the test
/// kills and restarts processes of the stack while it runs).
#[derive(Clone)]
struct Target {
    hub: String,
    /// Who BuyerCorp consults.
    consult_provider: String,
    consult_headers: Vec<(String, String)>,
    task_headers: Vec<(String, String)>,
    ui: UiClient,
    client: reqwest::Client,
}

/// A finished load.
pub struct Run {
    pub done: Vec<Done>,
    pub wall: Duration,
}

/// Starts `rate` operations a second for `seconds` against the stack's hub
/// URL (the balancer, for replicas), BuyerCorp's consults going to
/// `consult_provider`; returns the handle to await.
pub async fn start(
    stack: &Stack,
    rate: u64,
    seconds: u64,
    consult_provider: &str,
) -> tokio::task::JoinHandle<Run> {
    let ui = stack.ui().await;
    let consult = stack.call("buyercorp", consult_provider, "budget.consult");
    let task = stack.a2a("buyercorp", "helpdesk");
    let target = Target {
        hub: stack.hub_url(),
        consult_provider: consult_provider.to_string(),
        consult_headers: consult.headers,
        task_headers: task.headers,
        ui,
        client: reqwest::Client::builder()
            .timeout(Duration::from_secs(5))
            .build()
            .expect("client"),
    };
    // The edge the decisions' drawer consults run on.
    let (status, text) = target
        .ui
        .send(
            Method::POST,
            "/api/edges",
            &json!({"consumer": "helpdesk", "provider": "buyercorp", "capability": "budget.consult"}),
        )
        .await;
    assert!(status == 201 || status == 409, "{status}: {text}");
    let total = rate * seconds;
    tokio::spawn(async move {
        let started = Instant::now();
        let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / rate as f64));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
        let mut ops = Vec::with_capacity(total as usize);
        for n in 0..total {
            tick.tick().await;
            let kind = CYCLE[(n % CYCLE.len() as u64) as usize];
            let target = target.clone();
            let at = started.elapsed().as_secs_f64();
            ops.push(tokio::spawn(async move {
                let mut done = run_one(&target, kind, n).await;
                done.at = at;
                done
            }));
        }
        let mut done = Vec::with_capacity(ops.len());
        for op in ops {
            if let Ok(d) = op.await {
                done.push(d);
            }
        }
        Run {
            done,
            wall: started.elapsed(),
        }
    })
}

/// One operation, retried by its key until acknowledged or out of budget.
async fn run_one(t: &Target, kind: Kind, n: u64) -> Done {
    let key = match kind {
        Kind::Consult => format!("load-consult-{}", unique()),
        Kind::Task => format!("load-task-{}", unique()),
        Kind::Position => format!("load-node-{n}"),
        Kind::Decision => String::new(),
    };
    let started = Instant::now();
    let mut done = Done {
        kind,
        key,
        acknowledged: false,
        retries: 0,
        elapsed: Duration::ZERO,
        at: 0.0,
        detail: String::new(),
        last_failure: String::new(),
    };
    // A decision is two acknowledged steps: the proposal, then the
    // approval (each retried on its own).
    let mut entry: Option<String> = None;
    let mut sends: u32 = 0;
    while started.elapsed() < RETRY_BUDGET {
        sends += 1;
        let outcome = match kind {
            Kind::Consult => consult(t, &done.key).await,
            Kind::Task => task(t, &done.key).await,
            Kind::Position => position(t, &done.key, n).await,
            Kind::Decision => match &entry {
                None => propose(t, n).await.map(|id| {
                    entry = Some(id);
                    None
                }),
                Some(id) => approve(t, id).await.map(Some),
            },
        };
        match outcome {
            Ok(Some(detail)) => {
                done.acknowledged = true;
                done.detail = detail;
                if let Some(id) = &entry {
                    done.key = id.clone();
                }
                break;
            }
            // A first step acknowledged: on to the next at once.
            Ok(None) => continue,
            Err(why) => {
                done.last_failure = why;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
    if let (Kind::Decision, Some(id)) = (kind, &entry) {
        done.key = id.clone();
    }
    let steps = if kind == Kind::Decision { 2 } else { 1 };
    done.retries = sends.saturating_sub(steps);
    done.elapsed = started.elapsed();
    done
}

type Step = Result<Option<String>, String>;

async fn send(
    t: &Target,
    method: Method,
    url: &str,
    headers: &[(String, String)],
    body: &Value,
) -> Result<(u16, Value), String> {
    let mut req = t.client.request(method, url).json(body);
    for (n, v) in headers {
        req = req.header(n.as_str(), v.as_str());
    }
    let resp = req.send().await.map_err(|e| format!("transport: {e}"))?;
    let status = resp.status().as_u16();
    let text = resp.text().await.map_err(|e| format!("transport: {e}"))?;
    Ok((
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    ))
}

async fn consult(t: &Target, key: &str) -> Step {
    let mut headers = t.consult_headers.clone();
    headers.push(("x-request-id".into(), key.into()));
    let (status, json) = send(
        t,
        Method::POST,
        &format!("{}/gateway/v1/{}/budget.consult", t.hub, t.consult_provider),
        &headers,
        &json!({"question": "How much of the marketing budget is left?"}),
    )
    .await?;
    if status == 200 && json["status"] == "connected" {
        Ok(Some(
            json["trace_id"].as_str().unwrap_or_default().to_string(),
        ))
    } else {
        Err(format!(
            "{status} {}",
            json["reason"].as_str().unwrap_or("?")
        ))
    }
}

async fn task(t: &Target, key: &str) -> Step {
    let body = json!({
        "jsonrpc": "2.0", "id": key, "method": "SendMessage",
        "params": super::a2a::triage(key, json!({"ticket_id": "T-1002", "work_ms": 150}), false, None),
    });
    let (status, json) = send(
        t,
        Method::POST,
        &format!("{}/a2a/helpdesk", t.hub),
        &t.task_headers,
        &body,
    )
    .await?;
    match json["result"]["task"]["id"].as_str() {
        Some(id) if status == 200 => Ok(Some(id.to_string())),
        _ => Err(format!("{status} {}", json["error"]["message"])),
    }
}

async fn position(t: &Target, node: &str, n: u64) -> Step {
    let x = n as f64 + 0.5;
    let resp =
        t.ui.request(Method::PUT, "/api/positions")
            .json(&json!({"positions": [{"node": node, "x": x, "y": -1.0}]}))
            .send()
            .await
            .map_err(|e| format!("transport: {e}"))?;
    match resp.status().as_u16() {
        204 => Ok(Some(x.to_string())),
        s => Err(format!("{s}")),
    }
}

async fn propose(t: &Target, n: u64) -> Result<String, String> {
    let resp =
        t.ui.request(
            Method::POST,
            "/api/edges/helpdesk-%3Ebuyercorp:budget.consult/ask",
        )
        .json(&json!({"question": format!("raise marketing budget to {}", 100_000 + n)}))
        .send()
        .await
        .map_err(|e| format!("transport: {e}"))?;
    let status = resp.status().as_u16();
    let json: Value = resp.json().await.map_err(|e| format!("transport: {e}"))?;
    match json["proposed_actions"][0]["id"].as_str() {
        Some(id) if status == 200 => Ok(id.to_string()),
        _ => Err(format!("{status} ask")),
    }
}

async fn approve(t: &Target, id: &str) -> Result<String, String> {
    let resp =
        t.ui.request(Method::POST, &format!("/api/inbox/{id}/approve"))
            .json(&json!(null))
            .send()
            .await
            .map_err(|e| format!("transport: {e}"))?;
    match resp.status().as_u16() {
        200 => Ok("approved".into()),
        s => Err(format!("{s} approve")),
    }
}

/// What the stores hold of the acknowledged operations, and the figures.
#[derive(Debug, Default)]
pub struct Verified {
    /// Acknowledged operations whose record is missing (must be none).
    pub lost: Vec<String>,
    /// Acknowledged tasks the provider ran other than once.
    pub tasks_not_once: Vec<String>,
    /// Decisions recorded other than once.
    pub decisions_not_once: Vec<String>,
    /// Consult keys by how many times the provider ran them.
    pub consult_executions: BTreeMap<u64, usize>,
}

impl Run {
    /// Reads the hub's store and the providers' trails for every
    /// acknowledged operation.
    pub async fn verify(&self, stack: &Stack, consult_provider: &str) -> Verified {
        let hub = stack.hub_store().await;
        let provider = super::trail(&stack.peer_db(consult_provider), consult_provider).await;
        let helpdesk = super::peer_pool(&stack.peer_db("helpdesk")).await;
        let details: Vec<String> = sqlx::query_scalar("SELECT detail FROM audit_trail")
            .fetch_all(&helpdesk)
            .await
            .expect("helpdesk's trail");
        let mut v = Verified::default();
        for d in self.done.iter().filter(|d| d.acknowledged) {
            let present: i64 = match d.kind {
                Kind::Consult => sqlx::query_scalar(
                    "SELECT COUNT(*) FROM idempotency WHERE caller = 'buyercorp'
                     AND provider = $1 AND request_id = $2",
                )
                .bind(consult_provider)
                .bind(&d.key)
                .fetch_one(hub.pool())
                .await
                .expect("idempotency"),
                Kind::Task => sqlx::query_scalar(
                    "SELECT COUNT(*) FROM tasks WHERE caller = 'buyercorp'
                     AND idempotency_key = $1 AND task_id = $2",
                )
                .bind(&d.key)
                .bind(&d.detail)
                .fetch_one(hub.pool())
                .await
                .expect("tasks"),
                Kind::Position => sqlx::query_scalar(
                    "SELECT COUNT(*) FROM node_positions WHERE node = $1 AND x = $2",
                )
                .bind(&d.key)
                .bind(d.detail.parse::<f64>().unwrap_or(f64::NAN))
                .fetch_one(hub.pool())
                .await
                .expect("positions"),
                Kind::Decision => sqlx::query_scalar(
                    "SELECT COUNT(*) FROM approval_inbox WHERE id = $1 AND status = 'approved'",
                )
                .bind(d.key.parse::<i64>().unwrap_or(-1))
                .fetch_one(hub.pool())
                .await
                .expect("inbox"),
            };
            if present != 1 {
                v.lost.push(format!("{:?} {}", d.kind, d.key));
            }
            match d.kind {
                Kind::Consult => {
                    let n = provider
                        .count(&d.key, exchange::audit::Outcome::Executed)
                        .await
                        .expect("the provider's trail");
                    *v.consult_executions.entry(n).or_default() += 1;
                }
                Kind::Task => {
                    let runs = details
                        .iter()
                        .filter(|l| l.contains(&format!("task {} executed", d.detail)))
                        .count();
                    // Answered once it ran: it ran exactly once.
                    if runs != 1 {
                        v.tasks_not_once.push(format!("{} ran {runs}×", d.detail));
                    }
                }
                Kind::Decision => {
                    let lines: i64 =
                        sqlx::query_scalar("SELECT COUNT(*) FROM audit_trail WHERE detail LIKE $1")
                            .bind(format!("inbox entry {} (%", d.key))
                            .fetch_one(hub.pool())
                            .await
                            .expect("hub trail");
                    if lines != 1 {
                        v.decisions_not_once
                            .push(format!("entry {} decided {lines}×", d.key));
                    }
                }
                Kind::Position => {}
            }
        }
        hub.close().await;
        v
    }

    /// The figures, one line per kind.
    pub fn print(&self, title: &str, v: &Verified) {
        println!(
            "\n{title}: {} operations in {:.1} s",
            self.done.len(),
            self.wall.as_secs_f64()
        );
        println!(
            "{:<10} {:>6} {:>8} {:>8} {:>8} {:>8} {:>8}  gave up (last failure)",
            "kind", "ops", "acked", "retried", "p50 ms", "p99 ms", "max ms"
        );
        for kind in [Kind::Consult, Kind::Task, Kind::Position, Kind::Decision] {
            let mine: Vec<&Done> = self.done.iter().filter(|d| d.kind == kind).collect();
            let acked = mine.iter().filter(|d| d.acknowledged).count();
            let retried = mine.iter().filter(|d| d.retries > 0).count();
            let mut times: Vec<Duration> = mine.iter().map(|d| d.elapsed).collect();
            times.sort();
            let pct = |p: f64| {
                times
                    .get(((times.len().max(1) - 1) as f64 * p).round() as usize)
                    .copied()
                    .unwrap_or_default()
                    .as_secs_f64()
                    * 1e3
            };
            let gave_up: Vec<&str> = mine
                .iter()
                .filter(|d| !d.acknowledged)
                .map(|d| d.last_failure.as_str())
                .collect();
            println!(
                "{:<10} {:>6} {:>8} {:>8} {:>8.1} {:>8.1} {:>8.1}  {gave_up:?}",
                format!("{kind:?}"),
                mine.len(),
                acked,
                retried,
                pct(0.5),
                pct(0.99),
                pct(1.0),
            );
        }
        println!(
            "lost acknowledged records: {}; tasks run other than once: {}; decisions recorded other than once: {}; \
             consult keys by provider executions: {:?}",
            v.lost.len(),
            v.tasks_not_once.len(),
            v.decisions_not_once.len(),
            v.consult_executions
        );
    }
}
