//! Config-file problems, located (DESIGN.md §2, "topology file": errors
//! that name the file, the line and the field).
//!
//! An operator edits the hub's topology file and each peer's config by
//! hand, so both loaders report every problem as
//! `config/topology.yaml:14:5: systems[1].base_url: ...` and collect all of
//! them, not just the first. Parsing errors come from serde with their
//! position ([`parse_yaml`]); semantic checks name a field path ([`Seg`]s)
//! and [`Locator`] finds its line in the text by indentation.

use std::borrow::Cow;

/// One problem in a config file, located.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// The field path, e.g. `systems[1].base_url` (`.` for the whole file).
    pub field: String,
    /// What is wrong. Never echoes a base URL or token env var name.
    pub message: String,
}

/// Why a config file was not accepted: it could not be read, or it was
/// read and every problem in it is listed, located. The topology loader
/// and the peer's config loader both answer with it.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The file could not be read at all.
    #[error("{file}: cannot read the {what}: {source}")]
    Read {
        /// The path as given.
        file: String,
        /// What kind of file it is (`topology file`, `peer config`).
        what: &'static str,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file was read but is not valid: one line per problem,
    /// `file:line:column: field: message`, in file order.
    #[error("{}", render_issues(file, issues))]
    Invalid {
        /// The path as given.
        file: String,
        /// Every problem found, in file order.
        issues: Vec<Issue>,
    },
}

impl FileError {
    /// Reads the file at `path` as text, or says which file could not be
    /// read.
    pub fn read(path: &std::path::Path, what: &'static str) -> Result<String, Self> {
        std::fs::read_to_string(path).map_err(|source| FileError::Read {
            file: path.display().to_string(),
            what,
            source,
        })
    }

    /// The located problems (empty for a read error).
    pub fn issues(&self) -> &[Issue] {
        match self {
            FileError::Read { .. } => &[],
            FileError::Invalid { issues, .. } => issues,
        }
    }

    /// The same message with the file named by its file name alone: what
    /// a browser may be shown (a host's directory layout is not its
    /// business), while logs keep the full path.
    pub fn public_message(&self) -> String {
        let short = |file: &str, what: &str| {
            std::path::Path::new(file)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| what.to_string())
        };
        match self {
            FileError::Read { file, what, source } => {
                format!("{}: cannot read the {what}: {source}", short(file, what))
            }
            FileError::Invalid { file, issues } => render_issues(&short(file, "file"), issues),
        }
    }
}

/// One `file:line:column: field: message` line per issue, in order.
pub fn render_issues(file: &str, issues: &[Issue]) -> String {
    let lines: Vec<String> = issues
        .iter()
        .map(|i| format!("{file}:{}:{}: {}: {}", i.line, i.column, i.field, i.message))
        .collect();
    lines.join("\n")
}

/// Deserializes YAML `text` with the field path tracked, turning the first
/// serde error (a type, an unknown or a missing field, a syntax error) into
/// a located issue.
pub fn parse_yaml<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, Issue> {
    let de = serde_yaml_ng::Deserializer::from_str(text);
    serde_path_to_error::deserialize::<_, T>(de).map_err(|err| {
        let field = err.path().to_string();
        let inner = err.inner();
        let (line, column) = inner
            .location()
            .map(|l| (l.line(), l.column()))
            .unwrap_or((1, 1));
        Issue {
            line,
            column,
            message: clean_yaml_message(&inner.to_string(), &field),
            field,
        }
    })
}

/// serde_yaml_ng already prefixes its own path and appends "at line L
/// column C"; both are said once by our own format, so they are cut here.
fn clean_yaml_message(message: &str, field: &str) -> String {
    let mut msg = message;
    // serde_yaml_ng's path stops at the mapping for an unknown field
    // (`systems[1]` where ours says `systems[1].nmae`): cut any prefix of ours.
    if let Some((head, rest)) = msg.split_once(": ") {
        if !head.is_empty()
            && (field == head
                || field.starts_with(&format!("{head}."))
                || field.starts_with(&format!("{head}[")))
        {
            msg = rest;
        }
    }
    match msg.rfind(" at line ") {
        Some(pos) if msg[pos + 9..].contains(" column ") => msg[..pos].to_string(),
        _ => msg.to_string(),
    }
}

/// One step of a location in a config file: a mapping key or a sequence
/// index. Borrowed where the path is fixed (`systems`, `base_url`), owned
/// where it comes from the file itself (a contract's field path as a key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg<'a> {
    /// A mapping key.
    Key(Cow<'a, str>),
    /// A sequence index.
    Index(usize),
}

impl<'a> Seg<'a> {
    /// A mapping key.
    pub fn key(k: impl Into<Cow<'a, str>>) -> Self {
        Seg::Key(k.into())
    }
}

/// The dotted field path of `path`: `systems[1].base_url` (`.` for the root).
pub fn render_path(path: &[Seg]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    if out.is_empty() {
        out.push('.');
    }
    out
}

