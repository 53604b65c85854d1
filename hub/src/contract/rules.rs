//! A data contract compiled (DESIGN.md §2 "data contract"): the whitelist
//! as a tree, each listed leaf with its redaction rule.
//!
//! [`Rules::compile`] checks a contract against its response schema once,
//! when the topology loads, and reports every problem located inside the
//! `contract` block (wrong rule for the field's type, path not in the
//! schema, a rule under a dropped field, a path both untrusted and given
//! another rule). What compiles is what `crate::redaction` applies; the
//! default is the empty whitelist: nothing passes.

use std::collections::BTreeMap;

use exchange::located::Seg;
use serde_json::Value;

use super::model::{DataContract, FieldRule, MaskStyle};
use super::path::{self, Step};

/// A problem in one capability's contract: where inside its `contract`
/// block (`fields.groups[].key`, `untrusted[1]`) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContractIssue {
    /// Location relative to the `contract:` key.
    pub path: Vec<Seg<'static>>,
    /// What is wrong.
    pub message: String,
}

/// What happens to one leaf field.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Leaf {
    /// Passed as is.
    Keep,
    /// Masked.
    Mask(MaskStyle),
    /// Rounded to this many decimals.
    Round(i32),
    /// Replaced by its range's label.
    Bucket(Vec<f64>),
    /// Kept as untrusted text.
    Untrusted,
}

/// One node of the whitelist tree: a leaf rule, or the listed fields of
/// an object, or the rule for an array's items.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Node {
    /// The rule of this field, when it is a listed leaf.
    pub(crate) leaf: Option<Leaf>,
    /// The listed properties of an object.
    pub(crate) props: BTreeMap<String, Node>,
    /// The rule for an array's items.
    pub(crate) items: Option<Box<Node>>,
}

/// A capability's data contract, compiled: the whitelist as a tree.
/// The default is the empty whitelist: nothing passes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Rules {
    root: Node,
}

impl Rules {
    /// The whitelist tree (applied by `crate::redaction`).
    pub(crate) fn root(&self) -> &Node {
        &self.root
    }
}

/// The JSON types a schema node admits.
#[derive(Debug, Default, Clone, Copy)]
struct Admits {
    declared: bool,
    string: bool,
    numeric: bool,
    boolean: bool,
    structured: bool,
}

fn admits(schema: &Value) -> Admits {
    let mut a = Admits::default();
    let mut note = |t: &str| {
        a.declared = true;
        match t {
            "string" => a.string = true,
            "number" | "integer" => a.numeric = true,
            "boolean" => a.boolean = true,
            "null" => {}
            _ => a.structured = true,
        }
    };
    match schema.get("type") {
        Some(Value::String(t)) => note(t),
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).for_each(&mut note),
        _ => {
            let values = schema
                .get("enum")
                .and_then(Value::as_array)
                .cloned()
                .or_else(|| schema.get("const").map(|c| vec![c.clone()]));
            for v in values.unwrap_or_default() {
                note(match v {
                    Value::String(_) => "string",
                    Value::Number(_) => "number",
                    Value::Bool(_) => "boolean",
                    Value::Null => "null",
                    _ => "object",
                });
            }
        }
    }
    a
}

fn issue(path: Vec<Seg<'static>>, message: String) -> ContractIssue {
    ContractIssue { path, message }
}

