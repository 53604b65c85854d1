//! `GET /api/events`: the Server-Sent Events that keep an open canvas
//! current (health, topology reloads, the inbox, the agents, traffic).
//! Sent by the hub's `web::bff` and cut to a person's part by
//! `web::bff::part`.

use exchange::reason::ReasonCode;
use serde::{Deserialize, Serialize};

use super::topology::NodeStatus;
use super::traffic::{EdgeTrafficView, ObservedEdgeView};

/// One message of `GET /api/events` (Server-Sent Events, JSON data).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum HubEvent {
    /// A system's health changed.
    StatusChanged {
        /// The system id.
        system: String,
        /// Its new status.
        status: NodeStatus,
        /// Why, when degraded.
        reason: Option<ReasonCode>,
        /// Operator detail, when degraded.
        detail: Option<String>,
    },
    /// The topology file was reloaded: refetch `/api/topology`. Also sent
    /// when a slow listener missed events, as a signal to resynchronise.
    TopologyChanged,
    /// The hub's approval inbox changed (a proposal arrived or a decision
    /// was taken): how many entries wait now.
    InboxChanged {
        /// Pending entries in the hub's inbox.
        pending: u64,
    },
    /// The agent config was reloaded: refetch `/api/agents`.
    AgentsChanged,
    /// Calls crossed these edges since the last traffic event: their
    /// recent traffic now (at most one event per half second, only the
    /// edges that changed).
    Traffic {
        /// The changed edges' traffic.
        edges: Vec<EdgeTrafficView>,
        /// Which of `edges` are observed edges now, with their ends; an
        /// edge of `edges` not named here is not (any more) one.
        #[serde(default)]
        observed: Vec<ObservedEdgeView>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_tagged_by_type() {
        let ev = HubEvent::StatusChanged {
            system: "vendorcorp".into(),
            status: NodeStatus::Degraded,
            reason: Some(ReasonCode::Timeout),
            detail: Some("deadline".into()),
        };
        let v = serde_json::to_value(&ev).unwrap_or_default();
        assert_eq!(v["type"], "status_changed");
        assert_eq!(v["status"], "degraded");
        assert_eq!(v["reason"], "TIMEOUT");
        let v = serde_json::to_value(HubEvent::TopologyChanged).unwrap_or_default();
        assert_eq!(v["type"], "topology_changed");
    }
}
