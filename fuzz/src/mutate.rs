//! Byte- and line-wise mutation of corpus seeds: the unstructured half of
//! the generated inputs. A proptest strategy draws a seed and a short list
//! of edits (flip a bit, insert, delete, duplicate or splice a range,
//! insert a dictionary token, drop/duplicate/swap a line); [`apply`] makes
//! the input. Positions are `Index`es, so one drawn edit fits any seed.

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::Index;

use crate::MAX_INPUT_BYTES;

/// One edit of a seed.
#[derive(Debug, Clone)]
pub enum Edit {
    /// Flip bit `bit` of the byte at `at`.
    Flip { at: Index, bit: u8 },
    /// Insert `bytes` at `at`.
    Insert { at: Index, bytes: Vec<u8> },
    /// Insert dictionary token `token` at `at`.
    Token { at: Index, token: Index },
    /// Delete up to `len` bytes from `at`.
    Delete { at: Index, len: usize },
    /// Copy up to `len` bytes from `from` to `to`.
    Duplicate { from: Index, len: usize, to: Index },
    /// Replace everything from `at` with the tail of another seed from
    /// `from`.
    Splice { at: Index, seed: Index, from: Index },
    /// Set the byte at `at` to an interesting value.
    Set { at: Index, byte: u8 },
    /// Drop line `line`.
    DropLine { line: Index },
    /// Repeat line `line` after itself.
    DuplicateLine { line: Index },
    /// Swap two lines.
    SwapLines { a: Index, b: Index },
}

/// What to do: which seed, then which edits in order.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The seed to start from.
    pub seed: Index,
    /// The edits, applied in order.
    pub edits: Vec<Edit>,
    /// The dictionary the tokens index.
    pub dictionary: &'static [&'static str],
}

const INTERESTING: &[u8] = &[
    0, 0x7f, 0xff, b'\n', b'\r', b'\t', b' ', b'"', b'\\', b'{', b'}', b'[', b']', b':', b',',
    b'-', b'.', b'0', b'9', b'#', b'&', b'*', b'!', b'|', b'>', b'\'', 0xc3, 0xe2,
];

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        3 => (any::<Index>(), 0u8..8).prop_map(|(at, bit)| Edit::Flip { at, bit }),
        2 => (any::<Index>(), vec(any::<u8>(), 1..8)).prop_map(|(at, bytes)| Edit::Insert { at, bytes }),
        4 => (any::<Index>(), any::<Index>()).prop_map(|(at, token)| Edit::Token { at, token }),
        3 => (any::<Index>(), 1usize..32).prop_map(|(at, len)| Edit::Delete { at, len }),
        2 => (any::<Index>(), 1usize..64, any::<Index>())
            .prop_map(|(from, len, to)| Edit::Duplicate { from, len, to }),
        1 => (any::<Index>(), any::<Index>(), any::<Index>())
            .prop_map(|(at, seed, from)| Edit::Splice { at, seed, from }),
        3 => (any::<Index>(), any::<Index>())
            .prop_map(|(at, byte)| Edit::Set { at, byte: *byte.get(INTERESTING) }),
        2 => any::<Index>().prop_map(|line| Edit::DropLine { line }),
        2 => any::<Index>().prop_map(|line| Edit::DuplicateLine { line }),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Edit::SwapLines { a, b }),
    ]
}

/// The strategy of mutation plans for a target with `dictionary`.
pub fn strategy(dictionary: &'static [&'static str]) -> BoxedStrategy<Plan> {
    (any::<Index>(), vec(edit(), 1..6))
        .prop_map(move |(seed, edits)| Plan {
            seed,
            edits,
            dictionary,
        })
        .boxed()
}

