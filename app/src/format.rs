//! Numbers as people read them, one rule for every page and the hub.
//!
//! The canvas's query answers, the inbox's budget plans and (through the
//! hub's redaction) the bucket labels of redacted answers all show numbers
//! through [`format_number`], so the same value reads the same everywhere.

/// A number as people read it: thousands grouped with `,`; whole numbers
/// without decimals; anything else rounded to at most two decimals, with
/// trailing zeros dropped (`0.5`, not `0.50`). A value that rounds to zero
/// reads `0`, never `-0`. Not a number or infinite: an empty string.
///
/// Whole numbers of any size are written out in full (`1e15` reads
/// `1,000,000,000,000,000`): an `f64` that large is always whole, and its
/// digits are what Rust prints for it.
pub fn format_number(v: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    let text = if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        let fixed = format!("{v:.2}");
        fixed
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    };
    let (negative, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text.as_str()),
    };
    let (int, frac) = rest
        .split_once('.')
        .map_or((rest, None), |(i, f)| (i, Some(f)));
    let mut out = String::with_capacity(text.len() + int.len() / 3 + 1);
    // `-0` (a tiny negative number rounded, or `-0.0` itself) reads `0`.
    if negative && (int != "0" || frac.is_some()) {
        out.push('-');
    }
    for (i, ch) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if let Some(f) = frac {
        out.push('.');
        out.push_str(f);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        // From the canvas panels (where -1234.5 read "-1,234.50" before
        // the one rule dropped trailing zeros).
        assert_eq!(format_number(624.0), "624");
        assert_eq!(format_number(1234567.0), "1,234,567");
        assert_eq!(format_number(-1234.5), "-1,234.5");
        assert_eq!(format_number(0.126), "0.13");
        // From the hub's redaction.
        assert_eq!(format_number(-1234567.0), "-1,234,567");
        assert_eq!(format_number(0.5), "0.5");
    }

    #[test]
    fn at_most_two_decimals_without_trailing_zeros() {
        assert_eq!(format_number(1234.5678), "1,234.57");
        assert_eq!(format_number(0.0), "0");
        assert_eq!(format_number(999.999), "1,000");
        assert_eq!(format_number(-0.75), "-0.75");
        assert_eq!(format_number(100.10), "100.1");
    }

    #[test]
    fn no_negative_zero() {
        assert_eq!(format_number(-0.0), "0");
        assert_eq!(format_number(-0.001), "0");
    }

    #[test]
    fn large_whole_numbers_are_grouped_in_full() {
        assert_eq!(format_number(999_999_999_999_999.0), "999,999,999,999,999");
        assert_eq!(format_number(1e15), "1,000,000,000,000,000");
        assert_eq!(format_number(-1e15), "-1,000,000,000,000,000");
        assert_eq!(format_number(1e21), "1,000,000,000,000,000,000,000");
        assert_eq!(format_number(1e15 + 0.5), "1,000,000,000,000,000.5");
    }

    #[test]
    fn not_a_number_is_blank() {
        assert_eq!(format_number(f64::NAN), "");
        assert_eq!(format_number(f64::INFINITY), "");
        assert_eq!(format_number(f64::NEG_INFINITY), "");
    }
}
