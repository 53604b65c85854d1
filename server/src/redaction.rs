//! The redaction layer: the only road from a peer's answer to a browser
//! (DESIGN.md §3 "browser", §4 "Open a data-share edge").
//!
//! The promise is that a browser never receives a field a data contract
//! does not whitelist, never an unredacted value of a masked field, and
//! never peer free text that is not marked untrusted. It holds *by
//! construction*, through types:
//!
//! * [`Redacted<T>`] has private fields, no `Deserialize` and no public
//!   constructor: only this module makes one. [`redact`] is the only way to
//!   turn a peer's JSON into one: it validates the answer against the
//!   capability's response schema first (an answer that breaks it is
//!   `not_connected` / `SCHEMA_INVALID`, never passed through), then keeps
//!   only the fields the contract lists, each redacted by its rule;
//!   anything else is dropped silently. Free-text fields the contract marks
//!   `untrusted` become [`Untrusted`] values, which have no `Display` and
//!   no `Deref` to `str`.
//! * The browser views that carry peer data ([`query_view`],
//!   [`consult_view`], [`inbox_view`]) are built here, only from a
//!   `Redacted<Data>`, and come out as `Redacted<…View>`, which is what the
//!   BFF answers with (it implements `IntoResponse`). A handler that has
//!   only raw peer JSON has nothing to answer a browser with.
//! * [`Untrusted`] becomes the browser's `UntrustedText` (shown inert,
//!   "from <peer>, unverified") only here.
//!
//! The rules come from the topology file (`registry::data_contract`) and
//! are compiled once per load into [`Rules`], kept next to the compiled
//! schema in `contract::Contract`.

use std::collections::BTreeMap;

use app::dto::{
    ApprovalStatus, BudgetPlanView, CallOutcomeView, ConsultView, Fact, InboxPageView,
    ProposedActionView, QueryResultView, QueryRow, UntrustedText,
};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::{Number, Value};

use crate::contract::{Contract, Contracts};
use crate::inbox::{InboxEntry, ProposedAction, Status};
use crate::prober::clip;
use crate::reason::{CallResult, NotConnected, ReasonCode};
use crate::registry::data_contract::{ContractIssue, DataContract, FieldRule, MaskStyle, PathSeg};
use crate::untrusted::Untrusted;

/// What a masked value becomes (and the mask of a non-email under
/// `{ mask: email }`).
pub const MASK: &str = "•••";
/// Most groups a query view shows.
pub const MAX_ROWS: usize = 1_000;
/// Longest answer text a consult view shows.
pub const MAX_ANSWER_CHARS: usize = 4_000;
/// Longest scalar text a view shows.
const MAX_TEXT_CHARS: usize = 200;

// ---------------------------------------------------------------------
// The type boundary
// ---------------------------------------------------------------------

/// A value that went through the redaction layer. Only this module can
/// make one; nothing can deserialize one.
#[derive(Debug, Clone, PartialEq)]
pub struct Redacted<T> {
    inner: T,
}

impl<T> Redacted<T> {
    /// Private on purpose: the only constructors are [`redact`] and the
    /// view builders of this module.
    fn new(inner: T) -> Self {
        Self { inner }
    }

    /// The redacted value.
    pub fn get(&self) -> &T {
        &self.inner
    }
}

/// A browser view that went through redaction is what the BFF answers
/// with: JSON, 200.
impl<T: Serialize> IntoResponse for Redacted<T> {
    fn into_response(self) -> Response {
        axum::Json(self.inner).into_response()
    }
}

/// A peer's answer after redaction: only whitelisted fields, each redacted
/// by its rule, free text as [`Untrusted`]. Deliberately not `Serialize`:
/// it reaches a browser only through a view of this module.
#[derive(Debug, Clone, PartialEq)]
pub enum Data {
    /// `null`.
    Null,
    /// A kept boolean.
    Bool(bool),
    /// A kept or rounded number.
    Number(Number),
    /// A kept string (an id, an enum value), or a mask or bucket label.
    Text(String),
    /// Free text from the peer: data, never instructions.
    Untrusted(Untrusted),
    /// An array's redacted items.
    List(Vec<Data>),
    /// An object's whitelisted fields.
    Map(BTreeMap<String, Data>),
}

