//! Who is alive: the health prober and the status board (DESIGN.md §4,
//! "Degradation").
//!
//! | room | what it decides |
//! |---|---|
//! | `status` | the health of one system ([`PeerStatus`]): healthy, degraded since when and why, or unknown |
//! | `board` | every system's current health ([`StatusBoard`]), combined from probes and calls; the cards the prober fetched ([`ProviderCard`]); what replicas share ([`HealthSnapshot`], [`ShareHealth`]) |
//! | `prober` | the probe loop ([`Prober`]): `/health` with the peer's identity, the card, the data plane |
//!
//! Every system of the current registry is probed on its own task every
//! `probe_interval_ms`: `GET /health` must answer within
//! `probe_timeout_ms` with the reference peer's identity
//! (`service == "wall-street-peer"`, `system == <id>`), so a port answered
//! by another program is caught; the agent card is checked less often.
//! Probes run concurrently and independently: a stalled peer only ever
//! delays its own probe.
//!
//! The [`StatusBoard`] combines two sources per system: the last probe and
//! the last gateway call. A system is degraded if its probe fails *or* its
//! last call failed on the provider's side; a successful call, or the probe
//! seeing the system recover, clears a call failure. Every change of the
//! combined status is published on the event bus.
//!
//! Replicas (`cluster`): only one of them probes (the leader), so the peers
//! see one prober whatever the replica count. The board tells a
//! [`ShareHealth`] what its own probes and calls changed; the other
//! replicas apply it with [`StatusBoard::apply_shared`] and
//! [`StatusBoard::apply_shared_call`], which share nothing further.

mod board;
mod prober;
mod status;

pub use board::{HealthSnapshot, ProviderCard, ShareHealth, StatusBoard};
pub use prober::Prober;
pub use status::PeerStatus;
