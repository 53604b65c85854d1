//! Data contracts at the data owner (DESIGN.md §2, "capability"): what a
//! provider has agreed to let one consumer read,
//! how it decides what to grant, and the one function that decides every
//! read against the current contract.
//!
//! - [`policy`]: the provider's rules, in code, applied *after* whatever
//!   produced its reply (a rule now, a model later): personal columns are
//!   removed (the reply becomes a `counter`), retention is capped, an
//!   `accept` may only confirm the provider's own last offer, and the grant
//!   is deterministic.
//! - [`decide`]: the one decision of a read: `UNKNOWN_COLUMN`,
//!   `NO_CONTRACT`, `CONTRACT_EXPIRED`, `SCOPE_DENIED`, in that order, each
//!   in the provider's own words, each before a row is read.
//! - [`read`]: the gate both doors (A2A data-share, MCP data plane) call
//!   before a row is read: the decision, then the query within the grant.
//! - [`negotiate`]: the provider's side of a negotiation: validate, apply
//!   the policy, remember the offer, grant.
//! - [`draft`]: the provider's draft from a model tier, when the peer file
//!   configures one (the policy applies after it all the same).
//! - [`store`]: the provider's last offer per negotiation (A2A `contextId`)
//!   and the contracts it granted, in its own SQLite file.
//!
//! The negotiation message itself, and its validator, are what both sides
//! speak: [`exchange::negotiation`].

pub mod decide;
pub mod draft;
pub mod negotiate;
pub mod policy;
pub mod read;
pub mod store;

use chrono::{DateTime, Utc};
use exchange::negotiation::Scope;
use serde::{Deserialize, Serialize};

/// A granted data contract: who may read which columns of which
/// capability, for what, until when, agreed in which negotiation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Contract {
    /// `c-` and twelve hex digits, derived from what was agreed.
    pub id: String,
    /// The capability whose data it covers (`orders.query`).
    pub capability: String,
    /// The providing system (this peer).
    pub provider: String,
    /// The consuming system.
    pub consumer: String,
    /// The agreed scope (columns, purpose, retention).
    pub scope: Scope,
    /// The negotiation it came from (the A2A `contextId`).
    pub context_id: String,
    /// When it was granted.
    pub granted_at: DateTime<Utc>,
    /// When it stops covering reads.
    pub expires_at: DateTime<Utc>,
}
