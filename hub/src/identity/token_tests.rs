use base64::Engine;

use super::*;

fn jwt(header: &str, claims: &str) -> String {
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    format!("{}.{}.sig", b64.encode(header), b64.encode(claims))
}

fn member_topology() -> Loaded {
    let text = include_str!("../../../config/topology.yaml").replace(
        "    token_env: WS_TOKEN_BUYERCORP",
        "    token_env: WS_TOKEN_BUYERCORP\n    oidc:\n      issuer: http://idp.example\n      client_ids: [buyer-app]",
    );
    match crate::registry::load::load_str("t.yaml", &text) {
        Ok(loaded) => loaded,
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn a_peek_reads_only_a_jws_compact_jwt() {
    let token = jwt(
        r#"{"alg":"RS256","kid":"k1"}"#,
        r#"{"iss":"http://idp.example"}"#,
    );
    let peek = Peek::of(&token).expect("a JWT");
    assert_eq!(peek.issuer, "http://idp.example");
    assert_eq!(peek.kid.as_deref(), Some("k1"));
    for not_a_jwt in [
        "a-static-token",
        "a.b",
        "a.b.c.d",
        "...",
        &jwt("not json", r#"{"iss":"x"}"#),
        &jwt(r#"{"alg":"RS256"}"#, r#"{"no_iss":1}"#),
    ] {
        assert_eq!(Peek::of(not_a_jwt), None, "{not_a_jwt}");
    }
}

#[test]
fn unsigned_and_shared_secret_tokens_are_refused_before_any_key_is_looked_up() {
    let registry = member_topology();
    let keys = IssuerKeys::default();
    let claims = r#"{"iss":"http://idp.example","client_id":"buyer-app","exp":9999999999}"#;
    for (alg, shown) in [
        ("none", "none"),
        ("HS256", "HS256"),
        ("RS999 with-space", "RS999with-space"),
    ] {
        let header = format!(r#"{{"alg":"{alg}"}}"#);
        let err = verify(
            &jwt(&header, claims),
            &registry,
            &keys,
            &["http://hub".to_string()],
        )
        .expect_err("refused");
        assert_eq!(err.reason, ReasonCode::AuthRejected);
        assert_eq!(
            err.detail,
            format!("the access token's alg `{shown}` is not accepted")
        );
    }
}

#[test]
fn a_token_of_an_issuer_no_member_names_or_without_cached_keys_is_refused() {
    let registry = member_topology();
    let keys = IssuerKeys::default();
    let other = jwt(r#"{"alg":"RS256"}"#, r#"{"iss":"http://elsewhere"}"#);
    let err = verify(&other, &registry, &keys, &["http://hub".to_string()]).expect_err("refused");
    assert_eq!(
        err.detail,
        "no member system trusts the access token's issuer"
    );
    let member = jwt(
        r#"{"alg":"RS256","kid":"k"}"#,
        r#"{"iss":"http://idp.example"}"#,
    );
    let err = verify(&member, &registry, &keys, &["http://hub".to_string()]).expect_err("refused");
    assert_eq!(
        err.detail,
        "the issuer's keys do not include the access token's key"
    );
    assert!(!err.detail.contains(&member));
}
