use super::*;

#[test]
fn hub_certs_writes_a_ca_per_member_and_pins_that_match_the_certificates() {
    let dir = tempfile::tempdir().expect("tempdir");
    let systems = ["buyercorp".to_string(), "vendorcorp".to_string()];
    let pins = dev_certs::write(dir.path(), &systems).expect("certs");
    for system in &systems {
        let chain = read_certificates(&dir.path().join(format!("{system}.pem"))).expect("read");
        let presented = ClientCertificate::presented(&chain).expect("one certificate");
        assert_eq!(presented.spki_sha256(), Some(pins[system].as_str()));
        read_key(&dir.path().join(format!("{system}-key.pem"))).expect("key");
    }
    assert_ne!(pins["buyercorp"], pins["vendorcorp"]);
    // Each member's CA issued its own certificate and no other.
    let ca =
        client_auth::MemberCa::from_pem_file(&dir.path().join("buyercorp-ca.pem")).expect("ca");
    let of = |system: &str| {
        let chain = read_certificates(&dir.path().join(format!("{system}.pem"))).expect("read");
        ClientCertificate::presented(&chain).expect("one certificate")
    };
    assert!(ca.issued(&of("buyercorp")));
    assert!(!ca.issued(&of("vendorcorp")));
    // The hub's own certificate makes a server configuration.
    ServerTls::from_pem_files(&dir.path().join("hub.pem"), &dir.path().join("hub-key.pem"))
        .expect("server config");
}

#[test]
fn bad_material_is_named_by_its_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let not_pem = dir.path().join("not.pem");
    std::fs::write(&not_pem, "hello").expect("write");
    let err = read_certificates(&not_pem).expect_err("no certificate");
    assert!(
        err.to_string().starts_with(&not_pem.display().to_string()),
        "{err}"
    );
    assert!(err.to_string().contains("holds no certificate"), "{err}");
    let err = dev_certs::write(dir.path(), &["../x".to_string()]).expect_err("bad id");
    assert!(err.to_string().contains("is not a system id"), "{err}");
}
