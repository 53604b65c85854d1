//! What a member's own access token costs the hub per call, beside the
//! static token (DESIGN.md §2 "auth chain"; `hub/src/identity/`).
//!
//! Prints, per call, the time to name the caller by its bearer token the
//! way the A2A surface and MCP do (`auth::caller_by_token`), then to run
//! the auth chain, both with the hub's cache of verified tokens (a client
//! sends one token for many calls), and the full verification a token's
//! first call pays (`identity::token::verify`: signature, claims), for:
//!
//! - the static token of `token_env` (constant-time compares);
//! - a JWT signed RS256 with a 2048-bit key (what oidc-provider issues by
//!   default) and one signed EdDSA (Ed25519).
//!
//! The issuer's discovery document and JWKS are served by a small HTTP
//! server in this process, read once by the hub's key cache, as in a run.
//! Figures, not assertions (this machine is shared and noisy).
//! `scripts/cargo-env cargo bench -p hub --bench identity`.
//! Env: `BENCH_TOKENS` (checks per measurement, default 20,000).

use std::hint::black_box;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use axum::http::{header::AUTHORIZATION, HeaderMap, HeaderValue};
use base64::Engine;
use serde_json::json;

use hub::auth::{caller_by_token, AuthChain, AuthContext, Target};
use hub::identity::Identity;
use hub::registry::load::load_str;

const AUDIENCE: &str = "urn:wall-street:hub";

fn rsa_key() -> (jsonwebtoken::EncodingKey, serde_json::Value) {
    let dir = tempfile::tempdir().expect("temp dir");
    let pem = dir.path().join("key.pem");
    let run = |args: &[&str]| {
        let out = std::process::Command::new("openssl")
            .args(args)
            .output()
            .expect("openssl runs");
        assert!(out.status.success(), "openssl {args:?} failed");
        out.stdout
    };
    let path = pem.to_str().expect("utf-8 path");
    run(&[
        "genpkey",
        "-algorithm",
        "RSA",
        "-pkeyopt",
        "rsa_keygen_bits:2048",
        "-out",
        path,
    ]);
    let modulus =
        String::from_utf8(run(&["rsa", "-in", path, "-noout", "-modulus"])).expect("text");
    let hex = modulus.trim().trim_start_matches("Modulus=");
    let n: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
        .collect();
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let key = jsonwebtoken::EncodingKey::from_rsa_pem(&std::fs::read(&pem).expect("pem"))
        .expect("an RSA key");
    let jwk = json!({"kty": "RSA", "n": b64.encode(n), "e": "AQAB", "kid": "rsa", "alg": "RS256", "use": "sig"});
    (key, jwk)
}

async fn issuer(jwks: serde_json::Value) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr: SocketAddr = listener.local_addr().expect("addr");
    let url = format!("http://{addr}");
    let discovery = json!({"issuer": url, "jwks_uri": format!("{url}/jwks"), "token_endpoint": format!("{url}/token")});
    let app = axum::Router::new()
        .route(
            "/.well-known/openid-configuration",
            axum::routing::get(move || async move { axum::Json(discovery) }),
        )
        .route(
            "/jwks",
            axum::routing::get(move || async move { axum::Json(jwks) }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

fn per_call(n: usize, mut f: impl FnMut()) -> Duration {
    for _ in 0..n / 10 {
        f();
    }
    let started = Instant::now();
    for _ in 0..n {
        f();
    }
    started.elapsed() / n as u32
}

#[tokio::main]
async fn main() {
    let n: usize = std::env::var("BENCH_TOKENS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let (rsa, rsa_jwk) = rsa_key();
    let ed = exchange::jws::SigningKey::generate("ed").expect("key");
    let url = issuer(json!({"keys": [rsa_jwk, ed.public_jwk()]})).await;
    std::env::set_var(
        "WS_BENCH_TOKEN_BUYERCORP",
        "a-static-token-of-the-usual-length-0123456789",
    );
    let text = include_str!("../../config/topology.yaml")
        .replace("WS_TOKEN_BUYERCORP", "WS_BENCH_TOKEN_BUYERCORP")
        .replace(
            "    token_env: WS_BENCH_TOKEN_BUYERCORP",
            &format!("    token_env: WS_BENCH_TOKEN_BUYERCORP\n    oidc:\n      issuer: {url}\n      audience: [{AUDIENCE}]\n      client_ids: [buyer-app]"),
        );
    let loaded = load_str("bench.yaml", &text).expect("topology");
    let identity = Identity::default();
    identity.keys().ensure(&url, Some("rsa")).await;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let claims = json!({"iss": url, "aud": AUDIENCE, "client_id": "buyer-app", "exp": now + 3600, "iat": now});
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
    header.kid = Some("rsa".into());
    let rs256 = jsonwebtoken::encode(&header, &claims, &rsa).expect("RS256 token");
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::EdDSA);
    header.kid = Some("ed".into());
    let eddsa = jsonwebtoken::encode(
        &header,
        &claims,
        &jsonwebtoken::EncodingKey::from_ed_der(ed.pkcs8()),
    )
    .expect("EdDSA token");
    let chain = AuthChain::standard();
    let peer: SocketAddr = "127.0.0.1:40000".parse().expect("addr");
    println!("A bearer token, per call ({n} checks each):");
    println!(
        "{:<20} {:>16} {:>13} {:>9} {:>22}",
        "token", "caller_by_token", "auth chain", "× static", "first call: verify"
    );
    let mut static_total = Duration::ZERO;
    for (name, token) in [
        (
            "static",
            "a-static-token-of-the-usual-length-0123456789".to_string(),
        ),
        ("JWT RS256 (2048)", rs256),
        ("JWT EdDSA", eddsa),
    ] {
        let mut headers = HeaderMap::new();
        headers.insert(
            AUTHORIZATION,
            HeaderValue::from_str(&format!("Bearer {token}")).expect("header"),
        );
        assert_eq!(
            caller_by_token(&headers, &loaded, &identity).map(|s| s.id.as_str()),
            Some("buyercorp"),
            "{name} names BuyerCorp"
        );
        let named = per_call(n, || {
            black_box(caller_by_token(black_box(&headers), &loaded, &identity));
        });
        let cx = AuthContext {
            caller: "buyercorp",
            peer: &hub::net::listen::Peer::at(peer),
            headers: &headers,
            registry: &loaded,
            identity: &identity,
            target: Some(Target {
                provider: "vendorcorp",
                capability: "orders.query",
            }),
        };
        assert!(chain.check(&cx).is_ok(), "{name} passes the chain");
        let checked = per_call(n, || {
            black_box(chain.check(black_box(&cx)).is_ok());
        });
        let total = named + checked;
        if name == "static" {
            static_total = total;
        }
        let first = if name == "static" {
            "-".to_string()
        } else {
            let bases = [identity.base(&headers)];
            let verify = per_call(n / 10, || {
                black_box(hub::identity::token::verify(
                    black_box(&token),
                    &loaded,
                    identity.keys(),
                    &bases,
                ))
                .ok();
            });
            format!("{:.1} µs", verify.as_secs_f64() * 1e6)
        };
        println!(
            "{name:<20} {:>13.2} µs {:>10.2} µs {:>8.1}× {first:>22}",
            named.as_secs_f64() * 1e6,
            checked.as_secs_f64() * 1e6,
            total.as_secs_f64() / static_total.as_secs_f64().max(1e-12)
        );
    }
}