impl Rules {
    /// Compiles a contract against its response schema. Every problem is
    /// reported, located inside the `contract` block.
    pub fn compile(contract: &DataContract, schema: &Value) -> Result<Self, Vec<ContractIssue>> {
        let mut issues = Vec::new();
        let mut root = Node::default();
        let mut dropped: Vec<(Vec<Step>, String)> = Vec::new();
        let mut listed: Vec<(Vec<Step>, String, Vec<Seg<'static>>)> = Vec::new();
        let untrusted_steps: Vec<Option<Vec<Step>>> = contract
            .untrusted
            .iter()
            .map(|p| path::parse(p).ok())
            .collect();

        for (path, rule) in &contract.fields {
            let at = vec![Seg::key("fields"), Seg::key(path.clone())];
            let (steps, node_schema) = match path::locate(schema, path) {
                Ok(found) => found,
                Err(e) => {
                    issues.push(issue(at, e));
                    continue;
                }
            };
            let a = admits(node_schema);
            let is_untrusted = untrusted_steps.iter().flatten().any(|u| *u == steps);
            if is_untrusted && *rule != FieldRule::Keep {
                issues.push(issue(
                    at,
                    format!("`{path}` is listed under untrusted, which keeps it as untrusted text; remove its rule here (or take it out of untrusted)"),
                ));
                continue;
            }
            if let Err(e) = fits(rule, &a, path) {
                issues.push(issue(at, e));
                continue;
            }
            let leaf = match rule {
                FieldRule::Drop => {
                    dropped.push((steps, path.clone()));
                    continue;
                }
                _ if is_untrusted => Leaf::Untrusted,
                FieldRule::Keep => Leaf::Keep,
                FieldRule::Mask(style) => Leaf::Mask(*style),
                FieldRule::Round(n) => Leaf::Round(*n),
                FieldRule::Bucket(edges) => Leaf::Bucket(edges.clone()),
            };
            listed.push((steps.clone(), path.clone(), at));
            insert(&mut root, &steps, leaf);
        }

        let mut seen: Vec<Vec<Step>> = Vec::new();
        for (k, path) in contract.untrusted.iter().enumerate() {
            let at = vec![Seg::key("untrusted"), Seg::Index(k)];
            let (steps, node_schema) = match path::locate(schema, path) {
                Ok(found) => found,
                Err(e) => {
                    issues.push(issue(at, e));
                    continue;
                }
            };
            if seen.contains(&steps) {
                issues.push(issue(at, format!("`{path}` is listed twice")));
                continue;
            }
            seen.push(steps.clone());
            let a = admits(node_schema);
            if !(a.declared && a.string && !a.numeric && !a.boolean && !a.structured) {
                issues.push(issue(
                    at,
                    format!("`{path}` is not a string field in the response schema; only free text can be untrusted"),
                ));
                continue;
            }
            listed.push((steps.clone(), path.clone(), at));
            insert(&mut root, &steps, Leaf::Untrusted);
        }

        // Nothing may be listed under a dropped field.
        for (steps, path, at) in &listed {
            if let Some((_, d)) = dropped
                .iter()
                .find(|(d, _)| steps.len() > d.len() && steps.starts_with(d))
            {
                issues.push(issue(
                    at.clone(),
                    format!("`{path}` is under `{d}`, which is dropped"),
                ));
            }
        }

        if issues.is_empty() {
            Ok(Self { root })
        } else {
            Err(issues)
        }
    }
}

/// Whether `rule` suits a field admitting `a`.
fn fits(rule: &FieldRule, a: &Admits, path: &str) -> Result<(), String> {
    if matches!(rule, FieldRule::Drop) {
        return Ok(());
    }
    if a.structured {
        return Err(format!(
            "`{path}` is an object or array in the response schema: a rule applies to a scalar field; list its fields (`{path}.name`) or items (`{path}[]`) instead"
        ));
    }
    if !a.declared {
        return Err(format!(
            "`{path}` declares no `type` (or `enum`) in the response schema; a rule needs to know it is a scalar"
        ));
    }
    match rule {
        FieldRule::Round(_) | FieldRule::Bucket(_) if a.string || a.boolean || !a.numeric => Err(
            format!("`{path}` is not a numeric field; round and bucket need a number"),
        ),
        FieldRule::Mask(MaskStyle::Email) if !a.string || a.numeric || a.boolean => Err(format!(
            "`{path}` is not a string field; {{ mask: email }} needs a string"
        )),
        _ => Ok(()),
    }
}

fn insert(root: &mut Node, steps: &[Step], leaf: Leaf) {
    let mut node = root;
    for step in steps {
        node = match step {
            Step::Prop(name) => node.props.entry(name.clone()).or_default(),
            Step::Items => node.items.get_or_insert_with(Box::default),
        };
    }
    node.leaf = Some(leaf);
}
