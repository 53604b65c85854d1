//! How many capability chips a root's card shows in one row.
//!
//! A card is [`ROOT_W`] wide and [`ROOT_H`](super::ROOT_H) tall whatever
//! it holds: the layout, the edge routes and the culling boxes all count on
//! it, and two rows of chips already fill its height, so a row never
//! wraps. Instead each row (provided, consumed) shows the longest prefix
//! of its capabilities whose chips fit whole, and when some are left over,
//! a last chip `+N` counting them (the card's button for the full list).
//! No chip is ever cut.
//!
//! The fit is computed here, from the characters of each id, not measured
//! in the browser: the server and the browser draw the same chips (nothing
//! changes at hydration), and a large graph costs no layout reads. Chip
//! text is monospace, so a chip's width is its length times one advance;
//! [`CAP_CHAR_W`] is an upper bound of that advance over the usual
//! monospace fonts, so an estimate errs towards one chip fewer, never a
//! cut chip.
//!
//! The sizes below are the stylesheet's (`style/main.css`, `.node-card`,
//! `.cap-row`, `.cap-dir`, `.cap`), in world pixels: the two are kept in
//! step.

use super::layout::ROOT_W;

/// The root font size the stylesheet's `rem` resolve to (the browser's
/// default; the stylesheet never changes it).
pub const REM: f64 = 16.0;
/// Upper bound of one monospace character's advance, in em: most
/// monospace fonts (DejaVu Sans Mono, Menlo, SF Mono, Liberation Mono,
/// Noto Sans Mono) advance 0.600 to 0.602 em. Chips and edge labels
/// (`placement`) both measure their text with it.
pub const MONO_ADVANCE: f64 = 0.61;
/// A card's horizontal padding (`.node-card`, `.7rem`) plus its border
/// (1.5 px), on each side.
pub const CARD_INSET_X: f64 = 0.7 * REM + 1.5;
/// Width of a row's direction word, "provides" or "consumes"
/// (`.cap-dir`, `3.9rem`).
pub const CAP_DIR_W: f64 = 3.9 * REM;
/// Gap between the items of a row (`.cap-row`, `.25rem`).
pub const CAP_GAP: f64 = 0.25 * REM;
/// A chip's font size (`.cap`, `.7rem`).
pub const CAP_FONT: f64 = 0.7 * REM;
/// Upper bound of one monospace character's advance at [`CAP_FONT`].
pub const CAP_CHAR_W: f64 = MONO_ADVANCE * CAP_FONT;
/// A chip's width besides its text: padding (`.35rem` a side) and a 1 px
/// border a side.
pub const CAP_CHROME: f64 = 2.0 * 0.35 * REM + 2.0;
/// The room chips have in a row: the card's inner width less the
/// direction word and the gap after it.
pub const CAP_ROOM: f64 = ROOT_W - 2.0 * CARD_INSET_X - CAP_DIR_W - CAP_GAP;

/// How a row's capabilities are shown: the first `shown` as chips, the
/// `hidden` others counted by a `+N` chip (none when `hidden` is 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChipFit {
    /// How many chips are drawn, from the start of the list.
    pub shown: usize,
    /// How many capabilities only the `+N` chip counts.
    pub hidden: usize,
}

/// How many monospace cells `text` takes: one per ASCII character, two
/// for any other (it may come from a wider fallback font).
pub fn text_cells(text: &str) -> usize {
    text.chars().map(char_cells).sum()
}

fn char_cells(c: char) -> usize {
    if c.is_ascii() {
        1
    } else {
        2
    }
}

/// What marks a cut text's end.
pub const ELLIPSIS: char = '…';

/// `text` cut to at most `cells` cells ([`text_cells`]): its longest
/// prefix followed by [`ELLIPSIS`], the ellipsis counted in. `None` when
/// the whole text fits (nothing to cut) or not even one character does.
pub fn cut_to_cells(text: &str, cells: usize) -> Option<String> {
    if text_cells(text) <= cells {
        return None;
    }
    let room = cells.checked_sub(char_cells(ELLIPSIS))?;
    let mut used = 0;
    let mut end = 0;
    for (i, c) in text.char_indices() {
        used += char_cells(c);
        if used > room {
            break;
        }
        end = i + c.len_utf8();
    }
    if end == 0 {
        return None;
    }
    let mut out = String::with_capacity(end + ELLIPSIS.len_utf8());
    out.push_str(&text[..end]);
    out.push(ELLIPSIS);
    Some(out)
}

/// The drawn width of a chip reading `text`.
pub fn chip_width(text: &str) -> f64 {
    text_cells(text) as f64 * CAP_CHAR_W + CAP_CHROME
}

/// The text of the chip counting `hidden` capabilities.
pub fn more_label(hidden: usize) -> String {
    format!("+{hidden}")
}

/// The width of the chip counting `hidden` capabilities.
fn more_width(hidden: usize) -> f64 {
    chip_width(&more_label(hidden))
}

