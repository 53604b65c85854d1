//! What a member-scoped person sees: each answer of the BFF cut to the
//! part of the exchange their system is part of. An exchange-wide person
//! sees every answer whole; every function here gives it back unchanged.
//!
//! A member's part (system `S`):
//!
//! - **nodes**: `S` itself with its agents and datasources; the systems
//!   (and the hub) at the other end of its edges and rules, as a name and
//!   a health — no description, no detail, no agents, no datasources, and
//!   only the capabilities they share with `S`;
//! - **edges**: those `S` is the consumer or the provider of, established
//!   or observed;
//! - **rules**: those `S` provides (with every consumer: who may call it
//!   is its business), and those it may call (with itself as the only
//!   consumer shown: who else may call another member is not);
//! - **capabilities**: those of its edges and rules;
//! - **inbox**: the entries its consult answers proposed, and the budget
//!   plans they became;
//! - **events**: health of the systems above, traffic of its edges; the
//!   hub's inbox count is the whole hub's, so a member-scoped stream does
//!   not carry it (its badge is read from `GET /api/inbox/pending`, which
//!   counts its own entries).
//!
//! Which routes a member-scoped person may call at all, and with which
//! ids, is decided before any handler runs (`app::access::Reach`, the
//! session guard); this module is what the `Part` routes answer.

use std::collections::HashSet;

use app::access::{node_system, Scope};
use app::dto::{
    CardSignatureView, HubEvent, NodeKind, RecommendationsView, TopologyView, TrafficView,
};
use exchange::inbox::InboxEntry;

use crate::api::ApiFailure;
use crate::registry::model::Topology;
use crate::web::ui_auth::people::Person;
use axum::http::StatusCode;

/// The canvas's topology, of `scope`'s part.
pub fn topology(mut view: TopologyView, scope: &Scope) -> TopologyView {
    let Some(own) = scope.member() else {
        return view;
    };
    view.edges
        .retain(|e| e.consumer == own || e.provider == own);
    view.rules = std::mem::take(&mut view.rules)
        .into_iter()
        .filter_map(|mut rule| {
            if rule.provider == own {
                Some(rule)
            } else if rule.consumers.iter().any(|c| c == own) {
                rule.consumers = vec![own.to_string()];
                Some(rule)
            } else {
                None
            }
        })
        .collect();
    let mut others: HashSet<String> = HashSet::new();
    let mut capabilities: HashSet<String> = HashSet::new();
    for e in &view.edges {
        others.insert(e.consumer.clone());
        others.insert(e.provider.clone());
        capabilities.insert(e.capability.clone());
    }
    for r in &view.rules {
        others.insert(r.provider.clone());
        others.extend(r.consumers.iter().cloned());
        capabilities.insert(r.capability.clone());
    }
    if let Some(node) = view.nodes.iter().find(|n| n.id == own) {
        capabilities.extend(node.provides.iter().map(|c| c.id.clone()));
        capabilities.extend(node.consumes.iter().map(|c| c.id.clone()));
    }
    view.nodes.retain_mut(|node| {
        if node_system(&node.id) == own {
            return true;
        }
        let counterpart =
            matches!(node.node_type, NodeKind::System | NodeKind::Hub) && others.contains(&node.id);
        if counterpart {
            node.description.clear();
            node.detail = None;
            node.card_signature = CardSignatureView::Unsigned;
            node.provides.retain(|c| capabilities.contains(&c.id));
            node.consumes.retain(|c| capabilities.contains(&c.id));
        }
        counterpart
    });
    view.capabilities.retain(|c| capabilities.contains(&c.id));
    let shown: HashSet<&str> = view.nodes.iter().map(|n| n.id.as_str()).collect();
    view.positions.retain(|p| shown.contains(p.node.as_str()));
    // The reason a reload failed names the file's lines: every system's.
    view.reload_error = None;
    view
}

/// For the routes whose body names the systems they touch
/// (`app::access::Reach::Body`): a member-scoped person's request must
/// name its own system among `systems`, else 403 and nothing is done.
pub fn may_touch(person: &Person, systems: &[&str]) -> Result<(), ApiFailure> {
    match person.scope.member() {
        Some(own) if !systems.contains(&own) => Err(ApiFailure::new(
            StatusCode::FORBIDDEN,
            format!(
                "{} is bound to {own}: this change touches {}, not {own}",
                person.username,
                systems
                    .iter()
                    .map(|s| format!("`{}`", exchange::text::clip(s, 64)))
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
        )),
        _ => Ok(()),
    }
}

/// The systems whose health `scope`'s part shows: its own, and those at
/// the other end of its rules (and so of its edges).
fn systems_of(topology: &Topology, own: &str) -> HashSet<String> {
    let mut systems = HashSet::from([own.to_string()]);
    for rule in &topology.rules {
        if rule.provider == own {
            systems.extend(rule.consumers.iter().cloned());
        } else if rule.consumers.iter().any(|c| c == own) {
            systems.insert(rule.provider.clone());
        }
    }
    systems
}

/// One live event as a person of `scope` receives it; `None`: not theirs.
pub fn event(topology: &Topology, scope: &Scope, event: HubEvent) -> Option<HubEvent> {
    let Some(own) = scope.member() else {
        return Some(event);
    };
    match event {
        HubEvent::StatusChanged { ref system, .. } => {
            systems_of(topology, own).contains(system).then_some(event)
        }
        HubEvent::InboxChanged { .. } => None,
        HubEvent::TopologyChanged | HubEvent::AgentsChanged => Some(event),
        HubEvent::Traffic {
            mut edges,
            mut observed,
        } => {
            edges.retain(|e| scope_has_edge(scope, &e.edge));
            observed.retain(|o| scope.covers_either(&o.consumer, &o.provider));
            (!edges.is_empty()).then_some(HubEvent::Traffic { edges, observed })
        }
    }
}

fn scope_has_edge(scope: &Scope, edge: &str) -> bool {
    app::access::edge_ends(edge).is_some_and(|(c, p)| scope.covers_either(c, p))
}

/// Every edge's traffic, of `scope`'s part.
pub fn traffic(mut view: TrafficView, scope: &Scope) -> TrafficView {
    view.edges.retain(|e| scope_has_edge(scope, &e.edge));
    view.observed
        .retain(|o| scope.covers_either(&o.consumer, &o.provider));
    view
}

/// The suggested connections, of `scope`'s part.
pub fn recommendations(mut view: RecommendationsView, scope: &Scope) -> RecommendationsView {
    view.suggestions
        .retain(|s| scope.covers_either(&s.consumer, &s.provider));
    view
}

/// The hub's inbox entries, of `scope`'s part: those its system proposed.
pub fn inbox_entries(entries: &mut Vec<InboxEntry>, scope: &Scope) {
    if let Some(own) = scope.member() {
        entries.retain(|e| e.from_system == own);
    }
}

/// The hub's budget plans, of `scope`'s part: those its system's
/// proposals became.
pub fn budget_plans(plans: &mut Vec<crate::store::budget_plans::BudgetPlan>, scope: &Scope) {
    if let Some(own) = scope.member() {
        plans.retain(|p| p.proposed_by == own);
    }
}

#[cfg(test)]
#[path = "part_tests.rs"]
mod tests;
