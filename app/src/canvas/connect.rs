//! Which connections the canvas offers, computed from the registry's rules
//! only (DESIGN.md §1 rule 2): this module holds no pair of systems, it
//! reads `TopologyView.rules` and the established `edges`.
//!
//! The browser's verdict is a courtesy to the user (legal targets light up,
//! an illegal drop says why at once); the hub re-checks every create.

use std::collections::{BTreeMap, HashSet};

use crate::dto::{edge_id, CapabilityKind, TopologyView};

/// One connection the rules allow: `consumer → provider` for `capability`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The consuming node id.
    pub consumer: String,
    /// The providing node id.
    pub provider: String,
    /// Capability id.
    pub capability: String,
    /// Its kind.
    pub kind: CapabilityKind,
}

impl Candidate {
    /// The edge id the hub gives this connection once established.
    pub fn edge_id(&self) -> String {
        edge_id(&self.consumer, &self.provider, &self.capability)
    }

    /// Does it join `a` and `b` (in either direction)?
    pub fn joins(&self, a: &str, b: &str) -> bool {
        (self.consumer == a && self.provider == b) || (self.consumer == b && self.provider == a)
    }

    /// Does it have `id` at one end?
    pub fn involves(&self, id: &str) -> bool {
        self.consumer == id || self.provider == id
    }

    /// The end that is not `id`.
    pub fn other_end(&self, id: &str) -> &str {
        if self.consumer == id {
            &self.provider
        } else {
            &self.consumer
        }
    }
}

/// What the rules say about connecting two nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// These connections are allowed and not made yet.
    Legal(Vec<Candidate>),
    /// Allowed, but every allowed connection between them exists already.
    AlreadyConnected(Vec<Candidate>),
    /// No rule joins them in either direction.
    NoRule,
}

/// The rules of one topology, ready to answer the canvas's questions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Connections {
    /// Every connection the rules allow between nodes that exist, sorted.
    allowed: Vec<Candidate>,
    /// The established ones, as (consumer, provider, capability).
    established: HashSet<(String, String, String)>,
}

impl Connections {
    /// Reads the rules and edges of `view`. A rule naming a node the view
    /// does not draw offers nothing (there is nothing to drop on), and a
    /// negotiation is no connection of its own: it is the conversation
    /// that grants a data-share edge its contract, started from that
    /// edge's drawer.
    pub fn new(view: &TopologyView) -> Self {
        let exists: HashSet<&str> = view.nodes.iter().map(|n| n.id.as_str()).collect();
        // Keyed (and so sorted and deduplicated) by the three ids.
        let mut allowed = BTreeMap::new();
        for rule in &view.rules {
            if !exists.contains(rule.provider.as_str()) || rule.kind == CapabilityKind::Negotiation
            {
                continue;
            }
            for consumer in &rule.consumers {
                if consumer == &rule.provider || !exists.contains(consumer.as_str()) {
                    continue;
                }
                allowed.insert(
                    (
                        consumer.clone(),
                        rule.provider.clone(),
                        rule.capability.clone(),
                    ),
                    Candidate {
                        consumer: consumer.clone(),
                        provider: rule.provider.clone(),
                        capability: rule.capability.clone(),
                        kind: rule.kind,
                    },
                );
            }
        }
        let established = view
            .edges
            .iter()
            .map(|e| (e.consumer.clone(), e.provider.clone(), e.capability.clone()))
            .collect();
        Connections {
            allowed: allowed.into_values().collect(),
            established,
        }
    }

    /// Is this connection made already?
    pub fn is_established(&self, c: &Candidate) -> bool {
        self.established
            .contains(&(c.consumer.clone(), c.provider.clone(), c.capability.clone()))
    }

    /// Every allowed, not yet made connection with `id` at one end: what
    /// the keyboard chooser lists.
    pub fn open_from(&self, id: &str) -> Vec<Candidate> {
        self.allowed
            .iter()
            .filter(|c| c.involves(id) && !self.is_established(c))
            .cloned()
            .collect()
    }

    /// The nodes a drag from `id` may end on: the other end of every open
    /// connection from it.
    pub fn legal_targets(&self, id: &str) -> HashSet<String> {
        self.open_from(id)
            .iter()
            .map(|c| c.other_end(id).to_string())
            .collect()
    }

    /// What dropping a connection from `source` on `target` would do.
    pub fn judge(&self, source: &str, target: &str) -> Verdict {
        let between: Vec<Candidate> = self
            .allowed
            .iter()
            .filter(|c| c.joins(source, target))
            .cloned()
            .collect();
        if between.is_empty() {
            return Verdict::NoRule;
        }
        let open: Vec<Candidate> = between
            .iter()
            .filter(|c| !self.is_established(c))
            .cloned()
            .collect();
        if open.is_empty() {
            Verdict::AlreadyConnected(between)
        } else {
            Verdict::Legal(open)
        }
    }
}