impl Data {
    /// Field `key` of a map.
    pub fn get(&self, key: &str) -> Option<&Data> {
        match self {
            Data::Map(m) => m.get(key),
            _ => None,
        }
    }

    /// The items of a list (empty for anything else).
    pub fn items(&self) -> &[Data] {
        match self {
            Data::List(items) => items,
            _ => &[],
        }
    }

    /// A kept string.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Data::Text(s) => Some(s),
            _ => None,
        }
    }

    /// A number, as f64 (finite only).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Data::Number(n) => n.as_f64().filter(|v| v.is_finite()),
            _ => None,
        }
    }

    /// Untrusted text.
    pub fn as_untrusted(&self) -> Option<&Untrusted> {
        match self {
            Data::Untrusted(u) => Some(u),
            _ => None,
        }
    }

    /// Every field path present, `groups[].key` style, sorted: what a
    /// whitelist test compares with the contract.
    pub fn paths(&self) -> Vec<String> {
        let mut out = Vec::new();
        collect_paths(self, "", &mut out);
        out.sort();
        out.dedup();
        out
    }
}

fn collect_paths(d: &Data, prefix: &str, out: &mut Vec<String>) {
    match d {
        Data::Map(m) => {
            for (k, v) in m {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                out.push(p.clone());
                collect_paths(v, &p, out);
            }
        }
        Data::List(items) => {
            let p = format!("{prefix}[]");
            for item in items {
                collect_paths(item, &p, out);
            }
        }
        _ => {}
    }
}

// ---------------------------------------------------------------------
// Compiled rules
// ---------------------------------------------------------------------

/// What happens to one leaf field.
#[derive(Debug, Clone, PartialEq)]
enum Leaf {
    Keep,
    Mask(MaskStyle),
    Round(i32),
    Bucket(Vec<f64>),
    Untrusted,
}

/// One node of the whitelist tree: a leaf rule, or the listed fields of
/// an object, or the rule for an array's items.
#[derive(Debug, Clone, PartialEq, Default)]
struct Node {
    leaf: Option<Leaf>,
    props: BTreeMap<String, Node>,
    items: Option<Box<Node>>,
}

/// A capability's data contract, compiled: the whitelist as a tree.
/// The default is the empty whitelist: nothing passes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Rules {
    root: Node,
}

/// One step of a contract path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Prop(String),
    Items,
}

/// Parses `groups[].key` into steps.
fn parse_path(path: &str) -> Result<Vec<Step>, String> {
    let bad = || {
        format!(
            "`{}` is not a field path: names of a-z, A-Z, 0-9, `_`, `-` joined by `.`, with `[]` after an array (`groups[].key`)",
            clip(path, 80)
        )
    };
    if path.is_empty() {
        return Err(bad());
    }
    let mut steps = Vec::new();
    for part in path.split('.') {
        let mut name = part;
        let mut arrays = 0;
        while let Some(rest) = name.strip_suffix("[]") {
            name = rest;
            arrays += 1;
        }
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            return Err(bad());
        }
        steps.push(Step::Prop(name.to_string()));
        steps.extend(std::iter::repeat_n(Step::Items, arrays));
    }
    Ok(steps)
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

/// The schema node a path leads to.
/// `path` parsed and found in `schema`: its steps and the schema node.
fn locate<'s>(schema: &'s Value, path: &str) -> Result<(Vec<Step>, &'s Value), String> {
    let steps = parse_path(path)?;
    let node = resolve(schema, &steps, path)?;
    Ok((steps, node))
}

