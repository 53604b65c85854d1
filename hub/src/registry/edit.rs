//! Edits of the topology file's text that leave the rest of it as it was.
//!
//! The file is the operator's: it carries comments, an order and a style
//! that a parse-and-reserialize would lose. So a change made from the
//! canvas is a small edit of the text — an item appended to one of the
//! four top-level lists (`systems`, `capabilities`, `rules`,
//! `initial_edges`), an item removed, one list field of an item rewritten —
//! and everything else keeps its bytes. The caller validates the result
//! with the loader before anything is written (the registry's write room).
//!
//! An item of a list is found by its position: the file was parsed, so the
//! n-th `- ` line at the list's indentation is the n-th item. A list that
//! is not written one `- ` per item (a flow list `[...]`) is refused, and
//! the count of items found is checked against the parse, so an edit never
//! lands on the wrong item.
//!
//! Items are written in the file's own style ([`render`]): block mappings,
//! flow lists of scalars, a scalar quoted unless it is plainly a word.

use serde_yaml_ng::Value;

use super::model::Topology;

/// One of the file's top-level lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Block {
    Systems,
    Capabilities,
    Rules,
    InitialEdges,
}

impl Block {
    /// Its key in the file.
    pub fn key(self) -> &'static str {
        match self {
            Block::Systems => "systems",
            Block::Capabilities => "capabilities",
            Block::Rules => "rules",
            Block::InitialEdges => "initial_edges",
        }
    }

    fn len_in(self, t: &Topology) -> usize {
        match self {
            Block::Systems => t.systems.len(),
            Block::Capabilities => t.capabilities.len(),
            Block::Rules => t.rules.len(),
            Block::InitialEdges => t.initial_edges.len(),
        }
    }
}

/// One change to the text.
#[derive(Debug, Clone, PartialEq)]
pub enum Edit {
    /// Appends `item` (a mapping, as `serde_yaml_ng::to_value` of a model
    /// struct gives it: fields in declaration order) to `block`.
    Append { block: Block, item: Value },
    /// Removes item `index` of `block`.
    Remove { block: Block, index: usize },
    /// Sets the list field `field` of item `index` to `values`: the one
    /// line `field: [...]` is rewritten when the item has one, else the
    /// whole item is replaced by `item` (its new form).
    SetList {
        block: Block,
        index: usize,
        field: &'static str,
        values: Vec<String>,
        item: Value,
    },
}

impl Edit {
    fn target(&self) -> Option<(Block, usize)> {
        match self {
            Edit::Append { .. } => None,
            Edit::Remove { block, index } | Edit::SetList { block, index, .. } => {
                Some((*block, *index))
            }
        }
    }
}

