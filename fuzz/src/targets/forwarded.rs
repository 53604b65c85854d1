//! What the replicas read from outside: `X-Forwarded-For` as a
//! trusted balancer passes it (`hub::net::listen::TrustedProxies::client`),
//! the trusted-proxy list (`TrustedProxies::parse`, `WS_TRUSTED_PROXIES`)
//! and the store's location (`exchange::db::Location`, `--database`). The
//! input is lines: each is tried as a proxy list and as a location, and
//! every line that makes a valid header value is an `X-Forwarded-For`
//! line of one request, which arrives once from the trusted balancer
//! (127.0.0.1) and once from an untrusted address.
//!
//! Properties beyond "no panic":
//! - from an untrusted address the header means nothing: the client is
//!   the TCP peer;
//! - from the balancer the client is the balancer or an address written in
//!   the header, and the hop the balancer wrote last, when it is not a
//!   trusted proxy, is the client (nothing a client wrote left of it
//!   counts);
//! - a proxy list that parses contains exactly its entries; one that does
//!   not is refused naming `WS_TRUSTED_PROXIES`;
//! - a location prints without the password of its URL.

use std::net::{IpAddr, SocketAddr};

use exchange::db::Location;
use http::{HeaderMap, HeaderValue};
use hub::net::listen::TrustedProxies;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;

use crate::{Broken, Class, Target};

/// The target.
pub static TARGET: Target = Target {
    name: "forwarded",
    run,
    generate,
    dictionary: DICTIONARY,
    repo_seeds: &[],
};

const DICTIONARY: &[&str] = &[
    "127.0.0.1",
    "10.0.0.0/8",
    "::1",
    "[::1]:8080",
    "203.0.113.7",
    ", ",
    ",",
    "/32",
    "postgres://",
    "postgresql://ws:secret@127.0.0.1:5433/hub",
    "sqlite://",
    "sqlite::memory:",
    "@",
    ":",
    "\n",
];

fn run(input: &[u8]) -> Result<Class, Broken> {
    let text = match super::text(input) {
        Ok(t) => t,
        Err(class) => return Ok(class),
    };
    let balancer: SocketAddr = ([127, 0, 0, 1], 40000).into();
    let stranger: SocketAddr = ([198, 51, 100, 9], 40000).into();
    let trusted = TrustedProxies::parse("127.0.0.1, 10.0.0.0/8").map_err(|e| e.to_string())?;
    let mut classes = Vec::new();
    let mut headers = HeaderMap::new();
    for line in text.lines() {
        match TrustedProxies::parse(line) {
            Ok(_) => classes.push("proxies ok"),
            Err(e) if e.starts_with("WS_TRUSTED_PROXIES: `") => classes.push("proxies refused"),
            Err(e) => return Err(format!("a proxy list refused without its name: {e}")),
        }
        match line.parse::<Location>() {
            Ok(location) => {
                if let Location::Postgres(url) = &location {
                    check_secrets(url, &location)?;
                }
                classes.push("location ok");
            }
            Err(e) if e.to_string().is_empty() => {
                return Err("a location refused without a message".into())
            }
            Err(_) => classes.push("location refused"),
        }
        if let Ok(value) = HeaderValue::from_str(line) {
            headers.append("x-forwarded-for", value);
        }
    }
    if trusted.client(stranger, &headers) != stranger {
        return Err("an untrusted peer's X-Forwarded-For was believed".into());
    }
    let client = trusted.client(balancer, &headers);
    let written: Vec<IpAddr> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|hop| {
            let hop = hop.trim();
            hop.parse::<IpAddr>()
                .ok()
                .or_else(|| hop.parse::<SocketAddr>().ok().map(|a| a.ip()))
        })
        .collect();
    if client != balancer && !written.contains(&client.ip()) {
        return Err(format!(
            "client {client} is neither the balancer nor a written hop"
        ));
    }
    // What the balancer itself appended (the right-most hop) is the
    // client when it is not a trusted proxy: nothing left of it counts.
    let last = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .last()
        .and_then(|hop| hop.trim().parse::<IpAddr>().ok());
    if let Some(last) = last {
        let is_trusted = last.is_loopback() && last == IpAddr::from([127, 0, 0, 1])
            || matches!(last, IpAddr::V4(v4) if v4.octets()[0] == 10);
        if !is_trusted && client.ip() != last {
            return Err(format!(
                "the balancer wrote {last} last, yet the client is {client}"
            ));
        }
    }
    classes.push(if client == balancer {
        "client: the balancer"
    } else {
        "client: a forwarded hop"
    });
    classes.sort_unstable();
    classes.dedup();
    Ok(classes.join(", "))
}

/// A location prints neither its URL's password nor any query value
/// (where `password=` goes) nor its fragment, unless the same text also
/// stands in what may be shown: the URL without those three (user, host,
/// port, database name; a secret may span the port and the path).
fn check_secrets(url: &str, location: &Location) -> Result<(), Broken> {
    let Ok(parsed) = url::Url::parse(url) else {
        return Ok(());
    };
    let shown = format!("{location} {location:?}");
    let public = {
        let mut open = parsed.clone();
        let _ = open.set_password(None);
        open.set_query(None);
        open.set_fragment(None);
        open.to_string()
    };
    let secrets = parsed
        .password()
        .map(str::to_string)
        .into_iter()
        .chain(parsed.query_pairs().map(|(_, v)| v.into_owned()))
        .chain(parsed.fragment().map(str::to_string));
    for secret in secrets.filter(|s| s.len() >= 4 && s != "***") {
        if shown.contains(&secret) && !public.contains(&secret) {
            return Err(format!("location {shown:?} prints the secret {secret:?}"));
        }
    }
    Ok(())
}

/// Lines of addresses, CIDRs, hop lists and store locations.
fn generate(_seeds: &[Vec<u8>]) -> BoxedStrategy<Vec<u8>> {
    let ip = prop_oneof![
        "(127|10|203|198)\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}",
        "[0-9a-f:]{2,20}",
        "\\[::1\\]:[0-9]{1,5}",
        "[ -~]{0,12}",
    ];
    let line = prop_oneof![
        vec(ip.clone(), 1..5).prop_map(|hops| hops.join(", ")),
        (ip, "(/[0-9]{1,3})?").prop_map(|(a, b)| format!("{a}{b}")),
        "(postgres|postgresql|sqlite|mysql)://([a-z]{1,6}(:[ -~]{0,10})?@)?[a-z0-9.:\\[\\]]{0,20}(/[a-z_]{0,8})?(\\?(password|sslmode)=[ -~]{0,10})?",
        "[ -~]{0,60}",
        any::<String>(),
    ];
    vec(line, 0..6)
        .prop_map(|lines| lines.join("\n").into_bytes())
        .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forwarded_client_and_a_secret_url() {
        assert_eq!(
            run(b"postgres://ws:hunter22@127.0.0.1:5433/hub\n203.0.113.7"),
            Ok("client: a forwarded hop, location ok, proxies ok, proxies refused".to_string())
        );
        // A fragment whose text the shown port and path spell is not a
        // leak: the location printed no fragment.
        let url = "postgresql://ws:secret@127.0.0.1:5433/hub#5433/hub";
        let location: Location = url.parse().expect("a postgres location");
        assert_eq!(check_secrets(url, &location), Ok(()));
        // Garbage where the balancer writes: nothing further left counts.
        assert_eq!(
            run(b"203.0.113.7\nnot-an-address"),
            Ok("client: the balancer, location ok, proxies ok, proxies refused".to_string())
        );
    }
}
