//! Who this peer says it is (DESIGN.md §2 "peer", §3 "reference peers"):
//! its A2A agent card, built from its config and its table's schema — one
//! skill per capability it provides, the JSON-RPC interface, bearer auth —
//! and the descriptions and sample calls the card and the help text share.
//!
//! A card advertises only what a caller may use: a data-share lists the
//! columns its grant allows, never the others.

use a2a::{
    AgentCapabilities, AgentCard, AgentInterface, AgentProvider, AgentSkill,
    HttpAuthSecurityScheme, SecurityScheme, TRANSPORT_PROTOCOL_JSONRPC,
};
use serde_json::{json, Value};
use std::collections::HashMap;

use crate::config::{Handler, PeerConfig, SkillConfig, SkillKind};
use crate::datasets::{Column, ColumnType, TableSchema};
use crate::VERSION;
use exchange::wire::A2A_JSONRPC_PATH as A2A_PATH;

/// The capabilities declared in the card and enforced by the handler: no
/// streaming (a call is answered at once; a task skill's task is read
/// again with `GetTask`, or its events pushed); push notifications of a
/// task's events to the webhook its caller (the hub) registered; and, on
/// a peer with task skills, results the requester accepts
/// ([`crate::tasks::acceptance`]).
pub fn capabilities(config: &PeerConfig) -> AgentCapabilities {
    let tasks = config.skills.iter().any(|s| s.kind == SkillKind::Task);
    AgentCapabilities {
        streaming: Some(false),
        push_notifications: Some(true),
        extensions: tasks.then(|| {
            vec![exchange::acceptance::card_extension(
                "A task submitted with criteria parks its result in input-required, flagged \
                 pendingAcceptance, until the requester accepts it or rejects it with feedback \
                 (another result on the same task) or its window closes."
                    .into(),
            )]
        }),
        extended_agent_card: None,
    }
}

