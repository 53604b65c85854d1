//! The envelope headers every call carries (`exchange::envelope`): the
//! input is header lines `name: value`; those that make a valid HTTP
//! header (the only ones a request can carry) go into a `HeaderMap` read by
//! `Envelope::from_headers` and `bearer_token`; every value, and the whole
//! input, also goes to `TraceParent::parse` and `A2aVersion::parse`.
//!
//! Properties beyond "no panic":
//! - a parsed `traceparent` renders (`to_header`) to a value that parses
//!   back equal, and its ids are lowercase hex of the right length, not
//!   all zero;
//! - a parsed version re-reads from its own `as_str` as the same version;
//! - an envelope always has a version, a request id (the caller's at most
//!   128 characters) and a valid trace; its `protocol()` is the parse of
//!   its version;
//! - a bearer token is a trimmed, non-empty-scheme part of the header.

use exchange::envelope::{bearer_token, A2aVersion, Envelope, TraceParent};
use http::{HeaderMap, HeaderName, HeaderValue};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;

use crate::{Broken, Class, Target};

/// The target.
pub static TARGET: Target = Target {
    name: "envelope",
    run,
    generate,
    dictionary: DICTIONARY,
    repo_seeds: &[],
};

const DICTIONARY: &[&str] = &[
    "a2a-version: ",
    "x-a2a-version: ",
    "x-request-id: ",
    "traceparent: ",
    "authorization: ",
    "x-caller-system: ",
    "Bearer ",
    "00-",
    "-01",
    "0.3",
    "1.0",
    "1.",
    "0000000000000000",
    "4bf92f3577b34da6a3ce929d0e0e4736",
    "00f067aa0ba902b7",
    "\n",
];

const NAMES: &[&str] = &[
    "a2a-version",
    "x-a2a-version",
    "x-request-id",
    "traceparent",
    "authorization",
    "x-caller-system",
];

fn run(input: &[u8]) -> Result<Class, Broken> {
    let mut headers = HeaderMap::new();
    for line in input.split(|b| *b == b'\n') {
        let Some(colon) = line.iter().position(|b| *b == b':') else {
            continue;
        };
        let (name, value) = (&line[..colon], &line[colon + 1..]);
        let value = value.strip_prefix(b" ").unwrap_or(value);
        if let Ok(text) = std::str::from_utf8(value) {
            check_trace(text)?;
            check_version(text)?;
        }
        // Invalid names and values cannot be in a request: skipped.
        if let (Ok(name), Ok(value)) =
            (HeaderName::from_bytes(name), HeaderValue::from_bytes(value))
        {
            headers.append(name, value);
        }
    }
    if let Ok(text) = std::str::from_utf8(input) {
        check_trace(text)?;
        check_version(text)?;
    }

    let token = bearer_token(&headers);
    if let Some(token) = token {
        if token != token.trim() {
            return Err(format!("bearer token {token:?} is not trimmed"));
        }
    }
    let envelope = Envelope::from_headers(&headers);
    if envelope.version.is_empty() || envelope.version != envelope.version.trim() {
        return Err(format!("envelope version {:?}", envelope.version));
    }
    if envelope.request_id.is_empty()
        || (envelope.request_id_from_caller && envelope.request_id.len() > 128)
    {
        return Err(format!("envelope request id {:?}", envelope.request_id));
    }
    if TraceParent::parse(&envelope.trace.to_header()).as_ref() != Some(&envelope.trace) {
        return Err(format!(
            "envelope trace {:?} does not round-trip",
            envelope.trace
        ));
    }
    if envelope.protocol() != A2aVersion::parse(&envelope.version) {
        return Err("protocol() is not the parse of the version".into());
    }
    let forwarded = envelope.forward_headers(envelope.protocol().unwrap_or(A2aVersion::V1_0));
    for (name, value) in &forwarded {
        if HeaderValue::from_str(value).is_err() {
            return Err(format!(
                "forwarded header {name}: {value:?} is not a header value"
            ));
        }
    }
    let trace_from_caller = headers
        .get("traceparent")
        .and_then(|v| v.to_str().ok())
        .and_then(TraceParent::parse)
        .is_some();
    Ok(format!(
        "version {:?} trace {} request id {} bearer {}",
        envelope.protocol(),
        if trace_from_caller { "caller" } else { "root" },
        if envelope.request_id_from_caller {
            "caller"
        } else {
            "fresh"
        },
        token.is_some(),
    ))
}

fn check_trace(text: &str) -> Result<(), Broken> {
    let Some(parsed) = TraceParent::parse(text) else {
        return Ok(());
    };
    let hex = |s: &str, len: usize| {
        s.len() == len
            && s.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            && s.bytes().any(|b| b != b'0')
    };
    if !hex(&parsed.trace_id, 32) || !hex(&parsed.span_id, 16) {
        return Err(format!("traceparent {text:?} parsed to bad ids {parsed:?}"));
    }
    let header = parsed.to_header();
    match TraceParent::parse(&header) {
        Some(again) if again == parsed => Ok(()),
        other => Err(format!(
            "traceparent {text:?} renders to {header:?}, which parses to {other:?}"
        )),
    }
}

fn check_version(text: &str) -> Result<(), Broken> {
    match A2aVersion::parse(text) {
        Some(version) if A2aVersion::parse(version.as_str()) != Some(version) => Err(format!(
            "version {text:?} is {version:?}, whose as_str does not read back"
        )),
        _ => Ok(()),
    }
}

/// Header lines: the envelope's names with values shaped like theirs.
fn generate(_seeds: &[Vec<u8>]) -> BoxedStrategy<Vec<u8>> {
    let value = prop_oneof![
        "00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}",
        "[0-9a-fA-F-]{0,60}",
        "[0-9]{1,3}(\\.[0-9]{1,3}){0,3}",
        " *(Bearer|bearer|Basic)? +[ -~]{0,20}",
        "[ -~]{0,140}",
        any::<String>(),
    ];
    let line = (any::<proptest::sample::Index>(), value)
        .prop_map(|(name, value)| format!("{}: {value}", name.get(NAMES)));
    vec(line, 0..8)
        .prop_map(|lines| lines.join("\n").into_bytes())
        .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_envelope_is_the_callers() {
        let input = b"a2a-version: 1.0\nx-request-id: r1\ntraceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\nauthorization: Bearer t\n";
        assert_eq!(
            run(input),
            Ok("version Some(V1_0) trace caller request id caller bearer true".to_string())
        );
    }
}
