//! Certificates for the TLS tests, made by the hub binary itself
//! (`hub certs`, rcgen): the hub's CA and certificate, and per member a
//! CA of its own and a certificate it issued.

use std::path::Path;
use std::process::Command;

use super::{free_port, hub_bin, PeerSpec, Stack};

/// `hub certs --out dir --system …`: the pins it printed, by system.
pub fn hub_certs(dir: &Path, systems: &[&str]) -> Vec<(String, String)> {
    let mut command = Command::new(hub_bin());
    command.arg("certs").arg("--out").arg(dir);
    for s in systems {
        command.arg("--system").arg(s);
    }
    let out = command.output().expect("run hub certs");
    assert!(
        out.status.success(),
        "hub certs failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once(" spki_sha256: "))
        .map(|(s, p)| (s.to_string(), p.to_string()))
        .collect()
}

/// The demo's three peers and a hub that also listens with TLS on a port
/// of its own, with `certs`' `hub.pem` (made by [`hub_certs`]); returns
/// the stack and the TLS base URL (`https://localhost:PORT`).
pub async fn demo_with_tls(certs: &Path) -> (Stack, String) {
    let tls_port = free_port();
    let tls_addr = format!("127.0.0.1:{tls_port}");
    let cert = certs.join("hub.pem").display().to_string();
    let key = certs.join("hub-key.pem").display().to_string();
    let stack = Stack::start_with_env(
        ["vendorcorp", "buyercorp", "helpdesk"]
            .map(PeerSpec::stock)
            .to_vec(),
        &[
            ("WS_TLS_ADDR", tls_addr.as_str()),
            ("WS_TLS_CERT", cert.as_str()),
            ("WS_TLS_KEY", key.as_str()),
        ],
    )
    .await;
    assert!(
        stack
            .hub_log()
            .contains(&format!("hub listening on https://{tls_addr}")),
        "{}",
        stack.hub_log()
    );
    (stack, format!("https://localhost:{tls_port}"))
}
