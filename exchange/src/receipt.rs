//! Receipts: what the hub signs for every exchange that crossed it, so
//! that both parties (and anyone they show it to) can later prove what was
//! asked, what came back, and under which terms, without trusting either
//! party's own trail.
//!
//! **The form.** A receipt is a compact JWS (RFC 7515) whose payload is the
//! receipt's claims ([`Receipt`]) in their RFC 8785 canonical form (JCS),
//! signed with the hub's Ed25519 key: the protected header is
//! `{"alg": "EdDSA", "kid", "jku", "typ": "wall-street-receipt+jws"}`,
//! `jku` the hub's JWKS (`/.well-known/jwks.json`, the keys its cards are
//! signed with). Any JOSE library verifies it offline against that JWKS
//! (`jose`'s `compactVerify`, `joserfc`'s `jws.deserialize_compact`); the
//! payload it returns is the claims.
//!
//! **The digests.** A digest is SHA-256 of a JSON value's JCS form, as 64
//! lower-case hex digits ([`digest`]):
//! - `request`: the capability input as the hub forwarded it;
//! - `answer`: the capability result as delivered: an A2A answer's data
//!   part (`data`), an MCP tool result without its `_meta` member, the
//!   `result` member of a `/gateway/v1` answer;
//! - `trail.record`: the digest of the hub's own trail record of the
//!   exchange ([`crate::audit::chain`]), which an export of the trail
//!   shows for every record of the segment: a receipt is found in the
//!   chain by it.
//!
//! **Where a party finds it.** On the answer itself: A2A message or task
//! metadata under [`EXTENSION_URI`] (the cards list the extension), an
//! MCP result's `_meta` under the same key, the [`HEADER`] of a
//! `/gateway/v1` answer; and by id from the hub, which shows a party only
//! the receipts of exchanges it was the caller or the provider of.

use base64::Engine;
use jsonwebtoken::jwk::JwkSet;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::audit::Outcome;
use crate::jws::{SignError, SigningKey};
use crate::reason::ReasonCode;

/// The A2A extension a receipt rides under: the key of an answer's
/// metadata (and of an MCP result's `_meta`) that holds it, and the URI
/// the cards list in `capabilities.extensions`.
pub const EXTENSION_URI: &str = "https://wall-street.exchange/extensions/receipts/v1";

/// The key of a provider's answer metadata that holds its own signature of
/// the answer: a detached compact JWS (`protected..signature`, RFC 7515
/// appendix F) over the capability result's RFC 8785 form, made with a key
/// of the JWKS its agent card is signed with (the header's `kid`, `jku`).
pub const ANSWER_SIGNATURE_KEY: &str =
    "https://wall-street.exchange/extensions/receipts/v1/answer-signature";

/// Where a party reads its receipts back at the hub: `{PATH}/{id}`, or
/// `{PATH}?request_id=X`.
pub const PATH: &str = "/receipts/v1";

/// The header of a `/gateway/v1` answer that carries its receipt.
pub const HEADER: &str = "wall-street-receipt";

/// The `type` claim of every receipt of this form.
pub const TYPE: &str = "wall-street-receipt/1";

/// The `typ` of a receipt's protected header.
pub const JWS_TYP: &str = "wall-street-receipt+jws";

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// What a receipt says: one exchange that crossed the hub.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Receipt {
    /// [`TYPE`].
    #[serde(rename = "type")]
    pub form: String,
    /// The receipt's id: what a party asks the hub for.
    pub id: String,
    /// The hub that issued it (its public origin).
    pub issuer: String,
    /// When (RFC 3339, UTC).
    pub issued_at: String,
    /// The calling system.
    pub caller: String,
    /// The providing system.
    pub provider: String,
    /// The capability (or the task operation) the exchange was.
    pub capability: String,
    /// What the exchange ran as: the A2A method (`SendMessage` for a
    /// `/gateway/v1` call too, which runs as one), a task operation
    /// (`GetTask`, …), or `tools/call`.
    pub method: String,
    /// The envelope's request id.
    pub request_id: String,
    /// The envelope's trace id.
    pub trace_id: String,
    /// What became of it.
    pub outcome: Outcome,
    /// The reason code of a refusal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<ReasonCode>,
    /// The digest of the input as forwarded, when the exchange carried one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
    /// The digest of the capability result as delivered, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// The task the answer is, and the state it was in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskState>,
    /// The terms the exchange ran under.
    pub terms: Terms,
    /// Where the exchange is in the hub's trail.
    pub trail: TrailRef,
    /// The provider's own signature of the answer, as it sent it, once the
    /// hub has verified it against the keys the provider's card is signed
    /// with: what proves what the provider said, not only what the hub
    /// relayed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_signature: Option<ProviderSignature>,
}

