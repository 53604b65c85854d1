//! JOSE, as both sides use it: which keys of a JWKS verify what, and the
//! signatures of agent cards (A2A v1.0 §8.4).
//!
//! An agent card is signed as a detached JWS (RFC 7515): the payload is the
//! card's RFC 8785 canonical form (JCS) *without* its `signatures` member,
//! and the card carries each signature as `{"protected", "signature"}`
//! (base64url, the protected header holding `alg`, `kid` and, here, `jku`:
//! where the signer publishes its JWKS). So a verifier takes the card it
//! received, removes `signatures`, canonicalizes it, and checks
//! `protected + "." + base64url(canonical)` against the key `kid` names.
//!
//! Keys that sign here are Ed25519 (`alg: EdDSA`), generated with ring. Keys
//! that verify may be any asymmetric JWK: RSA (RS/PS 256–512), P-256
//! (ES256), P-384 (ES384) or Ed25519 (EdDSA); never a shared secret, never
//! `alg: none`.

use base64::Engine;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, JwkSet, KeyAlgorithm};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey};
use serde_json::{json, Value};

/// Where a signer publishes its JWKS (the hub, a reference peer), and where
/// a card's verifier looks when a signature names no `jku`.
pub const JWKS_PATH: &str = "/.well-known/jwks.json";

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// A key that verifies signatures, and the algorithms it may verify.
#[derive(Clone)]
pub struct VerificationKey {
    /// Its `kid`, if the JWK has one.
    pub kid: Option<String>,
    /// The key.
    pub decoding: DecodingKey,
    /// Its type's algorithms, or the one its JWK names.
    pub algorithms: Vec<Algorithm>,
}

impl std::fmt::Debug for VerificationKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerificationKey")
            .field("kid", &self.kid)
            .field("algorithms", &self.algorithms)
            .finish_non_exhaustive()
    }
}

/// The verification key of a JWK, or `None` for one that does not verify
/// signatures here: an encryption key, a shared secret, an unknown curve, a
/// JWK whose `alg` does not fit its type.
pub fn verification_key(jwk: &Jwk) -> Option<VerificationKey> {
    use jsonwebtoken::jwk::PublicKeyUse;
    if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
        return None;
    }
    let by_type = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => vec![
            Algorithm::RS256,
            Algorithm::RS384,
            Algorithm::RS512,
            Algorithm::PS256,
            Algorithm::PS384,
            Algorithm::PS512,
        ],
        AlgorithmParameters::EllipticCurve(ec) => match ec.curve {
            EllipticCurve::P256 => vec![Algorithm::ES256],
            EllipticCurve::P384 => vec![Algorithm::ES384],
            _ => return None,
        },
        AlgorithmParameters::OctetKeyPair(okp) if okp.curve == EllipticCurve::Ed25519 => {
            vec![Algorithm::EdDSA]
        }
        // A shared secret cannot prove who signed.
        AlgorithmParameters::OctetKey(_) | AlgorithmParameters::OctetKeyPair(_) => return None,
    };
    let algorithms = match jwk.common.key_algorithm.and_then(signature_algorithm) {
        Some(alg) if by_type.contains(&alg) => vec![alg],
        Some(_) => return None,
        None if jwk.common.key_algorithm.is_some() => return None,
        None => by_type,
    };
    let decoding = DecodingKey::from_jwk(jwk).ok()?;
    Some(VerificationKey {
        kid: jwk.common.key_id.clone(),
        decoding,
        algorithms,
    })
}

/// The signature algorithm a JWK's `alg` names, if it names one.
fn signature_algorithm(alg: KeyAlgorithm) -> Option<Algorithm> {
    Some(match alg {
        KeyAlgorithm::RS256 => Algorithm::RS256,
        KeyAlgorithm::RS384 => Algorithm::RS384,
        KeyAlgorithm::RS512 => Algorithm::RS512,
        KeyAlgorithm::PS256 => Algorithm::PS256,
        KeyAlgorithm::PS384 => Algorithm::PS384,
        KeyAlgorithm::PS512 => Algorithm::PS512,
        KeyAlgorithm::ES256 => Algorithm::ES256,
        KeyAlgorithm::ES384 => Algorithm::ES384,
        KeyAlgorithm::EdDSA => Algorithm::EdDSA,
        _ => return None,
    })
}