/// A key or a sequence dash found in the text, with its position.
#[derive(Debug)]
struct Entry {
    line: usize,
    col: usize,
    /// `Some(key)` for `key:`, `None` for a `- ` sequence item.
    key: Option<String>,
}

/// Finds the line of a field path in block-style YAML by indentation.
///
/// Not a YAML parser: it only needs to point an operator at the right line
/// of a file serde has already accepted. Where it cannot descend (a flow
/// list like `[a, b]`), it answers the deepest entry it found.
pub struct Locator {
    entries: Vec<Entry>,
}

impl Locator {
    /// Indexes the keys and sequence items of `text`.
    pub fn new(text: &str) -> Self {
        let mut entries = Vec::new();
        let mut block_scalar_indent: Option<usize> = None;
        for (n, raw) in text.lines().enumerate() {
            let indent = raw.len() - raw.trim_start_matches(' ').len();
            let rest = raw.trim();
            if rest.is_empty() || rest.starts_with('#') {
                continue;
            }
            if let Some(bi) = block_scalar_indent {
                if indent > bi {
                    continue;
                }
                block_scalar_indent = None;
            }
            if rest == "---" || rest == "..." {
                continue;
            }
            let mut col = indent;
            let mut s = &raw[indent..];
            // Any number of `- ` dashes, each an item at its own column.
            while s == "-" || s.starts_with("- ") {
                entries.push(Entry {
                    line: n + 1,
                    col,
                    key: None,
                });
                let after = s[1..].len() - s[1..].trim_start_matches(' ').len();
                col += 1 + after;
                s = s[1..].trim_start_matches(' ');
            }
            if let Some((key, value)) = split_key(s) {
                entries.push(Entry {
                    line: n + 1,
                    col,
                    key: Some(key),
                });
                let v = value.trim();
                if v.starts_with('|') || v.starts_with('>') {
                    block_scalar_indent = Some(col);
                }
            }
        }
        Self { entries }
    }

    /// The 1-based (line, column) of the deepest entry of `path` found.
    pub fn position(&self, path: &[Seg]) -> (usize, usize) {
        // The current node: entries in [start, end) are its descendants.
        let (mut start, mut end) = (0usize, self.entries.len());
        let mut best = (1usize, 1usize);
        for seg in path {
            let Some(min_col) = self.entries[start..end].iter().map(|e| e.col).min() else {
                break;
            };
            let found = match seg {
                Seg::Key(k) => (start..end).find(|&j| {
                    let e = &self.entries[j];
                    e.col == min_col && e.key.as_deref() == Some(k.as_ref())
                }),
                Seg::Index(i) => (start..end)
                    .filter(|&j| self.entries[j].col == min_col && self.entries[j].key.is_none())
                    .nth(*i),
            };
            let Some(j) = found else { break };
            let e = &self.entries[j];
            best = (e.line, e.col + 1);
            // Descendants: following entries deeper than this one. A key's
            // compact sequence (`key:` then `- item` at the same column)
            // belongs to it too.
            let is_key = e.key.is_some();
            let mut k = j + 1;
            while k < end {
                let next = &self.entries[k];
                let inside =
                    next.col > e.col || (is_key && next.col == e.col && next.key.is_none());
                if !inside {
                    break;
                }
                k += 1;
            }
            start = j + 1;
            end = k;
        }
        best
    }

    /// An issue at `path`, located in the text.
    pub fn issue(&self, path: &[Seg], message: String) -> Issue {
        let (line, column) = self.position(path);
        Issue {
            line,
            column,
            field: render_path(path),
            message,
        }
    }
}

/// Splits `key: value` / `key:` (plain or quoted key) off a line.
fn split_key(s: &str) -> Option<(String, &str)> {
    if s.starts_with('{') || s.starts_with('[') {
        return None;
    }
    let (key, rest) = if let Some(q) = s.chars().next().filter(|c| *c == '"' || *c == '\'') {
        let close = s[1..].find(q)? + 1;
        (s[1..close].to_string(), &s[close + 1..])
    } else {
        let mut pos = None;
        for (i, _) in s.match_indices(':') {
            let after = &s[i + 1..];
            if after.is_empty() || after.starts_with(' ') {
                pos = Some(i);
                break;
            }
        }
        let i = pos?;
        (s[..i].trim_end().to_string(), &s[i..])
    };
    let rest = rest.strip_prefix(':')?;
    if !(rest.is_empty() || rest.starts_with(' ')) {
        return None;
    }
    Some((key, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locator_handles_compact_sequences_and_flow_lists() {
        let text = "a:\n- x: 1\n- x: 2\n  y:\n    - 7\nb: [1, 2]\n";
        let loc = Locator::new(text);
        assert_eq!(
            loc.position(&[Seg::key("a"), Seg::Index(1), Seg::key("y")]),
            (4, 3)
        );
        assert_eq!(
            loc.position(&[Seg::key("a"), Seg::Index(1), Seg::key("y"), Seg::Index(0)]),
            (5, 5)
        );
        assert_eq!(loc.position(&[Seg::key("b"), Seg::Index(1)]), (6, 1));
    }
}