/// Which of `ids` (one row, in order) are drawn as chips: all of them when
/// they fit in [`CAP_ROOM`]; otherwise the longest prefix that fits
/// together with the `+N` chip counting the rest (possibly none, when
/// even the first chip is too long to share the row with it).
pub fn fit_chips<'a>(ids: impl IntoIterator<Item = &'a str>) -> ChipFit {
    let widths: Vec<f64> = ids.into_iter().map(chip_width).collect();
    let n = widths.len();
    // ends[k]: the width the first k chips take, each with the gap after it.
    let mut ends = Vec::with_capacity(n + 1);
    ends.push(0.0);
    for w in &widths {
        let last = ends.last().copied().unwrap_or(0.0);
        ends.push(last + w + CAP_GAP);
    }
    let all = ends.last().copied().unwrap_or(0.0) - if n > 0 { CAP_GAP } else { 0.0 };
    if all <= CAP_ROOM {
        return ChipFit {
            shown: n,
            hidden: 0,
        };
    }
    let shown = (0..n)
        .rev()
        .find(|&k| ends[k] + more_width(n - k) <= CAP_ROOM)
        .unwrap_or(0);
    ChipFit {
        shown,
        hidden: n - shown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fit(ids: &[&str]) -> ChipFit {
        fit_chips(ids.iter().copied())
    }

    /// The width the drawn chips of `ids` take, `+N` included.
    fn used(ids: &[&str], f: ChipFit) -> f64 {
        let mut w: f64 = ids[..f.shown]
            .iter()
            .map(|id| chip_width(id) + CAP_GAP)
            .sum();
        if f.hidden > 0 {
            w += more_width(f.hidden);
        } else {
            w -= CAP_GAP;
        }
        w
    }

    #[test]
    fn the_room_is_the_cards_inner_width_less_the_direction_word() {
        assert!((CAP_ROOM - 148.2).abs() < 1e-9, "{CAP_ROOM}");
    }

    #[test]
    fn nothing_or_what_fits_is_drawn_whole() {
        assert_eq!(
            fit(&[]),
            ChipFit {
                shown: 0,
                hidden: 0
            }
        );
        assert_eq!(
            fit(&["budget.consult"]),
            ChipFit {
                shown: 1,
                hidden: 0
            }
        );
        assert_eq!(
            fit(&["a.b", "c.d", "e.f"]),
            ChipFit {
                shown: 3,
                hidden: 0
            }
        );
    }

    #[test]
    fn the_demo_rows_keep_their_first_chip_and_count_the_rest() {
        // BuyerCorp consumes four, Helpdesk and VendorCorp provide two.
        let buyer = [
            "orders.query",
            "orders.negotiate",
            "ticket.classify",
            "ticket.triage",
        ];
        assert_eq!(
            fit(&buyer),
            ChipFit {
                shown: 1,
                hidden: 3
            }
        );
        let helpdesk = ["ticket.classify", "ticket.triage"];
        assert_eq!(
            fit(&helpdesk),
            ChipFit {
                shown: 1,
                hidden: 1
            }
        );
        let vendor = ["orders.query", "orders.negotiate"];
        assert_eq!(
            fit(&vendor),
            ChipFit {
                shown: 1,
                hidden: 1
            }
        );
    }

    #[test]
    fn a_row_never_overflows_its_room() {
        let rows: [&[&str]; 5] = [
            &["cap000.query"; 10],
            &["x"; 40],
            &["a.very.long.capability.identifier", "b"],
            &["b", "a.very.long.capability.identifier"],
            &["données.partagées", "é", "ü"],
        ];
        for row in rows {
            let f = fit(row);
            assert_eq!(f.shown + f.hidden, row.len(), "{row:?}");
            assert!(used(row, f) <= CAP_ROOM, "{row:?}: {f:?}");
            // One chip more would not have fitted.
            if f.hidden > 0 {
                let more = ChipFit {
                    shown: f.shown + 1,
                    hidden: f.hidden - 1,
                };
                assert!(used(row, more) > CAP_ROOM, "{row:?}: {f:?}");
            }
        }
    }

    #[test]
    fn a_chip_too_long_for_the_row_is_counted_not_cut() {
        let f = fit(&["a.capability.identifier.far.too.long.for.any.card"]);
        assert_eq!(
            f,
            ChipFit {
                shown: 0,
                hidden: 1
            }
        );
    }

    #[test]
    fn wide_characters_count_double() {
        assert!(chip_width("éé") > chip_width("ee"));
        assert_eq!(text_cells("aé"), 3);
        assert_eq!(more_label(12), "+12");
    }

    #[test]
    fn a_cut_keeps_a_prefix_and_its_ellipsis_within_the_cells() {
        assert_eq!(cut_to_cells("ticket.classify", 20), None, "fits whole");
        assert_eq!(
            cut_to_cells("ticket.classify", 8).as_deref(),
            Some("ticket…")
        );
        assert_eq!(
            cut_to_cells("ticket.classify", 2),
            None,
            "no room for a character"
        );
        assert_eq!(cut_to_cells("données", 6).as_deref(), Some("donn…"));
        assert_eq!(cut_to_cells("éééé", 6).as_deref(), Some("éé…"));
        for n in 3..15 {
            if let Some(cut) = cut_to_cells("ticket.classify", n) {
                assert!(text_cells(&cut) <= n, "{cut} in {n}");
                assert!("ticket.classify".starts_with(cut.trim_end_matches(ELLIPSIS)));
            }
        }
    }
}