fn resolve<'s>(schema: &'s Value, steps: &[Step], shown: &str) -> Result<&'s Value, String> {
    let mut node = schema;
    let mut so_far = String::new();
    for step in steps {
        match step {
            Step::Prop(name) => {
                let next = node.get("properties").and_then(|p| p.get(name.as_str()));
                let Some(next) = next else {
                    let under = if so_far.is_empty() {
                        "the response".to_string()
                    } else {
                        format!("`{so_far}`")
                    };
                    return Err(format!(
                        "`{shown}` is not in the response schema: {under} has no property `{name}`"
                    ));
                };
                if !so_far.is_empty() {
                    so_far.push('.');
                }
                so_far.push_str(name);
                node = next;
            }
            Step::Items => {
                let is_array = match node.get("type") {
                    Some(Value::String(t)) => t == "array",
                    Some(Value::Array(ts)) => ts.iter().any(|t| t == "array"),
                    _ => false,
                };
                let Some(items) = node.get("items").filter(|i| is_array && i.is_object()) else {
                    return Err(format!(
                        "`{shown}` is not in the response schema: `{so_far}` is not an array with `items`"
                    ));
                };
                so_far.push_str("[]");
                node = items;
            }
        }
    }
    Ok(node)
}

fn issue(path: Vec<PathSeg>, message: String) -> ContractIssue {
    ContractIssue { path, message }
}

