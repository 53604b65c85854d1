//! How a system says who it is (DESIGN.md §2, "peer"; §4, "Degradation").
//!
//! Every reference peer answers `GET /health` with its identity: the name
//! of the build ([`PEER_SERVICE`]) and its system id. The hub's prober
//! checks both, so a port answered by another program — or by another
//! peer — is detected instead of trusted. Peer and prober read the same
//! constants, so neither can drift from the other.

/// The identity a reference peer's `/health` reports as `service`.
pub const PEER_SERVICE: &str = "wall-street-peer";
/// Path of the health endpoint, relative to a base URL.
pub const HEALTH_PATH: &str = "/health";
/// Path of the agent card, relative to a base URL (A2A's well-known path).
pub const CARD_PATH: &str = "/.well-known/agent-card.json";