/// Why an edit could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    #[error(
        "the topology file's `{0}` is not written one `- ` line per item; make this change by hand"
    )]
    NotBlockList(&'static str),
    #[error("the topology file's `{block}` has {found} `- ` items where {expected} were read; make this change by hand")]
    Miscount {
        block: &'static str,
        found: usize,
        expected: usize,
    },
    #[error("the topology file's `{block}` has no item {index}")]
    NoItem { block: &'static str, index: usize },
    #[error("an item must be a mapping")]
    NotAMapping,
}

/// Applies `edits` to `text`, the file `topology` was parsed from. Edits
/// of existing items are applied from the last item up, so each index
/// means the item it meant in the original text; appends come last, in
/// order.
pub fn apply(text: &str, topology: &Topology, mut edits: Vec<Edit>) -> Result<String, EditError> {
    let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
    if lines.last().is_some_and(|l| !l.ends_with('\n')) {
        if let Some(last) = lines.last_mut() {
            last.push('\n');
        }
    }
    for block in [
        Block::Systems,
        Block::Capabilities,
        Block::Rules,
        Block::InitialEdges,
    ] {
        if edits
            .iter()
            .any(|e| e.target().is_some_and(|(b, _)| b == block))
        {
            let found = Layout::of(&lines, block)?.items.len();
            let expected = block.len_in(topology);
            if found != expected {
                return Err(EditError::Miscount {
                    block: block.key(),
                    found,
                    expected,
                });
            }
        }
    }
    edits.sort_by_key(|e| match e.target() {
        Some((b, i)) => (0, b, usize::MAX - i),
        None => (1, Block::Systems, 0),
    });
    // Appends keep their order: the sort is stable.
    for edit in edits {
        apply_one(&mut lines, edit)?;
    }
    Ok(lines.concat())
}

fn apply_one(lines: &mut Vec<String>, edit: Edit) -> Result<(), EditError> {
    match edit {
        Edit::Append { block, item } => {
            let layout = Layout::of(lines, block)?;
            let rendered = render_item(&item, layout.indent)?;
            let at = match (layout.key_line, layout.items.last()) {
                (_, Some(&(_, end))) => end,
                (Some(key), None) => {
                    // `key: []` becomes `key:` with the first item under it.
                    lines[key] = format!("{}:\n", block.key());
                    key + 1
                }
                (None, None) => {
                    lines.push(format!("{}:\n", block.key()));
                    lines.len()
                }
            };
            lines.splice(at..at, rendered);
        }
        Edit::Remove { block, index } => {
            let layout = Layout::of(lines, block)?;
            let (start, end) = layout.item(block, index)?;
            lines.drain(start..end);
            if Layout::of(lines, block)?.items.is_empty() {
                if let Some(key) = layout.key_line {
                    lines[key] = format!("{}: []\n", block.key());
                }
            }
        }
        Edit::SetList {
            block,
            index,
            field,
            values,
            item,
        } => {
            let layout = Layout::of(lines, block)?;
            let (start, end) = layout.item(block, index)?;
            let one_line = (start..end).find(|&i| flow_field(&lines[i], field).is_some());
            match one_line {
                Some(i) => {
                    let prefix = flow_field(&lines[i], field).unwrap_or_default();
                    lines[i] = format!("{prefix}{}\n", flow_list(&values));
                }
                None => {
                    let rendered = render_item(&item, layout.indent)?;
                    lines.splice(start..end, rendered);
                }
            }
        }
    }
    Ok(())
}

/// Where a top-level list sits: its key's line, its items' indentation
/// and each item's lines (`start..end`, trailing blank and comment lines
/// left to what follows).
#[derive(Debug)]
struct Layout {
    key_line: Option<usize>,
    indent: usize,
    items: Vec<(usize, usize)>,
}

impl Layout {
    fn of(lines: &[String], block: Block) -> Result<Self, EditError> {
        let key = block.key();
        let Some(key_line) = lines.iter().position(|l| is_key_line(l, key).is_some()) else {
            return Ok(Self {
                key_line: None,
                indent: 2,
                items: Vec::new(),
            });
        };
        match is_key_line(&lines[key_line], key) {
            Some(KeyLine::Block) => {}
            Some(KeyLine::EmptyFlow) => {
                return Ok(Self {
                    key_line: Some(key_line),
                    indent: 2,
                    items: Vec::new(),
                })
            }
            _ => return Err(EditError::NotBlockList(key)),
        }
        // The list runs to the next top-level key: its items may sit at
        // column 0 (`- id: …` right under `systems:`), a key may not.
        let end = (key_line + 1..lines.len())
            .find(|&i| {
                let l = &lines[i];
                !l.trim().is_empty() && !l.starts_with([' ', '\t', '#']) && !is_dash(l)
            })
            .unwrap_or(lines.len());
        let content = |i: usize| {
            let t = lines[i].trim_start();
            !t.is_empty() && !t.starts_with('#')
        };
        let Some(first) = (key_line + 1..end).find(|&i| content(i)) else {
            return Ok(Self {
                key_line: Some(key_line),
                indent: 2,
                items: Vec::new(),
            });
        };
        let indent = lines[first].len() - lines[first].trim_start().len();
        if !is_dash(&lines[first]) {
            return Err(EditError::NotBlockList(key));
        }
        let starts: Vec<usize> = (first..end)
            .filter(|&i| {
                let l = &lines[i];
                l.len() - l.trim_start().len() == indent && is_dash(l)
            })
            .collect();
        let items = starts
            .iter()
            .enumerate()
            .map(|(k, &start)| {
                let mut stop = starts.get(k + 1).copied().unwrap_or(end);
                while stop > start + 1 && !content(stop - 1) {
                    stop -= 1;
                }
                (start, stop)
            })
            .collect();
        Ok(Self {
            key_line: Some(key_line),
            indent,
            items,
        })
    }

    fn item(&self, block: Block, index: usize) -> Result<(usize, usize), EditError> {
        self.items.get(index).copied().ok_or(EditError::NoItem {
            block: block.key(),
            index,
        })
    }
}

enum KeyLine {
    Block,
    EmptyFlow,
    Other,
}

/// Whether `line` is the top-level `key:` line, and of which form.
fn is_key_line(line: &str, key: &str) -> Option<KeyLine> {
    let rest = line.strip_prefix(key)?.strip_prefix(':')?;
    let rest = match rest.find(" #") {
        Some(i) => &rest[..i],
        None => rest,
    };
    Some(match rest.trim() {
        "" => KeyLine::Block,
        "[]" => KeyLine::EmptyFlow,
        _ => KeyLine::Other,
    })
}

fn is_dash(line: &str) -> bool {
    let t = line.trim_start();
    t == "-\n" || t == "-" || t.starts_with("- ")
}

/// When `line` is `field: [...]` on one line (the item's first line `- `
/// included), what comes before the list.
fn flow_field(line: &str, field: &str) -> Option<String> {
    let body = line.trim_end_matches('\n');
    let lead = body.len() - body.trim_start().len();
    let mut rest = &body[lead..];
    let mut prefix = body[..lead].to_string();
    if let Some(r) = rest.strip_prefix("- ") {
        prefix.push_str("- ");
        rest = r;
    }
    let value = rest.strip_prefix(field)?.strip_prefix(':')?;
    let trimmed = value.trim();
    (trimmed.starts_with('[') && trimmed.ends_with(']')).then(|| format!("{prefix}{field}: "))
}

fn flow_list(values: &[String]) -> String {
    let items: Vec<String> = values
        .iter()
        .map(|v| scalar(&Value::String(v.clone())))
        .collect();
    format!("[{}]", items.join(", "))
}

/// `item` as lines of one list item at `indent` (`- key: value` first).
fn render_item(item: &Value, indent: usize) -> Result<Vec<String>, EditError> {
    let Value::Mapping(_) = item else {
        return Err(EditError::NotAMapping);
    };
    let body = render(item);
    let pad = " ".repeat(indent);
    Ok(body
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 0 {
                format!("{pad}- {l}\n")
            } else {
                format!("{pad}  {l}\n")
            }
        })
        .collect())
}

