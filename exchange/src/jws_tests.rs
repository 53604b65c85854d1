use super::*;

fn jwks(key: &SigningKey) -> JwkSet {
    serde_json::from_value(json!({"keys": [key.public_jwk()]})).expect("a JWKS")
}

fn card() -> Value {
    json!({
        "name": "VendorCorp",
        "description": "Orders — ünïcode and \"quotes\"",
        "version": "1.0.0",
        "skills": [{"id": "orders.query", "tags": ["b", "a"]}],
        "capabilities": {"streaming": true},
    })
}

#[test]
fn a_signed_card_verifies_and_any_change_fails() {
    let key = SigningKey::generate("k1").expect("key");
    let mut signed = card();
    key.sign_card(&mut signed, "http://127.0.0.1:1/.well-known/jwks.json")
        .expect("signed");
    assert_eq!(
        key_url(&signed).as_deref(),
        Some("http://127.0.0.1:1/.well-known/jwks.json")
    );
    assert_eq!(
        verify_card(&signed, &jwks(&key)),
        CardSignature::Verified { kid: "k1".into() }
    );
    // Member order does not matter (the canonical form sorts them) ...
    let reordered: Value =
        serde_json::from_str(&serde_json::to_string_pretty(&signed).expect("json")).expect("json");
    assert!(matches!(
        verify_card(&reordered, &jwks(&key)),
        CardSignature::Verified { .. }
    ));
    // ... a changed member does.
    let mut tampered = signed.clone();
    tampered["description"] = json!("Orders, cheaper");
    assert_eq!(
        verify_card(&tampered, &jwks(&key)),
        CardSignature::Failed {
            why: "the signature does not match the card".into()
        }
    );
    // Another key with the same kid does not verify it either.
    let impostor = SigningKey::generate("k1").expect("key");
    assert!(matches!(
        verify_card(&signed, &jwks(&impostor)),
        CardSignature::Failed { .. }
    ));
    // A key the JWKS lacks is named as such.
    let other = SigningKey::generate("k2").expect("key");
    assert_eq!(
        verify_card(&signed, &jwks(&other)),
        CardSignature::Failed {
            why: "the signer's keys do not include `k1`".into()
        }
    );
    assert_eq!(verify_card(&card(), &jwks(&key)), CardSignature::Unsigned);
}

#[test]
fn a_stored_key_signs_like_the_one_it_was() {
    let key = SigningKey::generate("k1").expect("key");
    let again = SigningKey::from_pkcs8("k1", key.pkcs8()).expect("key");
    assert_eq!(again.public_jwk(), key.public_jwk());
    let mut signed = card();
    again
        .sign_card(&mut signed, "http://x/jwks")
        .expect("signed");
    assert!(matches!(
        verify_card(&signed, &jwks(&key)),
        CardSignature::Verified { .. }
    ));
}

#[test]
fn shared_secrets_and_unsigned_algorithms_never_verify() {
    let hs = serde_json::from_value::<Jwk>(json!({"kty": "oct", "k": "c2VjcmV0", "kid": "s"}))
        .expect("jwk");
    assert!(verification_key(&hs).is_none());
    let key = SigningKey::generate("k1").expect("key");
    let mut signed = card();
    key.sign_card(&mut signed, "http://x/jwks").expect("signed");
    let none = B64.encode(r#"{"alg":"none","kid":"k1"}"#);
    signed["signatures"][0]["protected"] = json!(none);
    assert_eq!(
        verify_card(&signed, &jwks(&key)),
        CardSignature::Failed {
            why: "the signature's alg is not accepted".into()
        }
    );
}
