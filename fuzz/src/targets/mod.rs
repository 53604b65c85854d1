//! The targets, one module each (the table in the crate doc says what
//! each fuzzes). Each module exports one [`Target`] named after it.

use crate::Target;

pub mod access;
pub mod agents_config;
pub mod bridge;
pub mod contract_path;
pub mod egress_address;
pub mod envelope;
pub mod forwarded;
pub mod jsonrpc;
pub mod mcp_args;
pub mod topology;

/// Every target, in the order the table prints them.
pub static ALL: &[&Target] = &[
    &envelope::TARGET,
    &jsonrpc::TARGET,
    &bridge::TARGET,
    &topology::TARGET,
    &agents_config::TARGET,
    &contract_path::TARGET,
    &mcp_args::TARGET,
    &forwarded::TARGET,
    &access::TARGET,
    &egress_address::TARGET,
];

/// `input` as text, or the class of input that is not UTF-8 (a caller's
/// bytes reach these parsers as `&str` only after that check).
pub fn text(input: &[u8]) -> Result<&str, crate::Class> {
    std::str::from_utf8(input).map_err(|_| "not utf-8".to_string())
}
