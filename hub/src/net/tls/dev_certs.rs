//! `hub certs`: the certificates of a demo or a test, made at start and
//! never committed.
//!
//! Each company has its own CA, as it would in life, so a topology can
//! name a member's CA (`mtls.ca`) and no other company's certificate
//! passes for it. What [`write`] leaves in the directory:
//!
//! | file | what it is |
//! |---|---|
//! | `hub-ca.pem` | the hub's CA: clients trust it for the hub's TLS listener |
//! | `hub.pem`, `hub-key.pem` | the hub's certificate (`localhost`, `127.0.0.1`, `::1`), for serving TLS and for presenting to providers |
//! | `{system}-ca.pem` | that member's CA |
//! | `{system}.pem`, `{system}-key.pem` | its certificate, issued by its CA: for calling the hub, and for serving TLS (`localhost`, `127.0.0.1`) |
//! | `pins.json` | each member's SPKI pin (`{"buyercorp": "base64…"}`), for `mtls.spki_sha256` |

use std::collections::BTreeMap;
use std::path::Path;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use time::{Duration, OffsetDateTime};

use super::TlsError;

/// How long the certificates are valid: long enough for any demo, short
/// enough that nobody mistakes them for real ones.
const VALID_FOR: Duration = Duration::days(30);

fn generate_error(e: impl std::fmt::Display) -> TlsError {
    TlsError::Generate(e.to_string())
}

/// A CA named `name`, and the issuer that signs with it.
fn ca(name: &str) -> Result<(String, Issuer<'static, KeyPair>), TlsError> {
    let mut params = CertificateParams::new(Vec::<String>::new()).map_err(generate_error)?;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(DnType::CommonName, format!("{name} demo CA"));
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    validity(&mut params);
    let key = KeyPair::generate().map_err(generate_error)?;
    let cert = params.self_signed(&key).map_err(generate_error)?;
    Ok((cert.pem(), Issuer::new(params, key)))
}

fn validity(params: &mut CertificateParams) {
    let now = OffsetDateTime::now_utc();
    params.not_before = now - Duration::hours(1);
    params.not_after = now + VALID_FOR;
}

/// A leaf certificate for `name`, issued by `issuer`: its PEM, its key's
/// PEM and its SPKI pin.
fn leaf(
    name: &str,
    names: &[&str],
    usages: Vec<ExtendedKeyUsagePurpose>,
    issuer: &Issuer<'_, KeyPair>,
) -> Result<(String, String, String), TlsError> {
    // Each name becomes an IP address or a DNS name, whichever it parses as.
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let mut params = CertificateParams::new(names).map_err(generate_error)?;
    params.distinguished_name.push(DnType::CommonName, name);
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = usages;
    validity(&mut params);
    let key = KeyPair::generate().map_err(generate_error)?;
    let cert = params.signed_by(&key, issuer).map_err(generate_error)?;
    let pin = super::spki_sha256(cert.der()).ok_or_else(|| generate_error("no SPKI"))?;
    Ok((cert.pem(), key.serialize_pem(), pin))
}

/// Writes the hub's certificates and one client certificate per system
/// of `systems` into `dir` (created if missing); returns the pins.
pub fn write(dir: &Path, systems: &[String]) -> Result<BTreeMap<String, String>, TlsError> {
    let write_file = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| TlsError::Pem {
            path: path.display().to_string(),
            what: format!("cannot write: {e}"),
        })
    };
    std::fs::create_dir_all(dir).map_err(|e| TlsError::Pem {
        path: dir.display().to_string(),
        what: format!("cannot create: {e}"),
    })?;
    let (hub_ca, hub_issuer) = ca("Wall Street hub")?;
    write_file("hub-ca.pem", &hub_ca)?;
    let (cert, key, _) = leaf(
        "Wall Street hub",
        &["localhost", "127.0.0.1", "::1"],
        vec![
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ],
        &hub_issuer,
    )?;
    write_file("hub.pem", &cert)?;
    write_file("hub-key.pem", &key)?;
    let mut pins = BTreeMap::new();
    for system in systems {
        if system.is_empty()
            || !system
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(generate_error(format!(
                "`{}` is not a system id (letters, digits, - and _)",
                exchange::text::clip(system, 64)
            )));
        }
        let (member_ca, issuer) = ca(system)?;
        write_file(&format!("{system}-ca.pem"), &member_ca)?;
        // Its client certificate, and its server certificate when it
        // serves TLS itself (a provider the hub calls at `https://`).
        let (cert, key, pin) = leaf(
            system,
            &[system.as_str(), "localhost", "127.0.0.1"],
            vec![
                ExtendedKeyUsagePurpose::ClientAuth,
                ExtendedKeyUsagePurpose::ServerAuth,
            ],
            &issuer,
        )?;
        write_file(&format!("{system}.pem"), &cert)?;
        write_file(&format!("{system}-key.pem"), &key)?;
        pins.insert(system.clone(), pin);
    }
    let pins_json = serde_json::to_string_pretty(&pins).map_err(generate_error)?;
    write_file("pins.json", &pins_json)?;
    Ok(pins)
}
