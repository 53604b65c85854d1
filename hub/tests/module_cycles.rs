//! Arrows point down: in every crate of the workspace, the modules under
//! one parent import each other one way only.
//!
//! The check reads the source, not the compiler: every `crate::…` and
//! `super::…` path in a module's code (comments, doc links and `#[cfg(test)]`
//! items left out) is an arrow from that module to the deepest module the
//! path names. An arrow between two modules counts at the floor where their
//! paths part: `crate::gateway::forward` using `crate::health::StatusBoard` is
//! an arrow `gateway → health` among the crate's top rooms, and
//! `gateway::forward` using `gateway::answer` is `forward → answer` among
//! the gateway's rooms. A module and its own parent are one room (the
//! parent is the map of its children), so their arrows are not counted.
//! On each floor the arrows must form no cycle; a failure names every
//! cycle with one line of code per arrow.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module by its path below the crate root (`[]` is the root).
type ModPath = Vec<String>;

/// One arrow, with where it was written.
#[derive(Debug, Clone)]
struct Arrow {
    from: ModPath,
    to: ModPath,
    at: String,
}

/// The module of each source file under `src` (binaries, test files and
/// `*_tests.rs` left out), with its path.
fn modules(src: &Path) -> BTreeMap<ModPath, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().and_then(|e| e.to_str()) != Some("rs") {
                continue;
            }
            let rel = path.strip_prefix(src).unwrap_or(&path).with_extension("");
            let mut segs: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            let last = segs.last().cloned().unwrap_or_default();
            if segs.first().is_some_and(|s| s == "bin") || last == "main" {
                continue;
            }
            if last == "tests" || last.ends_with("_tests") {
                continue;
            }
            if last == "mod" || last == "lib" {
                segs.pop();
            }
            out.insert(segs, path);
        }
    }
    out
}

