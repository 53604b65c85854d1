//! CSS and SVG text for numbers (the canvas at 500 nodes;
//! DESIGN.md §6, the canvas): fixed decimals written with integer
//! formatting. Every node, label and edge route prints its coordinates
//! when the page renders and hydrates, and Rust's float formatting
//! (`{:.1}`) is slow in wasm (it was the largest formatting cost of a
//! hydration). Ties round away from zero, like `{:.1}`; the server and the
//! browser print with the same functions, so hydration finds the same text.

use std::fmt::Write;

use super::geometry::Point;

/// Appends `v` with `places` decimals (at most 6).
pub fn push_fixed(out: &mut String, v: f64, places: u32) {
    let places = places.min(6);
    let scale = 10_i64.pow(places) as f64;
    let t = (v * scale).round();
    if !t.is_finite() || t.abs() > 1e15 {
        let _ = write!(out, "{v:.*}", places as usize);
        return;
    }
    let t = t as i64;
    if t < 0 {
        out.push('-');
    }
    let a = t.unsigned_abs();
    let unit = 10_u64.pow(places);
    let _ = write!(out, "{}", a / unit);
    if places > 0 {
        let frac = a % unit;
        let _ = write!(out, ".{frac:0width$}", width = places as usize);
    }
}

/// `v` with one decimal.
pub fn tenths(v: f64) -> String {
    let mut s = String::with_capacity(8);
    push_fixed(&mut s, v, 1);
    s
}

/// `v` rounded to a whole number.
pub fn whole(v: f64) -> String {
    let mut s = String::with_capacity(6);
    push_fixed(&mut s, v, 0);
    s
}

/// `translate(Xpx, Ypx)` for `p`, then `rest` (another transform, or "").
pub fn translate(p: Point, rest: &str) -> String {
    let mut s = String::with_capacity(32 + rest.len());
    s.push_str("translate(");
    push_fixed(&mut s, p.x, 1);
    s.push_str("px, ");
    push_fixed(&mut s, p.y, 1);
    s.push_str("px)");
    s.push_str(rest);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_like_the_formatter() {
        for v in [
            0.0, 1.25, -0.04, -0.06, 12.35, -3.0, 1234.56, 0.95, 7.0, -12.5,
        ] {
            for places in [0, 1, 4] {
                let mut s = String::new();
                push_fixed(&mut s, v, places);
                let scale = 10_f64.powi(places as i32);
                let want = format!("{:.*}", places as usize, (v * scale).round() / scale);
                let want = if want.starts_with("-0")
                    && want.trim_start_matches(['-', '0', '.']).is_empty()
                {
                    want[1..].to_string()
                } else {
                    want
                };
                assert_eq!(s, want, "{v} at {places}");
            }
        }
        assert_eq!(
            translate(Point { x: 1.0, y: -2.25 }, " scale(2)"),
            "translate(1.0px, -2.3px) scale(2)"
        );
    }
}
