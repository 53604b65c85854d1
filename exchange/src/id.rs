//! The one id rule (DESIGN.md §2): systems, capabilities, agents,
//! datasources and peers are named by ids that travel in headers, URLs,
//! node ids and audit trails, so they keep to one safe alphabet wherever
//! they are written — the hub's topology file and a peer's own config
//! accept exactly the same ids.

/// Longest id.
pub const MAX_ID_LEN: usize = 64;

/// What an id may be, said once for every error message.
pub const ID_RULE: &str = "1-64 characters of a-z, 0-9, `-`, `_`, `.`";

/// Whether `id` is a valid id: 1 to [`MAX_ID_LEN`] characters of `a-z`,
/// `0-9`, `-`, `_` and `.` (capabilities are dotted: `orders.query`).
pub fn is_valid(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_ID_LEN
        && id.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'_' | b'.')
        })
}

/// The message for an invalid id: `"<what> must be 1-64 characters of ..."`.
pub fn rule_for(what: &str) -> String {
    format!("{what} must be {ID_RULE}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_alphabet_for_every_id() {
        for ok in ["vendorcorp", "orders.query", "data-steward", "a_b", "x1"] {
            assert!(is_valid(ok), "{ok}");
        }
        for bad in ["", "Vendor", "a b", "a/b", "é", &"x".repeat(65)] {
            assert!(!is_valid(bad), "{bad:?}");
        }
        assert_eq!(
            rule_for("system id"),
            "system id must be 1-64 characters of a-z, 0-9, `-`, `_`, `.`"
        );
    }
}
