use super::*;
use crate::net::tls::ClientCertificate;
use axum::http::HeaderValue;
use std::net::SocketAddr;

fn topology(token_env: &str, mtls: bool) -> Loaded {
    let text = include_str!("../../config/topology.yaml")
        .replace("WS_TOKEN_BUYERCORP", token_env)
        .replace(
            "mtls: false",
            if mtls { "mtls: true" } else { "mtls: false" },
        );
    match crate::registry::load::load_str("t.yaml", &text) {
        Ok(l) => l,
        Err(e) => panic!("{e}"),
    }
}

fn headers(token: Option<&str>) -> HeaderMap {
    let mut h = HeaderMap::new();
    if let Some(t) = token {
        if let Ok(v) = HeaderValue::from_str(&format!("Bearer {t}")) {
            h.insert(AUTHORIZATION, v);
        }
    }
    h
}

fn check(t: &Loaded, caller: &str, ip: &str, token: Option<&str>) -> Result<(), NotConnected> {
    check_with(t, caller, ip, token, None)
}

fn check_with(
    t: &Loaded,
    caller: &str,
    ip: &str,
    token: Option<&str>,
    certificate: Option<ClientCertificate>,
) -> Result<(), NotConnected> {
    let h = headers(token);
    let addr: SocketAddr = format!("{ip}:40000").parse().expect("addr");
    AuthChain::standard().check(&AuthContext {
        caller,
        peer: &Peer {
            addr: Some(addr),
            certificate,
        },
        headers: &h,
        registry: t,
        identity: &Identity::default(),
        target: None,
    })
}

fn reason(r: Result<(), NotConnected>) -> Option<ReasonCode> {
    r.err().map(|e| e.reason)
}

#[test]
fn chain_order_is_ip_then_token_then_mtls() {
    assert_eq!(
        AuthChain::standard().layer_names(),
        ["ip_allowlist", "bearer_token", "mtls"]
    );
    let env = "WS_TOKEN_TEST_ORDER";
    std::env::set_var(env, "s3cret-order");
    let t = topology(env, false);
    // Wrong IP *and* wrong token: the IP layer speaks first.
    assert_eq!(
        reason(check(&t, "buyercorp", "10.1.2.3", Some("wrong"))),
        Some(ReasonCode::IpNotAllowed)
    );
    assert_eq!(
        reason(check(&t, "buyercorp", "127.0.0.1", Some("wrong"))),
        Some(ReasonCode::AuthRejected)
    );
    assert_eq!(
        reason(check(&t, "buyercorp", "127.0.0.1", Some("s3cret-order"))),
        None
    );
    // mTLS on and no certificate registered: an otherwise perfect
    // call is refused, with its own detail.
    let t = topology(env, true);
    let err = check(&t, "buyercorp", "127.0.0.1", Some("s3cret-order")).expect_err("refused");
    assert_eq!(err.reason, ReasonCode::AuthRejected);
    assert_eq!(
        err.detail,
        "mutual TLS is required and no client certificate is registered for buyercorp"
    );
    // ... but the earlier layers still run before it.
    assert_eq!(
        reason(check(&t, "buyercorp", "10.1.2.3", Some("s3cret-order"))),
        Some(ReasonCode::IpNotAllowed)
    );
}