/// Why a key could not be made or a card not signed.
#[derive(Debug, thiserror::Error)]
pub enum SignError {
    /// ring could not generate or read the key.
    #[error("the signing key is unusable: {0}")]
    Key(String),
    /// The card has no canonical form (it is not a JSON object).
    #[error("the card cannot be canonicalized: {0}")]
    Canonical(String),
    /// Signing failed.
    #[error("signing failed: {0}")]
    Sign(#[from] jsonwebtoken::errors::Error),
}

/// An Ed25519 key that signs (cards, checkpoints), with its `kid`.
#[derive(Clone)]
pub struct SigningKey {
    kid: String,
    pkcs8: Vec<u8>,
    public: Vec<u8>,
    encoding: EncodingKey,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey")
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// A new random key.
    pub fn generate(kid: impl Into<String>) -> Result<Self, SignError> {
        let rng = ring::rand::SystemRandom::new();
        let pkcs8 = ring::signature::Ed25519KeyPair::generate_pkcs8(&rng)
            .map_err(|e| SignError::Key(e.to_string()))?;
        Self::from_pkcs8(kid, pkcs8.as_ref())
    }

    /// The key stored as PKCS#8 DER.
    pub fn from_pkcs8(kid: impl Into<String>, pkcs8: &[u8]) -> Result<Self, SignError> {
        use ring::signature::KeyPair;
        let pair = ring::signature::Ed25519KeyPair::from_pkcs8_maybe_unchecked(pkcs8)
            .map_err(|e| SignError::Key(e.to_string()))?;
        Ok(Self {
            kid: kid.into(),
            pkcs8: pkcs8.to_vec(),
            public: pair.public_key().as_ref().to_vec(),
            encoding: EncodingKey::from_ed_der(pkcs8),
        })
    }

    /// Its key id.
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// Its PKCS#8 DER, for the signer's own store only.
    pub fn pkcs8(&self) -> &[u8] {
        &self.pkcs8
    }

    /// Its public half as a JWK (`kty: OKP`, `crv: Ed25519`).
    pub fn public_jwk(&self) -> Value {
        json!({
            "kty": "OKP",
            "crv": "Ed25519",
            "x": B64.encode(&self.public),
            "kid": self.kid,
            "alg": "EdDSA",
            "use": "sig",
        })
    }

    /// A compact detached signature of `payload` with `header`'s members
    /// added to `{"alg": "EdDSA", "kid"}`: `(protected, signature)`,
    /// both base64url.
    pub fn sign_detached(
        &self,
        header: Value,
        payload: &[u8],
    ) -> Result<(String, String), SignError> {
        let mut protected = json!({"alg": "EdDSA", "kid": self.kid});
        if let (Some(p), Value::Object(extra)) = (protected.as_object_mut(), header) {
            p.extend(extra);
        }
        let protected = B64.encode(protected.to_string());
        let input = format!("{protected}.{}", B64.encode(payload));
        let signature =
            jsonwebtoken::crypto::sign(input.as_bytes(), &self.encoding, Algorithm::EdDSA)?;
        Ok((protected, signature))
    }

    /// Signs `card` in place: any `signatures` it had are replaced by this
    /// key's, whose protected header names `jku` (where the JWKS is).
    pub fn sign_card(&self, card: &mut Value, jku: &str) -> Result<(), SignError> {
        let payload = canonical_unsigned(card)?;
        let (protected, signature) = self.sign_detached(json!({"jku": jku}), &payload)?;
        if let Some(obj) = card.as_object_mut() {
            obj.insert(
                "signatures".into(),
                json!([{"protected": protected, "signature": signature}]),
            );
        }
        Ok(())
    }
}

/// The card's canonical form (RFC 8785) without its `signatures`: what a
/// card signature covers.
pub fn canonical_unsigned(card: &Value) -> Result<Vec<u8>, SignError> {
    let Value::Object(obj) = card else {
        return Err(SignError::Canonical("a card is a JSON object".into()));
    };
    let mut unsigned = obj.clone();
    unsigned.remove("signatures");
    serde_json_canonicalizer::to_vec(&Value::Object(unsigned))
        .map_err(|e| SignError::Canonical(e.to_string()))
}

/// What a card's signatures say.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum CardSignature {
    /// The card carries no signature.
    #[default]
    Unsigned,
    /// A signature verifies with the key `kid` of the signer's JWKS.
    Verified {
        /// The key that verified it.
        kid: String,
    },
    /// It carries signatures and none verifies: why (of the first).
    Failed {
        /// What went wrong, in words an operator reads.
        why: String,
    },
}

