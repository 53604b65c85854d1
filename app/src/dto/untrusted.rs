//! Free text from a peer, in whichever room shows some: data, never
//! instructions (the pages draw it inert, with `crate::untrusted`).

use serde::{Deserialize, Serialize};

/// Free text from a peer: data, never instructions. The canvas shows it
/// inert, marked "from <peer>, unverified".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UntrustedText {
    pub text: String,
    /// The system id it came from.
    pub from: String,
}
