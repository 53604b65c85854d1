//! The health of one system, as the board keeps it and every reader sees
//! it: healthy, degraded (since when, why) or not probed yet.

use app::dto::NodeStatus;
use chrono::{DateTime, Utc};
use exchange::reason::{NotConnected, ReasonCode};

/// Health of one system.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PeerStatus {
    /// Answers its health check, its card and its last call.
    Healthy,
    /// Failing, since when and why.
    Degraded {
        /// The reason code.
        reason: ReasonCode,
        /// Operator detail (no tokens, no URLs).
        detail: String,
        /// When it became degraded for this reason.
        since: DateTime<Utc>,
    },
    /// Not probed yet.
    Unknown,
}

impl PeerStatus {
    /// The canvas' three-valued status.
    pub fn node_status(&self) -> NodeStatus {
        match self {
            PeerStatus::Healthy => NodeStatus::Healthy,
            PeerStatus::Degraded { .. } => NodeStatus::Degraded,
            PeerStatus::Unknown => NodeStatus::Unknown,
        }
    }

    /// The reason, when degraded.
    pub fn reason(&self) -> Option<ReasonCode> {
        match self {
            PeerStatus::Degraded { reason, .. } => Some(*reason),
            _ => None,
        }
    }

    /// The detail, when degraded.
    pub fn detail(&self) -> Option<&str> {
        match self {
            PeerStatus::Degraded { detail, .. } => Some(detail),
            _ => None,
        }
    }

    /// Same kind and reason: what counts as "no change" for events.
    pub(super) fn same_state(&self, other: &PeerStatus) -> bool {
        self.node_status() == other.node_status() && self.reason() == other.reason()
    }

    pub(super) fn degraded(nc: NotConnected, previous: &PeerStatus) -> PeerStatus {
        let since = match previous {
            PeerStatus::Degraded { reason, since, .. } if *reason == nc.reason => *since,
            _ => Utc::now(),
        };
        PeerStatus::Degraded {
            reason: nc.reason,
            detail: nc.detail,
            since,
        }
    }
}