/// The input `plan` makes of `seeds` (never empty: the harness gives at
/// least one, possibly empty, seed).
pub fn apply(seeds: &[Vec<u8>], plan: &Plan) -> Vec<u8> {
    let Some(first) = seeds.first() else {
        return Vec::new();
    };
    let mut out = seeds
        .get(plan.seed.index(seeds.len()))
        .unwrap_or(first)
        .clone();
    for edit in &plan.edits {
        apply_edit(&mut out, edit, seeds, plan.dictionary);
        out.truncate(MAX_INPUT_BYTES);
    }
    out
}

/// A position in `0..=len`.
fn pos(at: &Index, len: usize) -> usize {
    at.index(len + 1)
}

fn apply_edit(out: &mut Vec<u8>, edit: &Edit, seeds: &[Vec<u8>], dictionary: &[&str]) {
    let len = out.len();
    match edit {
        Edit::Flip { at, bit } => {
            if len > 0 {
                out[at.index(len)] ^= 1 << bit;
            }
        }
        Edit::Set { at, byte } => {
            if len > 0 {
                out[at.index(len)] = *byte;
            }
        }
        Edit::Insert { at, bytes } => {
            let p = pos(at, len);
            out.splice(p..p, bytes.iter().copied());
        }
        Edit::Token { at, token } => {
            if !dictionary.is_empty() {
                let p = pos(at, len);
                let word = token.get(dictionary).as_bytes();
                out.splice(p..p, word.iter().copied());
            }
        }
        Edit::Delete { at, len: n } => {
            let p = pos(at, len);
            let end = (p + n).min(len);
            out.drain(p..end);
        }
        Edit::Duplicate { from, len: n, to } => {
            let start = pos(from, len);
            let end = (start + n).min(len);
            let piece = out[start..end].to_vec();
            let p = pos(to, len);
            out.splice(p..p, piece);
        }
        Edit::Splice { at, seed, from } => {
            if let Some(other) = seeds.get(seed.index(seeds.len())) {
                let p = pos(at, len);
                let q = pos(from, other.len());
                out.truncate(p);
                out.extend_from_slice(&other[q..]);
            }
        }
        Edit::DropLine { line } => edit_lines(out, |lines| {
            if !lines.is_empty() {
                let i = line.index(lines.len());
                lines.remove(i);
            }
        }),
        Edit::DuplicateLine { line } => edit_lines(out, |lines| {
            if !lines.is_empty() {
                let i = line.index(lines.len());
                let copy = lines[i].clone();
                lines.insert(i, copy);
            }
        }),
        Edit::SwapLines { a, b } => edit_lines(out, |lines| {
            if !lines.is_empty() {
                let (i, j) = (a.index(lines.len()), b.index(lines.len()));
                lines.swap(i, j);
            }
        }),
    }
}

/// Edits `out` as lines (each keeps its `\n`).
fn edit_lines(out: &mut Vec<u8>, edit: impl FnOnce(&mut Vec<Vec<u8>>)) {
    let mut lines: Vec<Vec<u8>> = out
        .split_inclusive(|b| *b == b'\n')
        .map(<[u8]>::to_vec)
        .collect();
    edit(&mut lines);
    *out = lines.concat();
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::test_runner::TestRunner;

    proptest! {
        #[test]
        fn any_plan_applies_to_any_seeds(
            seeds in vec(vec(any::<u8>(), 0..64), 1..4),
            plan in strategy(&["kind", "\n- "]),
        ) {
            let out = apply(&seeds, &plan);
            prop_assert!(out.len() <= MAX_INPUT_BYTES);
        }
    }

    #[test]
    fn plans_change_seeds() {
        let mut runner = TestRunner::deterministic();
        let seeds = vec![b"a: 1\nb: [x, y]\n".to_vec()];
        let strategy = strategy(&["null"]);
        let changed = (0..100)
            .filter(|_| {
                let plan = strategy.new_tree(&mut runner).expect("tree").current();
                apply(&seeds, &plan) != seeds[0]
            })
            .count();
        assert!(changed > 50, "{changed} of 100 changed");
    }
}
