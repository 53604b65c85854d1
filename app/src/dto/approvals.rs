//! How many proposals wait for a human's decision in the hub's inbox (the
//! inbox page and the decisions themselves answer with the inbox room's
//! views). Built by the hub's `web::bff::approvals`.

use serde::{Deserialize, Serialize};

/// `GET /api/inbox/pending`: how many proposals wait in the hub's inbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct InboxPendingView {
    pub pending: u64,
}
