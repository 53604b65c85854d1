use axum::body::Body;
use axum::http::header;

use super::*;

fn request(host: &str, path: &str) -> Request {
    Request::builder()
        .uri(path)
        .header(header::HOST, host)
        .body(Body::empty())
        .expect("request")
}

fn local() -> PublicUrls {
    PublicUrls::listening(
        "127.0.0.1:3000".parse().expect("addr"),
        Some("127.0.0.1:3443".parse().expect("addr")),
    )
}

fn moved(public: &PublicUrls, host: &str, path: &str) -> String {
    let mut r = request(host, path);
    rewrite(Some(public), &mut r);
    r.uri().to_string()
}

#[test]
fn a_providers_host_is_its_path_at_the_root() {
    let p = local();
    let at = |path| moved(&p, "vendorcorp.localhost:3000", path);
    assert_eq!(at("/"), "/a2a/vendorcorp");
    assert_eq!(
        at("/.well-known/agent-card.json"),
        "/a2a/vendorcorp/.well-known/agent-card.json"
    );
    assert_eq!(
        at("/rest/message:send?x=1"),
        "/a2a/vendorcorp/rest/message:send?x=1"
    );
    assert_eq!(at("/login"), "/a2a/vendorcorp/login");
    // The keys its card's signature names stay the hub's, and so does
    // the gRPC service (the call names its provider).
    assert_eq!(at("/.well-known/jwks.json"), "/.well-known/jwks.json");
    assert_eq!(
        at("/lf.a2a.v1.A2AService/SendMessage"),
        "/lf.a2a.v1.A2AService/SendMessage"
    );
    assert_eq!(
        at("/lf.a2a.v1.A2AServiceX"),
        "/a2a/vendorcorp/lf.a2a.v1.A2AServiceX"
    );
}

#[test]
fn only_the_configured_domain_on_the_hubs_own_ports_is_a_providers_host() {
    let p = local();
    for host in [
        "127.0.0.1:3000",
        "localhost:3000",
        "vendorcorp.localhost:3999",
        "vendorcorp.localhost",
        "vendorcorp.evil.example:3000",
        "vendorcorp.localhost.evil.example:3000",
        "a.b.localhost:3000",
        "-x.localhost:3000",
        "vendorcorp.localhost:x",
    ] {
        assert_eq!(moved(&p, host, "/"), "/", "{host}");
    }
    let h = p
        .provider_host(request("VendorCorp.LocalHost:3443", "/").headers())
        .expect("the TLS port");
    assert_eq!(h.provider, "vendorcorp");
    assert_eq!(h.origin, "https://vendorcorp.localhost:3443");
    assert_eq!(h.hub, "https://127.0.0.1:3443");
    // A request by a provider's host is answered with the hub's address
    // of the same scheme and port, never the host's name.
    assert_eq!(
        p.for_request(request("vendorcorp.localhost:3443", "/").headers()),
        "https://127.0.0.1:3443"
    );
}

#[test]
fn named_addresses_have_provider_hosts_only_under_a_named_domain() {
    let named = PublicUrls::parse("https://hub.example").expect("valid");
    assert_eq!(named.provider_domain(), None);
    assert_eq!(moved(&named, "vendorcorp.hub.example", "/"), "/");
    let named = named.with_provider_domain("Hub.Example.").expect("valid");
    let h = named
        .provider_host(request("vendorcorp.hub.example", "/").headers())
        .expect("a provider host");
    assert_eq!(h.origin, "https://vendorcorp.hub.example");
    assert_eq!(h.hub, "https://hub.example");
    for bad in [
        "https://hub.example",
        "hub.example:443",
        "hub..example",
        "*.hub",
    ] {
        let e = PublicUrls::parse("https://hub.example")
            .and_then(|p| p.with_provider_domain(bad))
            .expect_err(bad);
        assert!(e.contains("WS_PROVIDER_DOMAIN"), "{e}");
    }
    let off = local()
        .with_provider_domain("")
        .expect("empty turns it off");
    assert_eq!(moved(&off, "vendorcorp.localhost:3000", "/"), "/");
}
