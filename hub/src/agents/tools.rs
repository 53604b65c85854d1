//! What an orchestrator run may call (DESIGN.md §5; §1 rule 3: cross-system
//! calls are read-only).
//!
//! The tool set is a closed enum of **read-only** tools; a specialist
//! hands its run a subset ([`ToolSet`]). Whatever name a model writes is
//! looked up here, in code, before anything runs: a name outside the
//! run's set, a name that is not a tool, and above all anything that
//! would write (make or remove an edge, approve, set a budget, negotiate)
//! is [`Refused`] and becomes the observation of that step. There is no
//! write tool to reach: the hub's writes happen on the canvas, by a human.
//!
//! Peer data reaches the model only inside `exchange::untrusted::
//! llm_envelope`, and only after the same redaction a drawer applies: a
//! data-share answer becomes the `QueryResultView` a browser would see,
//! a consult answer the `ConsultView` (its proposed actions are *not*
//! stored: a run reads, it never fills an inbox).

use std::collections::BTreeMap;
use std::sync::Arc;

use exchange::envelope::{Envelope, TraceParent};
use exchange::untrusted::{llm_envelope, Untrusted};
use serde::Deserialize;
use serde_json::{json, Value};

use super::candidates;
use crate::gateway::Gateway;
use crate::health::StatusBoard;
use crate::registry::model::CapabilityKind;
use crate::registry::Registry;
use crate::store::edges::EdgeStore;

/// The tools there are. All of them read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tool {
    /// The recommender's candidates: legal connections not made yet.
    ListCandidates,
    /// A node's status and its recent calls through the hub (counts).
    NodeMetrics,
    /// A read-only query along a data-share edge, as the hub (a drawer's
    /// query).
    QueryEdge,
    /// A read-only question along a consult edge, as the hub (a drawer's
    /// question).
    AskEdge,
}

impl Tool {
    /// Every tool.
    pub const ALL: [Tool; 4] = [
        Tool::ListCandidates,
        Tool::NodeMetrics,
        Tool::QueryEdge,
        Tool::AskEdge,
    ];

    /// Its name, as prompts and models spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Tool::ListCandidates => "list_candidates",
            Tool::NodeMetrics => "node_metrics",
            Tool::QueryEdge => "query_edge",
            Tool::AskEdge => "ask_edge",
        }
    }

    /// The tool called `name`.
    pub fn parse(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

/// Words that mark a name as a write: such a call is refused with that
/// reason even though no such tool exists, so the trail says what was
/// attempted.
const WRITE_WORDS: [&str; 14] = [
    "create",
    "delete",
    "remove",
    "approve",
    "reject",
    "set",
    "write",
    "update",
    "insert",
    "save",
    "connect",
    "negotiate",
    "execute",
    "put",
];

/// Why a tool call did not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// The name would write: no run may.
    #[error("`{0}` would write; the hub's agents only read (a human makes changes on the canvas)")]
    Writes(String),
    /// A tool, but not one this run was given.
    #[error("`{0}` is not among this run's tools")]
    NotInSet(String),
    /// No tool has that name.
    #[error("there is no tool `{0}`")]
    Unknown(String),
    /// The arguments do not fit the tool.
    #[error("bad arguments for {tool}: {why}")]
    Arguments {
        /// The tool.
        tool: &'static str,
        /// What is wrong.
        why: String,
    },
    /// The edge is not one the hub may read along.
    #[error("{0}")]
    Edge(String),
}

/// The tools one run may call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolSet(Vec<Tool>);

impl ToolSet {
    /// The set of `tools`.
    pub fn of(tools: &[Tool]) -> Self {
        let mut v = tools.to_vec();
        v.sort();
        v.dedup();
        Self(v)
    }

    /// Names, comma-separated, as the prompt lists them.
    pub fn names(&self) -> String {
        self.0
            .iter()
            .map(|t| t.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The tool a model's `name` asks for, if this run may call it.
    pub fn admit(&self, name: &str) -> Result<Tool, Refused> {
        let name = exchange::text::clip(name, 64);
        if let Some(tool) = Tool::parse(&name) {
            return if self.0.contains(&tool) {
                Ok(tool)
            } else {
                Err(Refused::NotInSet(name))
            };
        }
        // Words of the name, camelCase split too (`deleteEdge`).
        let mut spaced = String::new();
        for c in name.chars() {
            if c.is_ascii_uppercase() {
                spaced.push(' ');
            }
            spaced.push(c.to_ascii_lowercase());
        }
        if spaced
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|w| WRITE_WORDS.contains(&w))
        {
            return Err(Refused::Writes(name));
        }
        Err(Refused::Unknown(name))
    }
}

/// What the tools read: the hub's own state, and its gateway for calls
/// along its edges (as the hub, with the rule check, contracts and trail
/// of any drawer call).
#[derive(Debug, Clone)]
pub struct Context {
    pub registry: Arc<Registry>,
    pub edges: Arc<EdgeStore>,
    pub board: Arc<StatusBoard>,
    pub gateway: Arc<Gateway>,
    /// The hub's audit trail (the agents' transcripts are recorded in it).
    pub audit: exchange::audit::AuditTrail,
}

/// A tool's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    /// What the model is shown: hub data as JSON, peer data inside the
    /// untrusted-data envelope.
    pub for_model: String,
    /// What a browser is shown: the same data, redacted as a drawer's.
    pub for_browser: String,
    /// Who wrote the data (`hub` or the provider's id).
    pub from: String,
    /// Whether a call along an edge failed (its reason code), for the trail.
    pub not_connected: Option<exchange::reason::ReasonCode>,
}

