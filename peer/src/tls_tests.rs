//! What the TLS server's material must be: an unusable file is named with
//! its field before anything listens. (The handshake itself, with `hub
//! certs`' certificates, is `hub/tests/provider_tls.rs`.)

use super::*;

fn config(dir: &Path, client_ca: bool) -> ServeTlsConfig {
    ServeTlsConfig {
        cert: dir.join("peer.pem"),
        key: dir.join("peer-key.pem"),
        client_ca: client_ca.then(|| dir.join("hub-ca.pem")),
    }
}

fn error(tls: &ServeTlsConfig) -> String {
    format!("{:#}", server_config(tls).expect_err("refused"))
}

#[test]
fn unusable_material_is_named_with_its_field() {
    let dir = tempfile::tempdir().unwrap();
    let tls = config(dir.path(), true);
    // Nothing there.
    let e = error(&tls);
    assert!(e.contains("peer.pem") && e.contains("(tls.cert)"), "{e}");
    // A file without a certificate.
    std::fs::write(&tls.cert, "not PEM at all\n").unwrap();
    let e = error(&tls);
    assert!(e.contains("holds no PEM certificate (tls.cert)"), "{e}");
    // A certificate-shaped block whose key is missing.
    std::fs::write(
        &tls.cert,
        "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    let e = error(&tls);
    assert!(e.contains("peer-key.pem") && e.contains("(tls.key)"), "{e}");
}
