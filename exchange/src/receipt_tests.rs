use super::*;
use jsonwebtoken::jwk::JwkSet;

fn receipt() -> Receipt {
    Receipt {
        form: TYPE.into(),
        id: "rcpt-1".into(),
        issuer: "http://127.0.0.1:3000".into(),
        issued_at: "2026-12-07T18:00:00.000Z".into(),
        caller: "buyercorp".into(),
        provider: "vendorcorp".into(),
        capability: "orders.query".into(),
        method: "SendMessage".into(),
        request_id: "req-1".into(),
        trace_id: "0af7651916cd43dd8448eb211c80319c".into(),
        outcome: Outcome::Connected,
        reason: None,
        request: Some(digest(&json!({"group_by": "region"})).unwrap()),
        answer: Some(digest(&json!({"row_count": 624})).unwrap()),
        task: None,
        terms: Terms {
            registry: "ab".repeat(32),
            contract: None,
        },
        trail: TrailRef {
            chain: "hub".into(),
            record: "cd".repeat(32),
        },
        provider_signature: None,
    }
}

fn keys(key: &SigningKey) -> JwkSet {
    serde_json::from_value(json!({"keys": [key.public_jwk()]})).unwrap()
}

#[test]
fn a_digest_is_of_the_canonical_form() {
    // RFC 8785: members sorted, no spaces, 1.0 written as 1.
    let a = digest(&json!({"b": 1, "a": [1.0, "x"]})).unwrap();
    assert_eq!(a, crate::wire::text_digest(r#"{"a":[1,"x"],"b":1}"#));
    assert_eq!(a, digest(&json!({"a": [1, "x"], "b": 1})).unwrap());
    assert_ne!(a, digest(&json!({"a": [1, "x"], "b": 2})).unwrap());
}

#[test]
fn a_signed_receipt_verifies_and_reads_back() {
    let key = SigningKey::generate("k1").unwrap();
    let jws = receipt()
        .sign(&key, "http://127.0.0.1:3000/.well-known/jwks.json")
        .unwrap();
    let (read, kid) = verify(&jws, &keys(&key)).unwrap();
    assert_eq!(read, receipt());
    assert_eq!(kid, "k1");
    assert_eq!(claims(&jws).unwrap(), receipt());
    // The payload is the claims' canonical form, byte for byte.
    let payload = B64.decode(jws.split('.').nth(1).unwrap()).unwrap();
    let claims = serde_json::to_value(receipt()).unwrap();
    assert_eq!(payload, serde_json_canonicalizer::to_vec(&claims).unwrap());
    let header: Value =
        serde_json::from_slice(&B64.decode(jws.split('.').next().unwrap()).unwrap()).unwrap();
    assert_eq!(header["typ"], JWS_TYP);
    assert_eq!(header["alg"], "EdDSA");
}

#[test]
fn a_changed_byte_or_another_key_fails() {
    let key = SigningKey::generate("k1").unwrap();
    let jws = receipt().sign(&key, "jku").unwrap();
    // Another provider named in the claims, the signature kept.
    let mut forged = receipt();
    forged.provider = "helpdesk".into();
    let forged_payload = B64
        .encode(serde_json_canonicalizer::to_vec(&serde_json::to_value(&forged).unwrap()).unwrap());
    let mut parts: Vec<&str> = jws.split('.').collect();
    parts[1] = &forged_payload;
    let e = verify(&parts.join("."), &keys(&key)).unwrap_err();
    assert!(matches!(e, ReceiptError::Signature(_)), "{e}");
    // One character of the signature changed.
    let mut bytes = jws.clone().into_bytes();
    let last = bytes.len() - 2;
    bytes[last] = if bytes[last] == b'A' { b'B' } else { b'A' };
    let e = verify(&String::from_utf8(bytes).unwrap(), &keys(&key)).unwrap_err();
    assert!(matches!(e, ReceiptError::Signature(_)), "{e}");
    // A key of the same kid that is not the signer's.
    let other = SigningKey::generate("k1").unwrap();
    assert!(verify(&jws, &keys(&other)).is_err());
}

#[test]
fn what_is_not_a_receipt_is_named() {
    let key = SigningKey::generate("k1").unwrap();
    for (bad, says) in [("a.b", "three parts"), ("a.!!.c", "not base64url")] {
        let e = verify(bad, &keys(&key)).unwrap_err().to_string();
        assert!(e.contains(says), "{bad}: {e}");
    }
    // Signed, but not a receipt's claims.
    let (protected, signature) = key
        .sign_detached(json!({"typ": JWS_TYP}), br#"{"type":"other"}"#)
        .unwrap();
    let jws = format!(
        "{protected}.{}.{signature}",
        B64.encode(br#"{"type":"other"}"#)
    );
    let e = verify(&jws, &keys(&key)).unwrap_err().to_string();
    assert!(e.contains("claims"), "{e}");
}

#[test]
fn a_providers_answer_signature_verifies_for_that_answer_only() {
    let key = SigningKey::generate("vendorcorp-1").unwrap();
    let answer = json!({"row_count": 624, "groups": [{"key": "NA", "count": 148}]});
    let jws = sign_answer(&key, "http://127.0.0.1:3101/.well-known/jwks.json", &answer).unwrap();
    assert!(jws.contains(".."), "detached: {jws}");
    // Member order and number spelling do not matter, the values do.
    let same = json!({"groups": [{"count": 148.0, "key": "NA"}], "row_count": 624});
    assert_eq!(
        verify_answer(&jws, &same, &keys(&key)).unwrap(),
        "vendorcorp-1"
    );
    let other = json!({"row_count": 625, "groups": [{"key": "NA", "count": 148}]});
    assert!(verify_answer(&jws, &other, &keys(&key)).is_err());
    let stranger = SigningKey::generate("vendorcorp-1").unwrap();
    assert!(verify_answer(&jws, &answer, &keys(&stranger)).is_err());
}