impl Rules {
    /// Compiles a contract against its response schema. Every problem is
    /// reported, located inside the `contract` block.
    pub fn compile(contract: &DataContract, schema: &Value) -> Result<Self, Vec<ContractIssue>> {
        let mut issues = Vec::new();
        let mut root = Node::default();
        let mut dropped: Vec<(Vec<Step>, String)> = Vec::new();
        let mut listed: Vec<(Vec<Step>, String, Vec<PathSeg>)> = Vec::new();
        let untrusted_steps: Vec<Option<Vec<Step>>> = contract
            .untrusted
            .iter()
            .map(|p| parse_path(p).ok())
            .collect();

        for (path, rule) in &contract.fields {
            let at = vec![PathSeg::Key("fields".into()), PathSeg::Key(path.clone())];
            let (steps, node_schema) = match locate(schema, path) {
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
            let at = vec![PathSeg::Key("untrusted".into()), PathSeg::Index(k)];
            let (steps, node_schema) = match locate(schema, path) {
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

    /// Applies the whitelist to a (schema-valid) answer. Never fails: a
    /// value of an unexpected shape is dropped.
    fn apply(&self, value: &Value, from: &str) -> Data {
        apply(&self.root, value, from).unwrap_or_else(|| Data::Map(BTreeMap::new()))
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

fn apply(node: &Node, value: &Value, from: &str) -> Option<Data> {
    if let Some(leaf) = &node.leaf {
        return apply_leaf(leaf, value, from);
    }
    match value {
        Value::Null => Some(Data::Null),
        Value::Object(m) if !node.props.is_empty() => Some(Data::Map(
            node.props
                .iter()
                .filter_map(|(k, n)| Some((k.clone(), apply(n, m.get(k)?, from)?)))
                .collect(),
        )),
        Value::Array(items) => {
            let n = node.items.as_deref()?;
            Some(Data::List(
                items.iter().filter_map(|v| apply(n, v, from)).collect(),
            ))
        }
        _ => None,
    }
}

fn apply_leaf(leaf: &Leaf, value: &Value, from: &str) -> Option<Data> {
    if matches!(value, Value::Object(_) | Value::Array(_)) {
        return None;
    }
    if value.is_null() {
        return Some(Data::Null);
    }
    Some(match leaf {
        Leaf::Keep => match value {
            Value::Bool(b) => Data::Bool(*b),
            Value::Number(n) => Data::Number(n.clone()),
            Value::String(s) => Data::Text(s.clone()),
            _ => return None,
        },
        Leaf::Mask(MaskStyle::Fixed) => Data::Text(MASK.to_string()),
        Leaf::Mask(MaskStyle::Email) => Data::Text(match value {
            Value::String(s) => mask_email(s),
            _ => MASK.to_string(),
        }),
        Leaf::Round(n) => Data::Number(round(value.as_f64()?, *n)?),
        Leaf::Bucket(edges) => Data::Text(bucket(value.as_f64()?, edges)),
        Leaf::Untrusted => Data::Untrusted(Untrusted::new(value.as_str()?, from)),
    })
}

/// `alice@example.com` → `a***@example.com`; not an address → `•••`.
pub fn mask_email(s: &str) -> String {
    match s.rsplit_once('@') {
        Some((local, domain)) if !domain.is_empty() && !domain.contains(char::is_whitespace) => {
            let first: String = local.chars().take(1).filter(|c| !c.is_control()).collect();
            format!("{first}***@{}", clip(domain, 100))
        }
        _ => MASK.to_string(),
    }
}

/// `v` rounded to `decimals` (negative: to tens, hundreds, ...). Whole
/// results are integers on the wire.
fn round(v: f64, decimals: i32) -> Option<Number> {
    if !v.is_finite() {
        return None;
    }
    let r = if decimals >= 0 {
        let f = 10f64.powi(decimals);
        (v * f).round() / f
    } else {
        let f = 10f64.powi(-decimals);
        (v / f).round() * f
    };
    if r.fract() == 0.0 && r.abs() < 9.0e15 {
        // Exact: |r| < 2^53.
        #[allow(clippy::cast_possible_truncation)]
        return Some(Number::from(r as i64));
    }
    Number::from_f64(r)
}

/// The label of the range `v` falls in: `< 0`, `0–50,000`, `≥ 100,000`.
/// Ranges include their lower edge.
fn bucket(v: f64, edges: &[f64]) -> String {
    let Some(first) = edges.first() else {
        return MASK.to_string();
    };
    if v < *first {
        return format!("< {}", format_number(*first));
    }
    for w in edges.windows(2) {
        if v >= w[0] && v < w[1] {
            return format!("{}–{}", format_number(w[0]), format_number(w[1]));
        }
    }
    format!("≥ {}", format_number(*edges.last().unwrap_or(first)))
}

/// Whole numbers with thousands separators and no decimals, others with
/// at most two decimals.
pub fn format_number(v: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    if v.fract() == 0.0 && v.abs() < 1e15 {
        let digits = format!("{:.0}", v.abs());
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        return if v < 0.0 { format!("-{out}") } else { out };
    }
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

// ---------------------------------------------------------------------
// Redacting an answer
// ---------------------------------------------------------------------

/// Validates `answer` against the contract's response schema, then keeps
/// only the whitelisted fields, each redacted by its rule, free text as
/// [`Untrusted`] from `provider`. An answer that breaks the schema is
/// `SCHEMA_INVALID`: nothing of it passes.
pub fn redact(
    contract: &Contract,
    answer: &Value,
    provider: &str,
) -> Result<Redacted<Data>, NotConnected> {
    contract.check(answer).map_err(|v| {
        NotConnected::new(
            ReasonCode::SchemaInvalid,
            format!("{}'s answer: {v}", clip(provider, 64)),
        )
    })?;
    Ok(Redacted::new(contract.rules().apply(answer, provider)))
}

/// A gateway result, redacted: the failure as it was, or the answer
/// through [`redact`] with the capability's contract. A capability with no
/// compiled contract is `SCHEMA_INVALID` (nothing to check it against).
pub fn redact_call(
    contracts: &Contracts,
    capability: &str,
    provider: &str,
    result: &CallResult,
) -> Result<Redacted<Data>, NotConnected> {
    match result {
        CallResult::NotConnected { reason, detail, .. } => {
            Err(NotConnected::new(*reason, detail.clone()))
        }
        CallResult::Connected { result, .. } => {
            let contract = contracts.get(capability).ok_or_else(|| {
                NotConnected::new(
                    ReasonCode::SchemaInvalid,
                    format!("no contract for {}", clip(capability, 64)),
                )
            })?;
            redact(&contract, result, provider)
        }
    }
}

/// The proposed actions of a redacted consult answer, for the asker's
/// approval inbox: only what the contract kept. An action without a kept
/// `action_type` and `target` is not a proposal. The rationale is stored
/// as the untrusted text it is (the inbox shows it as such).
pub fn proposed_actions(answer: &Redacted<Data>) -> Vec<ProposedAction> {
    let Some(list) = answer.get().get("proposed_actions") else {
        return Vec::new();
    };
    list.items()
        .iter()
        .filter_map(|a| {
            let action_type = a.get("action_type")?.as_text()?.to_string();
            let target = a.get("target")?.as_text()?.to_string();
            let parameters = a.get("parameters").map(to_json).unwrap_or(Value::Null);
            let rationale = a
                .get("rationale")
                .and_then(Data::as_untrusted)
                .map(|u| u.as_data().to_string())
                .unwrap_or_default();
            Some(ProposedAction {
                action_type,
                target,
                parameters,
                rationale,
            })
        })
        .collect()
}

/// Redacted data back to JSON for the hub's own store (proposal
/// parameters). Untrusted text is stored as text; it is shown as untrusted
/// again when read back.
fn to_json(d: &Data) -> Value {
    match d {
        Data::Null => Value::Null,
        Data::Bool(b) => Value::Bool(*b),
        Data::Number(n) => Value::Number(n.clone()),
        Data::Text(s) => Value::String(s.clone()),
        Data::Untrusted(u) => Value::String(u.as_data().to_string()),
        Data::List(items) => Value::Array(items.iter().map(to_json).collect()),
        Data::Map(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), to_json(v))).collect()),
    }
}

// ---------------------------------------------------------------------
// Browser views
// ---------------------------------------------------------------------

/// Which call a view is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallMeta {
    /// The edge id.
    pub edge: String,
    /// The capability id.
    pub capability: String,
    /// The providing system id.
    pub provider: String,
    /// The call's trace id.
    pub trace_id: String,
}

impl CallMeta {
    /// Meta of a gateway result (the trace id is the result's).
    pub fn of(edge: &str, capability: &str, provider: &str, result: &CallResult) -> Self {
        let trace_id = match result {
            CallResult::Connected { trace_id, .. } | CallResult::NotConnected { trace_id, .. } => {
                trace_id.clone()
            }
        };
        Self {
            edge: edge.to_string(),
            capability: capability.to_string(),
            provider: provider.to_string(),
            trace_id,
        }
    }
}

fn outcome(answer: Result<&Redacted<Data>, &NotConnected>) -> CallOutcomeView {
    match answer {
        Ok(_) => CallOutcomeView::Connected,
        Err(nc) => CallOutcomeView::NotConnected {
            reason: nc.reason,
            detail: nc.detail.clone(),
        },
    }
}

fn untrusted_text(u: &Untrusted, max: usize) -> UntrustedText {
    UntrustedText {
        text: clip(u.as_data(), max),
        from: u.from().to_string(),
    }
}

/// A count as a peer sends it: an integer, or (A2A data parts carry
/// numbers as doubles) a whole, non-negative double.
fn count_of(d: &Data) -> Option<u64> {
    match d {
        Data::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| f.is_finite() && *f >= 0.0 && f.fract() == 0.0 && *f < 9.0e15)
                .map(|f| f as u64)
        }),
        _ => None,
    }
}