/// One signature's protected header, as far as a verifier reads it.
#[derive(Debug, serde::Deserialize)]
struct Protected {
    alg: String,
    #[serde(default)]
    kid: Option<String>,
    #[serde(default)]
    jku: Option<String>,
}

fn protected_of(signature: &Value) -> Option<Protected> {
    let raw = B64.decode(signature.get("protected")?.as_str()?).ok()?;
    serde_json::from_slice(&raw).ok()
}

/// The JWKS URL the card's first signature names (`jku`), if any.
pub fn key_url(card: &Value) -> Option<String> {
    let first = card.get("signatures")?.as_array()?.first()?;
    protected_of(first)?.jku
}

/// Checks `card`'s signatures against the signer's `keys`: verified when
/// any signature verifies with the key its `kid` names.
pub fn verify_card(card: &Value, keys: &JwkSet) -> CardSignature {
    let signatures = match card.get("signatures") {
        None | Some(Value::Null) => return CardSignature::Unsigned,
        Some(Value::Array(list)) if list.is_empty() => return CardSignature::Unsigned,
        Some(Value::Array(list)) => list,
        Some(_) => {
            return CardSignature::Failed {
                why: "`signatures` is not a list".into(),
            }
        }
    };
    let payload = match canonical_unsigned(card) {
        Ok(p) => B64.encode(p),
        Err(e) => return CardSignature::Failed { why: e.to_string() },
    };
    let mut first_failure = None;
    for signature in signatures {
        match verify_one(signature, &payload, keys, "the card") {
            Ok(kid) => return CardSignature::Verified { kid },
            Err(why) => {
                first_failure.get_or_insert(why);
            }
        }
    }
    CardSignature::Failed {
        why: first_failure.unwrap_or_else(|| "no signature verifies".into()),
    }
}

/// Checks a compact detached JWS (`protected..signature`, RFC 7515
/// appendix F) over `payload` against `keys`: the `kid` that verified it,
/// or why it does not verify (`what` names the signed thing in that
/// sentence). What a trail checkpoint carries.
pub fn verify_detached(
    jws: &str,
    payload: &[u8],
    keys: &JwkSet,
    what: &str,
) -> Result<String, String> {
    let (protected, signature) = jws
        .split_once("..")
        .filter(|(p, s)| !p.contains('.') && !s.contains('.'))
        .ok_or("not a detached JWS (`protected..signature`)")?;
    let signature = json!({"protected": protected, "signature": signature});
    verify_one(&signature, &B64.encode(payload), keys, what)
}

fn verify_one(
    signature: &Value,
    payload: &str,
    keys: &JwkSet,
    what: &str,
) -> Result<String, String> {
    let protected_b64 = signature
        .get("protected")
        .and_then(Value::as_str)
        .ok_or("a signature has no `protected` header")?;
    let sig = signature
        .get("signature")
        .and_then(Value::as_str)
        .ok_or("a signature has no `signature`")?;
    let protected = protected_of(signature).ok_or("the protected header is not JSON")?;
    let alg: Algorithm = match protected.alg.parse() {
        Ok(Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512) | Err(_) => {
            return Err("the signature's alg is not accepted".into())
        }
        Ok(alg) => alg,
    };
    let kid = protected.kid.ok_or("the signature names no key (kid)")?;
    let key = keys
        .keys
        .iter()
        .filter(|k| k.common.key_id.as_deref() == Some(kid.as_str()))
        .find_map(verification_key)
        .ok_or_else(|| {
            format!(
                "the signer's keys do not include `{}`",
                crate::text::clip(&kid, 64)
            )
        })?;
    if !key.algorithms.contains(&alg) {
        return Err("the signature's alg does not fit its key".into());
    }
    let input = format!("{protected_b64}.{payload}");
    match jsonwebtoken::crypto::verify(sig, input.as_bytes(), &key.decoding, alg) {
        Ok(true) => Ok(kid),
        Ok(false) | Err(_) => Err(format!("the signature does not match {what}")),
    }
}

#[cfg(test)]
#[path = "jws_tests.rs"]
mod tests;