/// A provider's signature of the answer ([`ANSWER_SIGNATURE_KEY`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderSignature {
    /// The detached compact JWS, as the provider sent it.
    pub jws: String,
    /// The key of the provider's JWKS that verified it.
    pub kid: String,
}

/// A task and its state, as the answer showed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskState {
    pub id: String,
    /// The A2A state (`TASK_STATE_COMPLETED`, ...).
    pub state: String,
}

/// The terms an exchange ran under.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Terms {
    /// SHA-256 of the registry the hub decided the call under (the text of
    /// its topology file): its rules and contracts, one generation.
    pub registry: String,
    /// The digest of the capability's contract in that registry (its
    /// response and input schemas and its data contract), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract: Option<String>,
}

/// A record of the hub's trail, by its digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrailRef {
    /// The chain (`hub`).
    pub chain: String,
    /// The record's digest ([`crate::audit::chain::Content::digest`]).
    pub record: String,
}

/// Why a receipt is not one.
#[derive(Debug, thiserror::Error)]
pub enum ReceiptError {
    /// Not three base64url parts, or its payload or header is not JSON.
    #[error("not a receipt: {0}")]
    Malformed(String),
    /// The claims are not a receipt of this form.
    #[error("the receipt's claims are not a {TYPE}: {0}")]
    Claims(String),
    /// No key of the JWKS verifies its signature.
    #[error("the receipt's signature does not verify: {0}")]
    Signature(String),
    /// A value has no canonical form.
    #[error("no canonical form: {0}")]
    Canonical(String),
    /// Signing failed.
    #[error(transparent)]
    Sign(#[from] SignError),
}

/// SHA-256 of `value`'s RFC 8785 form, as 64 lower-case hex digits.
pub fn digest(value: &Value) -> Result<String, ReceiptError> {
    let canonical = serde_json_canonicalizer::to_vec(value)
        .map_err(|e| ReceiptError::Canonical(e.to_string()))?;
    Ok(crate::wire::bytes_digest(&canonical))
}

impl Receipt {
    /// Signs the receipt with `key`, naming `jku` as where its JWKS is:
    /// the compact JWS a party keeps.
    pub fn sign(&self, key: &SigningKey, jku: &str) -> Result<String, ReceiptError> {
        let claims = serde_json::to_value(self).map_err(|e| ReceiptError::Claims(e.to_string()))?;
        let payload = serde_json_canonicalizer::to_vec(&claims)
            .map_err(|e| ReceiptError::Canonical(e.to_string()))?;
        let (protected, signature) =
            key.sign_detached(json!({"jku": jku, "typ": JWS_TYP}), &payload)?;
        Ok(format!("{protected}.{}.{signature}", B64.encode(&payload)))
    }
}

/// A provider's signature of `answer` ([`ANSWER_SIGNATURE_KEY`]): a detached
/// compact JWS naming `jku`, where the provider's JWKS is.
pub fn sign_answer(key: &SigningKey, jku: &str, answer: &Value) -> Result<String, ReceiptError> {
    let payload = serde_json_canonicalizer::to_vec(answer)
        .map_err(|e| ReceiptError::Canonical(e.to_string()))?;
    let (protected, signature) = key.sign_detached(json!({"jku": jku}), &payload)?;
    Ok(format!("{protected}..{signature}"))
}

/// Checks a provider's signature of `answer` against its `keys`: the `kid`
/// that verified it, or why not.
pub fn verify_answer(jws: &str, answer: &Value, keys: &JwkSet) -> Result<String, String> {
    let payload = serde_json_canonicalizer::to_vec(answer).map_err(|e| e.to_string())?;
    crate::jws::verify_detached(jws, &payload, keys, "the answer")
}

/// A receipt's claims, read without checking its signature (what a party
/// looks at before it has the keys).
pub fn claims(jws: &str) -> Result<Receipt, ReceiptError> {
    let (_, payload, _) = parts(jws)?;
    read_claims(&payload)
}

/// Checks `jws`'s signature against `keys` and reads its claims: the
/// receipt, and the `kid` that verified it.
pub fn verify(jws: &str, keys: &JwkSet) -> Result<(Receipt, String), ReceiptError> {
    let (protected, payload, signature) = parts(jws)?;
    let kid = crate::jws::verify_detached(
        &format!("{protected}..{signature}"),
        &payload,
        keys,
        "the receipt",
    )
    .map_err(ReceiptError::Signature)?;
    Ok((read_claims(&payload)?, kid))
}

/// The three parts of a compact JWS, its payload decoded.
fn parts(jws: &str) -> Result<(&str, Vec<u8>, &str), ReceiptError> {
    let mut it = jws.trim().split('.');
    let (Some(protected), Some(payload), Some(signature), None) =
        (it.next(), it.next(), it.next(), it.next())
    else {
        return Err(ReceiptError::Malformed(
            "a compact JWS has three parts separated by `.`".into(),
        ));
    };
    let payload = B64
        .decode(payload)
        .map_err(|e| ReceiptError::Malformed(format!("the payload is not base64url: {e}")))?;
    Ok((protected, payload, signature))
}

fn read_claims(payload: &[u8]) -> Result<Receipt, ReceiptError> {
    let receipt: Receipt =
        serde_json::from_slice(payload).map_err(|e| ReceiptError::Claims(e.to_string()))?;
    if receipt.form != TYPE {
        return Err(ReceiptError::Claims(format!(
            "`type` is `{}`, not `{TYPE}`",
            crate::text::clip(&receipt.form, 64)
        )));
    }
    Ok(receipt)
}

/// Where `receipt`'s record is in an export of the issuer's trail
/// ([`crate::audit::export`], already verified): the record's seq. The
/// export must be of the receipt's chain and hold a line of its record's
/// digest; where the line shows the record in full (the counterparty's own
/// records), its parties, capability, ids and outcome must be the
/// receipt's.
pub fn locate(
    receipt: &Receipt,
    chain: &str,
    lines: &[crate::audit::export::Line],
) -> Result<i64, String> {
    if receipt.trail.chain != chain {
        return Err(format!(
            "the receipt is of chain `{}`, the export of `{chain}`",
            receipt.trail.chain
        ));
    }
    let line = lines
        .iter()
        .find(|l| l.digest == receipt.trail.record)
        .ok_or_else(|| {
            format!(
                "no record of digest {} in the export (seq {}–{})",
                receipt.trail.record,
                lines.first().map_or(0, |l| l.seq),
                lines.last().map_or(0, |l| l.seq)
            )
        })?;
    if let Some(record) = &line.record {
        let outcome = serde_json::to_value(receipt.outcome).unwrap_or(Value::Null);
        let reason = serde_json::to_value(receipt.reason).unwrap_or(Value::Null);
        for (member, said) in [
            ("caller", json!(receipt.caller)),
            ("provider", json!(receipt.provider)),
            ("capability", json!(receipt.capability)),
            ("request_id", json!(receipt.request_id)),
            ("trace_id", json!(receipt.trace_id)),
            ("outcome", outcome),
            ("reason", reason),
        ] {
            if record.get(member) != Some(&said) {
                return Err(format!(
                    "the record at seq {} says {member} {}, the receipt {said}",
                    line.seq,
                    record.get(member).unwrap_or(&Value::Null)
                ));
            }
        }
    }
    Ok(line.seq)
}

/// The receipt an answer's metadata (or an MCP result's `_meta`) carries
/// under [`EXTENSION_URI`]: `{"id", "jws"}`.
pub fn metadata_entry(id: &str, jws: &str) -> Value {
    json!({"id": id, "jws": jws})
}

#[cfg(test)]
#[path = "receipt_tests.rs"]
mod tests;