/// What a data-share drawer shows: the groups' key, value and count, as
/// far as the contract keeps them (a masked or bucketed value is text and
/// not a number, so it shows as no value; free text never becomes a key).
pub fn query_view(
    meta: CallMeta,
    answer: Result<&Redacted<Data>, &NotConnected>,
) -> Redacted<QueryResultView> {
    let (rows, row_count) = match answer {
        Ok(r) => {
            let d = r.get();
            let rows = d
                .get("groups")
                .map(Data::items)
                .unwrap_or_default()
                .iter()
                .take(MAX_ROWS)
                .map(|g| QueryRow {
                    key: match g.get("key") {
                        Some(Data::Text(s)) => Some(clip(s, MAX_TEXT_CHARS)),
                        Some(Data::Number(n)) => Some(n.to_string()),
                        Some(Data::Bool(b)) => Some(b.to_string()),
                        _ => None,
                    },
                    value: g.get("value").and_then(Data::as_f64),
                    count: g.get("count").and_then(count_of).unwrap_or(0),
                })
                .collect();
            (rows, d.get("row_count").and_then(count_of))
        }
        Err(_) => (Vec::new(), None),
    };
    Redacted::new(QueryResultView {
        edge: meta.edge,
        capability: meta.capability,
        provider: meta.provider,
        trace_id: meta.trace_id,
        outcome: outcome(answer),
        rows,
        row_count,
    })
}