/// The shipped topology with BuyerCorp's certificate registered as
/// `mtls` (a YAML flow mapping), the CA read from `dir`.
fn with_mtls(env: &str, dir: &std::path::Path, mtls: &str) -> Loaded {
    let text = include_str!("../../config/topology.yaml").replace(
        "    token_env: WS_TOKEN_BUYERCORP",
        &format!("    mtls: {mtls}\n    token_env: {env}"),
    );
    let file = dir.join("topology.yaml");
    match crate::registry::load::load_str(&file.display().to_string(), &text) {
        Ok(l) => l,
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn the_mtls_layer_knows_a_member_by_its_pinned_key_or_its_ca() {
    let dir = tempfile::tempdir().expect("tempdir");
    let systems = ["buyercorp".to_string(), "vendorcorp".to_string()];
    let pins = crate::net::tls::dev_certs::write(dir.path(), &systems).expect("certs");
    let cert = |system: &str| {
        let chain = crate::net::tls::read_certificates(&dir.path().join(format!("{system}.pem")))
            .expect("read");
        ClientCertificate::presented(&chain)
    };
    let env = "WS_TOKEN_TEST_MTLS";
    std::env::set_var(env, "s3cret-mtls");
    let ok = |t: &Loaded, c| check_with(t, "buyercorp", "127.0.0.1", Some("s3cret-mtls"), c);
    let by_pin = with_mtls(
        env,
        dir.path(),
        &format!("{{spki_sha256: [\"{}\"]}}", pins["buyercorp"]),
    );
    let by_ca = with_mtls(env, dir.path(), "{ca: buyercorp-ca.pem}");
    for t in [&by_pin, &by_ca] {
        assert_eq!(ok(t, cert("buyercorp")), Ok(()));
        assert_eq!(
            ok(t, cert("vendorcorp")).expect_err("another's").detail,
            "the client certificate is not buyercorp's"
        );
        assert_eq!(
            ok(t, None).expect_err("none").detail,
            "no client certificate: buyercorp must call over TLS with its certificate"
        );
    }
    // A CA file that is not there is a located error of the topology.
    let text = include_str!("../../config/topology.yaml").replacen(
        "token_env: ",
        "mtls: {ca: missing.pem}\n    token_env: ",
        1,
    );
    let err = crate::registry::load::load_str("t.yaml", &text).expect_err("refused");
    assert!(err.to_string().contains("mtls.ca"), "{err}");
    assert!(err.to_string().contains("missing.pem"), "{err}");
}

#[test]
fn unknown_caller_missing_header_and_unset_env_are_rejected() {
    let env = "WS_TOKEN_TEST_MISSING";
    std::env::set_var(env, "tok-missing");
    let t = topology(env, false);
    for caller in ["", "nobody", "hub"] {
        assert_eq!(
            reason(check(&t, caller, "127.0.0.1", Some("tok-missing"))),
            Some(ReasonCode::AuthRejected),
            "caller {caller:?}"
        );
    }
    assert_eq!(
        reason(check(&t, "buyercorp", "127.0.0.1", None)),
        Some(ReasonCode::AuthRejected)
    );
    let unset = topology("WS_TOKEN_TEST_NEVER_SET", false);
    // Even an empty presented token must not match an unset variable.
    assert_eq!(
        reason(check(&unset, "buyercorp", "127.0.0.1", Some(""))),
        Some(ReasonCode::AuthRejected)
    );
}

#[test]
fn tokens_never_appear_in_errors() {
    let env = "WS_TOKEN_TEST_LEAK";
    std::env::set_var(env, "very-secret-token");
    let t = topology(env, false);
    let err = check(&t, "buyercorp", "127.0.0.1", Some("very-secret-tokeX")).expect_err("refused");
    assert!(!err.detail.contains("very-secret"), "{}", err.detail);
    assert!(!err.detail.contains(env), "{}", err.detail);
}

#[test]
fn a_credential_names_a_system_or_says_why_not() {
    let env = "WS_TOKEN_TEST_PRESENTED";
    std::env::set_var(env, "tok-presented");
    let t = topology(env, false);
    let identity = Identity::default();
    let of = |value: Option<&str>| {
        let mut h = HeaderMap::new();
        if let Some(v) = value {
            h.insert(AUTHORIZATION, HeaderValue::from_str(v).expect("value"));
        }
        presented(&h, &t, &identity).map(|s| s.id.clone())
    };
    assert_eq!(of(Some("Bearer tok-presented")), Ok("buyercorp".into()));
    assert_eq!(of(None), Err(Unidentified::NoCredential));
    assert_eq!(of(Some("Basic dXNlcjpwdw==")), Err(Unidentified::Malformed));
    assert_eq!(of(Some("Bearer nope")), Err(Unidentified::UnknownToken));
    // Shaped as a JWT: malformed, or well-formed with no member's
    // issuer behind it.
    assert_eq!(
        of(Some("Bearer a.b.c")),
        Err(Unidentified::InvalidAccessToken)
    );
    let b64 = |v: &str| {
        use base64::Engine as _;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v)
    };
    let forged = format!(
        "Bearer {}.{}.{}",
        b64(r#"{"alg":"RS256","kid":"k"}"#),
        b64(r#"{"iss":"https://idp.evil.example","sub":"x"}"#),
        b64("sig")
    );
    assert_eq!(of(Some(&forged)), Err(Unidentified::InvalidAccessToken));
    assert_eq!(
        caller_by_token(&headers(Some("tok-presented")), &t, &identity).map(|s| s.id.as_str()),
        Some("buyercorp")
    );
}

#[test]
fn constant_time_eq_compares_exactly() {
    assert!(constant_time_eq(b"abc", b"abc"));
    assert!(!constant_time_eq(b"abc", b"abd"));
    assert!(!constant_time_eq(b"ab", b"abc"));
    assert!(!constant_time_eq(b"abcd", b"abc"));
    assert!(!constant_time_eq(b"", b"abc"));
    assert!(constant_time_eq(b"", b""));
}

#[test]
fn the_token_layer_uses_the_constant_time_compare() {
    // Guards against a refactor back to `==` on secrets: the only
    // comparison of a presented token goes through subtle's `ct_eq`.
    let src = include_str!("auth.rs");
    let layer = src
        .split("impl AuthLayer for BearerToken")
        .nth(1)
        .and_then(|s| s.split("impl AuthLayer for MutualTls").next())
        .unwrap_or_default();
    assert!(
        layer.contains("constant_time_eq(given"),
        "BearerToken must call constant_time_eq"
    );
    assert!(!layer.contains("== expected") && !layer.contains("expected =="));
    let f = src
        .split("pub fn constant_time_eq")
        .nth(1)
        .unwrap_or_default();
    assert!(f.contains(".ct_eq("), "constant_time_eq must use subtle");
}