/// The code of a file without comments, string contents and the items
/// under `#[cfg(test)]`.
fn code_of(text: &str) -> String {
    // Comments and string literals out (a path in a doc link or a message
    // is no arrow); lines kept, for the report.
    let bytes: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let next = bytes.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < bytes.len() && bytes[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '/' && next == Some('*') {
            i += 2;
            while i + 1 < bytes.len() && !(bytes[i] == '*' && bytes[i + 1] == '/') {
                if bytes[i] == '\n' {
                    out.push('\n');
                }
                i += 1;
            }
            i += 2;
            continue;
        }
        if c == '"' {
            // A raw string's hashes are ignored: no path here is written
            // inside one that would end early.
            out.push('"');
            i += 1;
            while i < bytes.len() && bytes[i] != '"' {
                if bytes[i] == '\\' {
                    i += 1;
                } else if bytes[i] == '\n' {
                    out.push('\n');
                }
                i += 1;
            }
            out.push('"');
            i += 1;
            continue;
        }
        if c == '\'' {
            // A char literal ('x', '\n', '{'), not a lifetime ('a).
            let close = if next == Some('\\') { 3 } else { 2 };
            if bytes.get(i + close) == Some(&'\'') {
                out.push_str("' '");
                i += close + 1;
                continue;
            }
            if next == Some('\\') && bytes.get(i + 2) == Some(&'u') {
                while i < bytes.len() && bytes[i] != '}' {
                    i += 1;
                }
                i += 2;
                out.push_str("' '");
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    drop_test_items(&out)
}

/// `#[cfg(test)]` and the item it guards (a `mod x;` line or a braced
/// item) replaced by blank lines.
fn drop_test_items(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        let semi = after.find(';');
        let brace = after.find('{');
        let end = match (semi, brace) {
            (Some(s), Some(b)) if s < b => s + 1,
            (Some(s), None) => s + 1,
            (_, Some(b)) => {
                let mut depth = 0usize;
                let mut end = after.len();
                for (i, ch) in after[b..].char_indices() {
                    match ch {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = b + i + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            (None, None) => after.len(),
        };
        out.extend(after[..end].chars().filter(|c| *c == '\n'));
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The paths of a use tree starting at `text` (after `crate::` or
/// `super::`): `a::b`, `{a::b, c}`, `a::{b, c::d}`.
fn use_tree(text: &str) -> Vec<Vec<String>> {
    fn tree(chars: &[char], i: &mut usize) -> Vec<Vec<String>> {
        let mut prefix = Vec::new();
        loop {
            while *i < chars.len() && chars[*i].is_whitespace() {
                *i += 1;
            }
            if chars.get(*i) == Some(&'{') {
                *i += 1;
                let mut all = Vec::new();
                loop {
                    for mut p in tree(chars, i) {
                        let mut full = prefix.clone();
                        full.append(&mut p);
                        all.push(full);
                    }
                    while *i < chars.len() && chars[*i].is_whitespace() {
                        *i += 1;
                    }
                    match chars.get(*i) {
                        Some(',') => *i += 1,
                        Some('}') => {
                            *i += 1;
                            return all;
                        }
                        _ => return all,
                    }
                    while *i < chars.len() && chars[*i].is_whitespace() {
                        *i += 1;
                    }
                    if chars.get(*i) == Some(&'}') {
                        *i += 1;
                        return all;
                    }
                }
            }
            let start = *i;
            while *i < chars.len() && is_ident(chars[*i]) {
                *i += 1;
            }
            if start == *i {
                return vec![prefix];
            }
            prefix.push(chars[start..*i].iter().collect());
            if chars.get(*i) == Some(&':') && chars.get(*i + 1) == Some(&':') {
                *i += 2;
            } else {
                return vec![prefix];
            }
        }
    }
    let chars: Vec<char> = text.chars().take(4000).collect();
    let mut i = 0;
    tree(&chars, &mut i)
}

/// Every arrow written in the module `at` (its code in `code`), resolved
/// against the crate's modules.
fn arrows_of(at: &ModPath, code: &str, mods: &BTreeSet<ModPath>, file: &str) -> Vec<Arrow> {
    let mut out = Vec::new();
    for (n, line_start) in line_starts(code).into_iter().enumerate() {
        let line_end = code[line_start..]
            .find('\n')
            .map_or(code.len(), |e| line_start + e);
        let line = &code[line_start..line_end];
        let mut from = 0;
        while let Some(found) = next_path(line, from) {
            let (kind, rest_at) = found;
            from = rest_at;
            // `super` is the parent of the module the file is (`a` in
            // `a/b.rs`, the crate root in `a/mod.rs`).
            let base: ModPath = match kind {
                Kind::Crate => Vec::new(),
                Kind::Super(levels) => at[..at.len().saturating_sub(levels)].to_vec(),
            };
            // The rest of the path may run over lines (a use tree).
            for tail in use_tree(&code[line_start + rest_at..]) {
                let mut full = base.clone();
                full.extend(tail);
                let target = deepest_module(&full, mods);
                if &target == at {
                    continue;
                }
                out.push(Arrow {
                    from: at.clone(),
                    to: target,
                    at: format!("{file}:{}: {}", n + 1, line.trim()),
                });
            }
        }
    }
    out
}

enum Kind {
    Crate,
    /// How many `super::` in a row.
    Super(usize),
}

/// The next `crate::` or `super::` path in `line` from byte `from`: where
/// which, and where the path after it begins.
fn next_path(line: &str, from: usize) -> Option<(Kind, usize)> {
    let mut i = from;
    while i < line.len() {
        let rest = &line[i..];
        let boundary = i == 0
            || !line[..i]
                .chars()
                .next_back()
                .is_some_and(|c| is_ident(c) || c == ':');
        if boundary && rest.starts_with("crate::") {
            return Some((Kind::Crate, i + "crate::".len()));
        }
        if boundary && rest.starts_with("super::") {
            let mut levels = 0;
            let mut j = i;
            while line[j..].starts_with("super::") {
                levels += 1;
                j += "super::".len();
            }
            return Some((Kind::Super(levels), j));
        }
        i += rest.chars().next().map_or(1, char::len_utf8);
    }
    None
}

fn line_starts(code: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(code.match_indices('\n').map(|(i, _)| i + 1))
        .filter(|i| *i <= code.len())
        .collect()
}

/// The longest prefix of `path` that is a module (the root if none).
fn deepest_module(path: &[String], mods: &BTreeSet<ModPath>) -> ModPath {
    (0..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|p| mods.contains(p))
        .unwrap_or_default()
}

/// The cycles among the rooms of each parent, each with the arrows that
/// make it.
fn cycles(src: &Path) -> Vec<String> {
    let files = modules(src);
    let names: BTreeSet<ModPath> = files.keys().cloned().collect();
    let mut floors: BTreeMap<ModPath, BTreeMap<(String, String), Vec<String>>> = BTreeMap::new();
    for (module, path) in &files {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let code = code_of(&text);
        let file = path.strip_prefix(src).unwrap_or(path).display().to_string();
        for arrow in arrows_of(module, &code, &names, &file) {
            let common = arrow
                .from
                .iter()
                .zip(&arrow.to)
                .take_while(|(a, b)| a == b)
                .count();
            if common == arrow.from.len() || common == arrow.to.len() {
                continue; // a module and its ancestor
            }
            let parent = arrow.from[..common].to_vec();
            floors
                .entry(parent)
                .or_default()
                .entry((arrow.from[common].clone(), arrow.to[common].clone()))
                .or_default()
                .push(arrow.at.clone());
        }
    }
    let mut found = Vec::new();
    for (parent, edges) in &floors {
        for comp in strongly_connected(edges) {
            let room = if parent.is_empty() {
                "crate".to_string()
            } else {
                format!("crate::{}", parent.join("::"))
            };
            let mut report = format!("{}: in {room}: {}", src.display(), comp.join(" <-> "));
            for ((a, b), at) in edges {
                if comp.contains(a) && comp.contains(b) {
                    report.push_str(&format!("\n    {a} -> {b}  ({})", at[0]));
                }
            }
            found.push(report);
        }
    }
    found
}

/// The strongly connected components of more than one node (Tarjan).
fn strongly_connected(edges: &BTreeMap<(String, String), Vec<String>>) -> Vec<Vec<String>> {
    let mut graph: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges.keys() {
        graph.entry(a).or_default().push(b);
        graph.entry(b).or_default();
    }
    struct State<'a> {
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(v: &'a str, g: &BTreeMap<&'a str, Vec<&'a str>>, s: &mut State<'a>) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on.insert(v);
        for &w in &g[v] {
            if !s.index.contains_key(w) {
                visit(w, g, s);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = State {
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    let nodes: Vec<&str> = graph.keys().copied().collect();
    for v in nodes {
        if !s.index.contains_key(v) {
            visit(v, &graph, &mut s);
        }
    }
    s.out
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every crate of the workspace, with the fewest modules the check must
/// read in it: a crate moved or a source directory renamed reads as no
/// modules at all, and would pass the check silently without this floor.
const CRATES: [(&str, usize); 5] = [
    ("hub/src", 130),
    ("peer/src", 35),
    ("exchange/src", 28),
    ("app/src", 70),
    ("fuzz/src", 12),
];

#[test]
fn no_module_imports_its_way_back_in_any_crate() {
    let root = workspace();
    let mut found = Vec::new();
    for (src, floor) in CRATES {
        let read = modules(&root.join(src)).len();
        assert!(
            read >= floor,
            "{src}: the check read {read} modules, fewer than the {floor} this crate has: \
             did it move? (CRATES in this file names where each crate's sources are)"
        );
        found.extend(cycles(&root.join(src)));
    }
    assert!(
        found.is_empty(),
        "module cycles (arrows must point one way on every floor):\n{}",
        found.join("\n")
    );
}

/// The reader finds what it must: a cycle written on purpose is reported,
/// a parent and its child are not one, and comments, strings and test
/// items are not code.
#[test]
fn the_reader_sees_the_arrows_that_are_there() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path();
    let write = |rel: &str, text: &str| {
        let path = src.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    write("lib.rs", "pub mod a;\npub mod b;\npub mod c;\n");
    write("a/mod.rs", "mod x;\nmod y;\nuse crate::b::Thing;\n");
    write(
        "a/x.rs",
        "use super::y::Y;\nuse super::Map; // the parent\n",
    );
    write(
        "a/y.rs",
        "use super::{x::X, Map};\n/// [`Z`]: crate::c::Z\nconst S: &str = \"crate::c\";\n",
    );
    write(
        "b.rs",
        "pub use crate::{c::{self, Z}};\n#[cfg(test)]\nmod tests { use crate::a::Thing; }\n",
    );
    write("c.rs", "use crate::a::x::X;\n");
    let found = cycles(src);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(
        found.iter().any(|c| c.contains("in crate::a: x <-> y")),
        "{found:#?}"
    );
    assert!(
        found.iter().any(|c| c.contains("in crate: a <-> b <-> c")),
        "{found:#?}"
    );
    // Without the arrow c -> a the top floor is clean; comments, strings
    // and test items never made one.
    write("c.rs", "pub struct Z;\n");
    let found = cycles(src);
    assert_eq!(found.len(), 1, "{found:#?}");
}