impl Observation {
    fn hub(value: Value) -> Self {
        let text = value.to_string();
        Self {
            for_model: text.clone(),
            for_browser: text,
            from: "hub".into(),
            not_connected: None,
        }
    }

    fn peer(
        provider: &str,
        browser_json: String,
        reason: Option<exchange::reason::ReasonCode>,
    ) -> Self {
        let for_model = llm_envelope(&Untrusted::new(browser_json.clone(), provider));
        Self {
            for_model,
            for_browser: browser_json,
            from: provider.into(),
            not_connected: reason,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeArgs {
    node: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct QueryArgs {
    edge: String,
    op: String,
    #[serde(default)]
    column: Option<String>,
    #[serde(default)]
    group_by: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AskArgs {
    edge: String,
    question: String,
}

fn args<T: for<'de> Deserialize<'de>>(tool: Tool, v: &Value) -> Result<T, Refused> {
    let v = if v.is_null() { json!({}) } else { v.clone() };
    serde_json::from_value(v).map_err(|e| Refused::Arguments {
        tool: tool.as_str(),
        why: exchange::text::clip(&e.to_string(), 200),
    })
}

/// Runs `tool` with the model's `arguments`; tool calls along edges carry
/// the run's trace (`trace`), so the gateway's records join the run's.
pub async fn run(
    ctx: &Context,
    tool: Tool,
    arguments: &Value,
    trace: &TraceParent,
) -> Result<Observation, Refused> {
    match tool {
        Tool::ListCandidates => {
            args::<NoArgs>(tool, arguments)?;
            let loaded = ctx.registry.snapshot();
            let made = ctx.edges.visible(&loaded.topology);
            let list: Vec<Value> = candidates::candidates(&loaded.topology, &made)
                .iter()
                .map(|c| json!({"edge": c.edge, "consumer": c.consumer, "provider": c.provider, "capability": c.capability, "why": c.why}))
                .collect();
            Ok(Observation::hub(json!({ "candidates": list })))
        }
        Tool::NodeMetrics => {
            let a: NodeArgs = args(tool, arguments)?;
            node_metrics(ctx, &a.node).await.map(Observation::hub)
        }
        Tool::QueryEdge => {
            let a: QueryArgs = args(tool, arguments)?;
            let req = app::dto::QueryRequest {
                op: a.op,
                column: a.column,
                group_by: a.group_by,
            };
            crate::edge_calls::check_query(&req).map_err(|e| Refused::Arguments {
                tool: tool.as_str(),
                why: e.body.error,
            })?;
            let edge = hub_edge(ctx, &a.edge, CapabilityKind::DataShare)?;
            let input = crate::edge_calls::query_input(&req);
            let (result, answer, meta) = crate::edge_calls::call_and_redact(
                &ctx.gateway,
                &ctx.registry,
                &edge,
                input,
                envelope(trace),
            )
            .await;
            let view = crate::redaction::query_view(meta, answer.as_ref());
            let json = serde_json::to_string(view.get()).unwrap_or_default();
            Ok(Observation::peer(&edge.provider, json, reason_of(&result)))
        }
        Tool::AskEdge => {
            let a: AskArgs = args(tool, arguments)?;
            let question = a.question.trim();
            if question.is_empty() || question.len() > crate::edge_calls::MAX_QUESTION_BYTES {
                return Err(Refused::Arguments {
                    tool: tool.as_str(),
                    why: format!(
                        "a question must be 1 to {} bytes",
                        crate::edge_calls::MAX_QUESTION_BYTES
                    ),
                });
            }
            let edge = hub_edge(ctx, &a.edge, CapabilityKind::Consult)?;
            let (result, answer, meta) = crate::edge_calls::call_and_redact(
                &ctx.gateway,
                &ctx.registry,
                &edge,
                json!({ "question": question }),
                envelope(trace),
            )
            .await;
            // Read only: the answer's proposed actions are shown, never
            // stored in an inbox.
            let view = crate::redaction::consult_view(meta, answer.as_ref(), Vec::new());
            let json = serde_json::to_string(view.get()).unwrap_or_default();
            Ok(Observation::peer(&edge.provider, json, reason_of(&result)))
        }
    }
}

fn reason_of(result: &exchange::reason::CallResult) -> Option<exchange::reason::ReasonCode> {
    match result {
        exchange::reason::CallResult::NotConnected { reason, .. } => Some(*reason),
        exchange::reason::CallResult::Connected { .. } => None,
    }
}

fn envelope(trace: &TraceParent) -> Envelope {
    Envelope {
        trace: trace.child(),
        ..Envelope::new_root()
    }
}

/// An established edge of `kind` whose capability a rule lets the hub
/// itself use (the drawers' rule: the hub is the caller of every drawer
/// call along an edge).
fn hub_edge(
    ctx: &Context,
    id: &str,
    kind: CapabilityKind,
) -> Result<crate::store::edges::Edge, Refused> {
    let loaded = ctx.registry.snapshot();
    let t = &loaded.topology;
    let id = exchange::text::clip(id, 200);
    let edge = ctx
        .edges
        .get(t, &id)
        .ok_or_else(|| Refused::Edge(format!("there is no edge {id}")))?;
    // The registry's one decision, as for every other door: the hub reads
    // only where a rule lets it.
    let route = loaded
        .route(&t.hub.id, &edge.provider, &edge.capability)
        .map_err(|nc| Refused::Edge(nc.detail))?;
    match route.capability.kind {
        k if k == kind => Ok(edge),
        _ => Err(Refused::Edge(format!(
            "{id} is not a {} edge",
            crate::registry::model::kind_name(kind)
        ))),
    }
}

/// Most trail lines a node's metrics are counted over.
const METRICS_WINDOW: u32 = 200;

/// A node's status and recent calls: counts only, no payload, no detail
/// text (a detail may quote a peer).
async fn node_metrics(ctx: &Context, node: &str) -> Result<Value, Refused> {
    let loaded = ctx.registry.snapshot();
    let t = &loaded.topology;
    let system = node.split('/').next().unwrap_or_default();
    if t.system(system).is_none() && system != t.hub.id {
        return Err(Refused::Arguments {
            tool: Tool::NodeMetrics.as_str(),
            why: format!("there is no node {}", exchange::text::clip(node, 100)),
        });
    }
    let status = ctx.board.status(system);
    let records = ctx
        .audit
        .recent_involving(system, METRICS_WINDOW)
        .await
        .unwrap_or_default();
    let mut by_outcome: BTreeMap<&str, u64> = BTreeMap::new();
    let mut by_reason: BTreeMap<&str, u64> = BTreeMap::new();
    let mut as_provider = 0u64;
    let mut as_caller = 0u64;
    let mut durations = Vec::new();
    for r in records
        .iter()
        .filter(|r| !r.capability.starts_with(super::CAPABILITY_PREFIX))
    {
        *by_outcome.entry(r.outcome.as_str()).or_default() += 1;
        if let Some(reason) = r.reason {
            *by_reason.entry(reason.as_str()).or_default() += 1;
        }
        if r.provider == system {
            as_provider += 1;
        } else {
            as_caller += 1;
        }
        durations.push(r.duration_ms);
    }
    durations.sort_unstable();
    let p50 = durations.get(durations.len() / 2).copied();
    Ok(json!({
        "node": node,
        "system": system,
        "status": status.node_status(),
        "reason": status.reason().map(|r| r.as_str()),
        "recent_calls": records.len(),
        "as_provider": as_provider,
        "as_caller": as_caller,
        "by_outcome": by_outcome,
        "by_reason": by_reason,
        "duration_ms_p50": p50,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_admits_only_its_own_read_only_tools() {
        let set = ToolSet::of(&[Tool::NodeMetrics, Tool::ListCandidates]);
        assert_eq!(set.names(), "list_candidates, node_metrics");
        assert_eq!(set.admit("node_metrics"), Ok(Tool::NodeMetrics));
        assert_eq!(
            set.admit("query_edge"),
            Err(Refused::NotInSet("query_edge".into()))
        );
        for write in [
            "create_edge",
            "approve_action",
            "set_budget",
            "deleteEdge",
            "negotiate",
        ] {
            assert!(
                matches!(set.admit(write), Err(Refused::Writes(_))),
                "{write}: {:?}",
                set.admit(write)
            );
        }
        assert_eq!(
            set.admit("weather"),
            Err(Refused::Unknown("weather".into()))
        );
    }

    #[test]
    fn arguments_are_checked_strictly() {
        let e = args::<NodeArgs>(Tool::NodeMetrics, &json!({"node": "a", "x": 1})).unwrap_err();
        assert!(e.to_string().contains("unknown field `x`"), "{e}");
        let e = args::<NodeArgs>(Tool::NodeMetrics, &json!({})).unwrap_err();
        assert!(e.to_string().contains("missing field `node`"), "{e}");
        assert!(args::<NoArgs>(Tool::ListCandidates, &Value::Null).is_ok());
    }
}