/// The agent card: one AgentSkill per provided capability, JSON-RPC at
/// `<public_base>/a2a`, bearer auth declared.
pub fn agent_card(config: &PeerConfig, schema: &TableSchema, public_base: &str) -> AgentCard {
    let base = public_base.trim_end_matches('/');
    let provides = config
        .skills
        .iter()
        .map(|s| s.capability.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let mut description = config.description.clone().unwrap_or_else(|| {
        format!(
            "{}: a Wall Street reference peer providing {provides}.",
            config.name
        )
    });
    if !config.agents.is_empty() {
        let agents = config
            .agents
            .iter()
            .map(|a| a.name.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        description.push_str(&format!(" Agents: {agents}."));
    }
    let skills = config
        .skills
        .iter()
        .map(|s| AgentSkill {
            id: s.capability.clone(),
            name: s.name.clone().unwrap_or_else(|| s.capability.clone()),
            description: skill_description(s, schema),
            tags: skill_tags(config, s, schema),
            examples: Some(vec![sample_call(s, schema).to_string()]),
            input_modes: None,
            output_modes: None,
            security_requirements: None,
        })
        .collect();
    let modes: Vec<String> = exchange::wire::ACCEPTED_MEDIA_TYPES
        .iter()
        .map(|m| m.to_string())
        .collect();
    AgentCard {
        name: config.name.clone(),
        description,
        version: VERSION.to_string(),
        supported_interfaces: vec![AgentInterface::new(
            format!("{base}{A2A_PATH}"),
            TRANSPORT_PROTOCOL_JSONRPC,
        )],
        capabilities: capabilities(config),
        default_input_modes: modes.clone(),
        default_output_modes: modes,
        skills,
        provider: Some(AgentProvider {
            organization: config.name.clone(),
            url: base.to_string(),
        }),
        documentation_url: None,
        icon_url: None,
        security_schemes: Some(HashMap::from([(
            "bearer".to_string(),
            SecurityScheme::HttpAuth(HttpAuthSecurityScheme {
                scheme: "Bearer".into(),
                description: Some("The token the hub holds for this peer.".into()),
                bearer_format: None,
            }),
        )])),
        security_requirements: Some(vec![HashMap::from([("bearer".to_string(), Vec::new())])]),
        signatures: None,
    }
}

/// A skill's tags: its kind, handler and system; a negotiation skill adds
/// its negotiable schema — every column *name* of the dataset (what a
/// consumer validates its proposals against; never a value).
fn skill_tags(config: &PeerConfig, skill: &SkillConfig, schema: &TableSchema) -> Vec<String> {
    let mut tags = vec![
        skill.kind.as_str().to_string(),
        skill.handler.as_str().to_string(),
        config.system.clone(),
    ];
    if skill.handler == Handler::Negotiate {
        tags.extend(
            schema
                .columns
                .iter()
                .map(|c| format!("{}{}", exchange::negotiation::COLUMN_TAG_PREFIX, c.name)),
        );
    }
    tags
}

/// What a skill does, for the card and the help text.
pub fn skill_description(skill: &SkillConfig, schema: &TableSchema) -> String {
    if let Some(d) = &skill.description {
        return d.clone();
    }
    match skill.handler {
        Handler::TableQuery => format!(
            "One aggregate (count, sum, avg, min, max) over table {}, with filters (eq, ne, lt, lte, gt, gte, in) \
             and an optional group_by. Columns: {}.",
            schema.table,
            granted(skill, schema)
                .map(|c| format!("{} ({})", c.name, c.ty.as_sql()))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Handler::BudgetConsult => "Answers questions about a department's budget, spending and remaining funds; \
             a request to change a budget comes back as a proposed action, never executed."
            .into(),
        Handler::TicketClassify => "Classifies a support ticket (by ticket_id, or subject and content) into \
             category, priority, confidence, reason codes and whether a human must review it."
            .into(),
        Handler::TicketTriage => format!(
            "Triages a support ticket (by ticket_id) as an A2A task: classifies it, routes it to a \
             queue and sets an SLA in hours; the result is the task's `result` artifact. Works about \
             {} ms unless the input's work_ms says otherwise. The message's messageId is the \
             idempotency key (a repeat answers the same task, never runs it again); its metadata \
             `deadline` (RFC 3339) bounds the task, at most {} ms from submission.",
            skill.work_ms(),
            skill.max_deadline_ms()
        ),
        Handler::Negotiate => format!(
            "Negotiates a data contract for {}: one JSON message per turn with exactly the keys \
             from, intent (propose|counter|accept|reject|request), scope {{columns, purpose, \
             retention_days}} and rationale. The negotiable schema is the column names in this \
             skill's tags; no row and no value is exposed before a contract is granted.",
            skill.negotiates.as_deref().unwrap_or("a data-share")
        ),
    }
}

/// The columns of `schema` that `skill` grants: all a card may advertise.
fn granted<'a>(
    skill: &'a SkillConfig,
    schema: &'a TableSchema,
) -> impl Iterator<Item = &'a Column> + 'a {
    schema
        .columns
        .iter()
        .filter(|c| skill.negotiable_columns.contains(&c.name))
}

/// A data part a client can send to call `skill`.
pub fn sample_call(skill: &SkillConfig, schema: &TableSchema) -> Value {
    let input = match skill.handler {
        Handler::TableQuery => {
            let numeric = granted(skill, schema)
                .find(|c| c.ty.is_numeric())
                .map(|c| c.name.clone());
            let group = granted(skill, schema)
                .find(|c| c.ty == ColumnType::Text)
                .map(|c| c.name.clone());
            match numeric {
                Some(col) => {
                    json!({"aggregate": {"op": "sum", "column": col}, "filters": [], "group_by": group})
                }
                None => json!({"aggregate": {"op": "count"}, "filters": [], "group_by": group}),
            }
        }
        Handler::BudgetConsult => {
            json!({"question": "How much does marketing have left? Raise marketing budget to 150000."})
        }
        Handler::TicketClassify | Handler::TicketTriage => json!({"ticket_id": "T-1003"}),
        Handler::Negotiate => json!({
            "from": "consumer",
            "intent": "propose",
            "scope": {
                "columns": schema.columns.iter().take(2).map(|c| c.name.clone()).collect::<Vec<_>>(),
                "purpose": "what the data is for, in one sentence",
                "retention_days": 30,
            },
            "rationale": "why these columns, in one sentence",
        }),
    };
    json!({"capability": skill.capability, "input": input})
}