/// Labels of well-known consult fields; others get their name, humanised.
/// Facts are listed in this order, then the others by name.
const FACT_LABELS: [(&str, &str); 10] = [
    ("ticket_id", "Ticket"),
    ("department", "Department"),
    ("budget", "Budget"),
    ("spent", "Spent"),
    ("remaining", "Remaining"),
    ("category", "Category"),
    ("priority", "Priority"),
    ("confidence", "Confidence"),
    ("requires_human_review", "Needs human review"),
    ("reason_codes", "Reason codes"),
];

fn humanise(key: &str) -> String {
    let spaced = key.replace(['_', '-'], " ");
    let mut c = spaced.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// A scalar (or a list of scalars) as a fact's value; free text, maps and
/// nulls are not facts.
fn fact_value(d: &Data) -> Option<String> {
    match d {
        Data::Text(s) => Some(clip(s, MAX_TEXT_CHARS)),
        Data::Number(n) => n.as_f64().map(format_number),
        Data::Bool(b) => Some(if *b { "yes" } else { "no" }.to_string()),
        Data::List(items) => {
            let words: Vec<String> = items
                .iter()
                .take(20)
                .filter_map(|i| match i {
                    Data::Text(s) => Some(clip(s, 64)),
                    Data::Number(n) => n.as_f64().map(format_number),
                    _ => None,
                })
                .collect();
            (!words.is_empty()).then(|| words.join(", "))
        }
        Data::Null | Data::Map(_) | Data::Untrusted(_) => None,
    }
}

/// The kept scalar fields of a consult answer as label/value pairs.
fn facts(d: &Data) -> Vec<Fact> {
    let Data::Map(m) = d else {
        return Vec::new();
    };
    let known = FACT_LABELS.iter().map(|(k, l)| (*k, (*l).to_string()));
    let others = m
        .keys()
        .filter(|k| !FACT_LABELS.iter().any(|(f, _)| f == k))
        .filter(|k| !matches!(k.as_str(), "answer" | "proposed_actions"))
        .map(|k| (k.as_str(), humanise(k)));
    known
        .chain(others)
        .filter_map(|(key, label)| {
            Some(Fact {
                label,
                value: fact_value(m.get(key)?)?,
            })
        })
        .collect()
}

/// The answer a consult drawer shows: the answer's own `answer` text, else
/// one sentence from a classification (category, priority, review, and the
/// ticket's subject when the contract keeps it). Either way the peer's
/// words: shown as untrusted text from the provider.
fn answer_of(d: &Data, provider: &str) -> Option<UntrustedText> {
    match d.get("answer") {
        Some(Data::Untrusted(u)) => return Some(untrusted_text(u, MAX_ANSWER_CHARS)),
        Some(Data::Text(s)) => {
            return Some(untrusted_text(
                &Untrusted::new(s.as_str(), provider),
                MAX_ANSWER_CHARS,
            ))
        }
        _ => {}
    }
    let word = |k: &str| d.get(k).and_then(Data::as_text).map(|s| clip(s, 64));
    let category = word("category")?;
    let mut text = String::new();
    if let Some(subject) = d.get("subject").and_then(Data::as_untrusted) {
        text.push_str(&format!("“{}”: ", clip(subject.as_data(), MAX_TEXT_CHARS)));
    }
    text.push_str(&match word("priority") {
        Some(p) => format!("classified as {category}, {p} priority."),
        None => format!("classified as {category}."),
    });
    if matches!(d.get("requires_human_review"), Some(Data::Bool(true))) {
        text.push_str(" A person should review it.");
    }
    let mut c = text.chars();
    let text = match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => text,
    };
    Some(UntrustedText {
        text,
        from: provider.to_string(),
    })
}

