//! An edge's id, written once ([`edge_id`]), and what the canvas sends
//! when it makes an edge (`POST /api/edges`) or leaves nodes where the
//! operator put them (`PUT /api/positions`). Read by the hub's
//! `web::bff::edges`.

use serde::{Deserialize, Serialize};

/// The id of the edge `consumer → provider` for `capability`:
/// `{consumer}->{provider}:{capability}`, e.g.
/// `buyercorp->vendorcorp:orders.query`.
///
/// Written here only, for both sides: the hub gives an established edge
/// this id and keeps it, traffic names an observed edge by it, a
/// suggestion names the edge it would make by it, and the canvas finds
/// each of them by it. It names nothing but the edge's three ends, so it
/// is stable across reloads and restarts. It holds `->` and `:`, so a path
/// carries it percent-encoded as one segment
/// ([`encode_segment`](crate::routes::encode_segment); the routes test
/// `edge_ids_stay_one_segment` pins that down).
pub fn edge_id(consumer: &str, provider: &str, capability: &str) -> String {
    format!("{consumer}->{provider}:{capability}")
}

/// A node's position on the canvas, in canvas coordinates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodePosition {
    /// Node id.
    pub node: String,
    pub x: f64,
    pub y: f64,
}

/// `PUT /api/positions`: positions to persist (merged with stored ones).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavePositionsRequest {
    pub positions: Vec<NodePosition>,
}

/// `POST /api/edges`: establish `consumer → provider` for `capability`.
/// The server re-checks the connection rule; the browser is never trusted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreateEdgeRequest {
    pub consumer: String,
    pub provider: String,
    pub capability: String,
}