/// Why a drop is refused, in words, naming both ends. `name` turns node
/// ids into display names.
pub fn refusal(
    verdict: &Verdict,
    source: &str,
    target: &str,
    name: impl Fn(&str) -> String,
) -> Option<String> {
    let (a, b) = (name(source), name(target));
    match verdict {
        Verdict::Legal(_) => None,
        Verdict::NoRule => Some(format!(
            "Refused: no rule lets {a} consume anything from {b}, or {b} consume anything from {a}."
        )),
        Verdict::AlreadyConnected(existing) => {
            let list: Vec<String> = existing
                .iter()
                .map(|c| sentence(c, &name))
                .collect::<Vec<_>>();
            Some(format!("Already connected: {}.", list.join("; ")))
        }
    }
}

/// "BuyerCorp consumes orders.query from VendorCorp".
pub fn sentence(c: &Candidate, name: impl Fn(&str) -> String) -> String {
    format!(
        "{} consumes {} from {}",
        name(&c.consumer),
        c.capability,
        name(&c.provider)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dto::{
        CapabilityKind::{Consult, DataShare},
        EdgeView, NodeKind, NodeStatus, NodeView, RuleView,
    };

    fn node(id: &str) -> NodeView {
        let kind = if id == "hub" {
            NodeKind::Hub
        } else {
            NodeKind::System
        };
        NodeView::healthy(id, &id.to_uppercase(), kind, None)
    }

    fn rule(cap: &str, kind: CapabilityKind, provider: &str, consumers: &[&str]) -> RuleView {
        RuleView {
            capability: cap.into(),
            kind,
            provider: provider.into(),
            consumers: consumers.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// Rules shaped like the demo's, under made-up ids.
    fn view() -> TopologyView {
        TopologyView {
            hub_id: "hub".into(),
            nodes: ["hub", "a", "b", "c"].into_iter().map(node).collect(),
            edges: vec![EdgeView {
                id: "b->a:x.query".into(),
                consumer: "b".into(),
                provider: "a".into(),
                capability: "x.query".into(),
                kind: DataShare,
                status: NodeStatus::Healthy,
                reason: None,
            }],
            rules: vec![
                rule("x.query", DataShare, "a", &["b", "hub"]),
                rule("y.consult", Consult, "b", &["hub", "c"]),
                rule("z.consult", Consult, "c", &["hub", "b", "ghost"]),
            ],
            capabilities: vec![],
            reload_error: None,
            positions: vec![],
            layout: vec![],
            digest: String::new(),
        }
    }

    #[test]
    fn legal_targets_come_from_the_rules_in_both_directions() {
        let c = Connections::new(&view());
        let from_b = c.legal_targets("b");
        // b consumes z from c, c and the hub consume y from b; b→a exists.
        assert_eq!(from_b, HashSet::from(["c".to_string(), "hub".to_string()]));
        let from_hub = c.legal_targets("hub");
        assert_eq!(
            from_hub,
            HashSet::from(["a".to_string(), "b".to_string(), "c".to_string()])
        );
        assert!(c.legal_targets("ghost").is_empty());
    }

    #[test]
    fn a_pair_with_two_capabilities_offers_both() {
        let c = Connections::new(&view());
        let Verdict::Legal(options) = c.judge("b", "c") else {
            panic!("legal");
        };
        let caps: Vec<&str> = options.iter().map(|o| o.capability.as_str()).collect();
        // Sorted by consumer: b consumes z from c, then c consumes y from b.
        assert_eq!(caps, ["z.consult", "y.consult"]);
        assert_eq!(options[1].edge_id(), "c->b:y.consult");
    }

    #[test]
    fn illegal_and_existing_pairs_are_refused_with_a_reason() {
        let c = Connections::new(&view());
        let name = |id: &str| id.to_uppercase();
        let v = c.judge("a", "c");
        assert_eq!(v, Verdict::NoRule);
        let text = refusal(&v, "a", "c", name).unwrap_or_default();
        assert!(
            text.contains("no rule lets A consume anything from C"),
            "{text}"
        );
        let v = c.judge("a", "b");
        assert!(matches!(v, Verdict::AlreadyConnected(_)));
        let text = refusal(&v, "a", "b", name).unwrap_or_default();
        assert!(text.contains("B consumes x.query from A"), "{text}");
        assert_eq!(refusal(&c.judge("hub", "a"), "hub", "a", name), None);
    }
}
