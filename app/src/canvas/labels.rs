//! The words the canvas uses for kinds of things, in labels and CSS
//! classes: pure, shared by every component.

use crate::dto::{CapabilityKind, NodeKind};

/// The wire spelling of a capability kind, used in labels and CSS classes.
pub fn kind_label(kind: CapabilityKind) -> &'static str {
    match kind {
        CapabilityKind::DataShare => "data-share",
        CapabilityKind::Consult => "consult",
        CapabilityKind::Negotiation => "negotiation",
        CapabilityKind::Task => "task",
    }
}

/// The word for a node type, used in labels and CSS classes.
pub fn node_kind_label(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::System => "system",
        NodeKind::Agent => "agent",
        NodeKind::Datasource => "datasource",
        NodeKind::Hub => "hub",
    }
}