/// An inbox entry as a browser sees it: the rationale as untrusted text
/// from the system that proposed it.
pub fn action_view(entry: &InboxEntry, inbox_owner: &str) -> ProposedActionView {
    ProposedActionView {
        id: entry.id.to_string(),
        action_type: clip(&entry.action_type, 64),
        target: clip(&entry.target, 128),
        parameters: clip(&entry.parameters.to_string(), 1_000),
        rationale: untrusted_text(
            &Untrusted::new(entry.rationale.as_str(), entry.from_system.as_str()),
            2_000,
        ),
        status: match entry.status {
            Status::Pending => ApprovalStatus::Pending,
            Status::Approved => ApprovalStatus::Approved,
            Status::Rejected => ApprovalStatus::Rejected,
        },
        inbox: inbox_owner.to_string(),
        trace_id: entry.trace_id.clone(),
        decided_by: entry.decided_by.as_deref().map(|s| clip(s, 64)),
        decided_at: entry.decided_at.clone(),
        effect: entry.effect.as_deref().map(|s| clip(s, 200)),
    }
}

/// One inbox entry as a browser sees it (the answer to a decision).
pub fn action_view_redacted(entry: &InboxEntry, inbox_owner: &str) -> Redacted<ProposedActionView> {
    Redacted::new(action_view(entry, inbox_owner))
}

/// The approval inbox as a browser sees it. Entries were stored from
/// redacted answers ([`proposed_actions`]); their free text is shown as
/// untrusted again.
pub fn inbox_view(entries: &[InboxEntry], inbox_owner: &str) -> Redacted<Vec<ProposedActionView>> {
    Redacted::new(
        entries
            .iter()
            .map(|e| action_view(e, inbox_owner))
            .collect(),
    )
}

/// The hub's inbox page: its entries and the local plan rows approvals
/// wrote. Plan rows hold only what [`crate::actions`] validated (a
/// department id, a finite amount) and who approved it.
pub fn inbox_page_view(
    entries: &[InboxEntry],
    inbox_owner: &str,
    plans: &[crate::actions::BudgetPlan],
) -> Redacted<InboxPageView> {
    Redacted::new(InboxPageView {
        owner: inbox_owner.to_string(),
        entries: entries
            .iter()
            .map(|e| action_view(e, inbox_owner))
            .collect(),
        budget_plans: plans
            .iter()
            .map(|p| BudgetPlanView {
                department: clip(&p.department, 64),
                amount: p.amount,
                approved_by: clip(&p.approved_by, 64),
                approved_at: p.approved_at.clone(),
                proposed_by: clip(&p.proposed_by, 64),
                trace_id: p.trace_id.clone(),
                inbox_id: p.inbox_id.to_string(),
            })
            .collect(),
    })
}

/// What a consult drawer shows: the answer as untrusted text, the kept
/// scalar fields as facts, and the proposals as stored in the asker's
/// inbox (`entries`, from [`proposed_actions`] of this answer).
pub fn consult_view(
    meta: CallMeta,
    answer: Result<&Redacted<Data>, &NotConnected>,
    entries: &[InboxEntry],
    inbox_owner: &str,
) -> Redacted<ConsultView> {
    let (text, facts) = match answer {
        Ok(r) => (answer_of(r.get(), &meta.provider), facts(r.get())),
        Err(_) => (None, Vec::new()),
    };
    Redacted::new(ConsultView {
        outcome: outcome(answer),
        edge: meta.edge,
        capability: meta.capability,
        provider: meta.provider,
        trace_id: meta.trace_id,
        answer: text,
        facts,
        proposed_actions: entries
            .iter()
            .map(|e| action_view(e, inbox_owner))
            .collect(),
    })
}

#[cfg(test)]
mod tests;