/// A value as block YAML in the file's style: mappings as blocks, lists
/// of scalars in flow style, lists of mappings as `- ` blocks; a `null`
/// field is left out (every optional field defaults to absent).
pub fn render(value: &Value) -> String {
    let mut out = String::new();
    render_into(value, 0, &mut out);
    out
}

fn is_block(v: &Value) -> bool {
    match v {
        Value::Mapping(m) => !m.is_empty(),
        Value::Sequence(items) => items
            .iter()
            .any(|i| matches!(i, Value::Mapping(_) | Value::Sequence(_))),
        _ => false,
    }
}

fn render_into(value: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match value {
        Value::Mapping(map) => {
            for (k, v) in map {
                if v.is_null() {
                    continue;
                }
                let key = scalar(k);
                if is_block(v) {
                    out.push_str(&format!("{pad}{key}:\n"));
                    render_into(v, indent + 2, out);
                } else {
                    out.push_str(&format!("{pad}{key}: {}\n", inline(v)));
                }
            }
        }
        Value::Sequence(items) => {
            for item in items {
                if matches!(item, Value::Mapping(m) if !m.is_empty()) {
                    // The nested block's first line carries the dash.
                    let mut nested = String::new();
                    render_into(item, indent + 2, &mut nested);
                    let inner = " ".repeat(indent + 2);
                    for (n, l) in nested.lines().enumerate() {
                        if n == 0 {
                            let l = l.strip_prefix(&inner).unwrap_or(l);
                            out.push_str(&format!("{pad}- {l}\n"));
                        } else {
                            out.push_str(&format!("{l}\n"));
                        }
                    }
                } else {
                    out.push_str(&format!("{pad}- {}\n", inline(item)));
                }
            }
        }
        Value::Tagged(t) => render_into(&t.value, indent, out),
        other => out.push_str(&format!("{pad}{}\n", inline(other))),
    }
}

/// A value on one line: scalars, flow lists, flow mappings.
fn inline(value: &Value) -> String {
    match value {
        Value::Sequence(items) => {
            let parts: Vec<String> = items.iter().map(inline).collect();
            format!("[{}]", parts.join(", "))
        }
        Value::Mapping(map) if map.is_empty() => "{}".into(),
        Value::Mapping(map) => {
            let parts: Vec<String> = map
                .iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| format!("{}: {}", scalar(k), inline(v)))
                .collect();
            format!("{{ {} }}", parts.join(", "))
        }
        Value::Tagged(t) => inline(&t.value),
        other => scalar(other),
    }
}

/// A scalar: numbers and booleans as they are, a string plain when it is
/// a word YAML reads back as the same string, else double-quoted (JSON's
/// escapes are YAML's).
fn scalar(value: &Value) -> String {
    match value {
        Value::String(s) if plain_safe(s) => s.clone(),
        Value::String(s) => serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into()),
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Sequence(_) | Value::Mapping(_) | Value::Tagged(_) => inline(value),
    }
}

fn plain_safe(s: &str) -> bool {
    const RESERVED: &[&str] = &["true", "false", "null", "yes", "no", "on", "off", "y", "n"];
    let Some(first) = s.chars().next() else {
        return false;
    };
    first.is_ascii_alphabetic()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
        && !RESERVED.contains(&s.to_ascii_lowercase().as_str())
}

#[cfg(test)]
#[path = "edit_tests.rs"]
mod tests;
