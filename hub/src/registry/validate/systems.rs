//! The `systems` section: each member system's id, name and base URL, its
//! data plane, its credential variable, its client certificate (`mtls`)
//! and identity provider (`oidc`), the capabilities it lists, and its
//! agents' and datasources' ids.

use std::collections::{HashMap, HashSet};

use exchange::located::Seg;

use super::key;
use crate::registry::model::{CapabilityKind, System, Topology};

/// Each system, its fields in file order. An id, a credential variable and
/// an OAuth client of an issuer each name one system only.
pub(super) fn check(t: &Topology, push: &mut impl FnMut(&[Seg<'_>], String)) {
    let capability_ids = super::capability_ids(t);
    let mut seen = HashSet::new();
    let mut clients = HashMap::new();
    let mut credential_names = HashMap::new();
    for (i, s) in t.systems.iter().enumerate() {
        let at = |rest: &[Seg<'static>]| -> Vec<Seg<'static>> {
            let mut p = vec![key("systems"), Seg::Index(i)];
            p.extend_from_slice(rest);
            p
        };
        if !exchange::id::is_valid(&s.id) {
            push(&at(&[key("id")]), exchange::id::rule_for("system id"));
        } else if !seen.insert(s.id.as_str()) {
            push(&at(&[key("id")]), format!("duplicate system id `{}`", s.id));
        } else if s.id == t.hub.id {
            push(
                &at(&[key("id")]),
                format!("`{}` is the hub's own id and cannot name a system", s.id),
            );
        }
        if s.name.trim().is_empty() {
            push(&at(&[key("name")]), "must not be empty".into());
        }
        if let Err(why) = check_base_url(&s.base_url) {
            push(&at(&[key("base_url")]), why);
        }
        check_data_plane(t, s, &at, push);
        if let Err(why) = super::credential_variable(&s.token_env) {
            push(&at(&[key("token_env")]), why);
        } else if let Some(other) = credential_names.insert(s.token_env.as_str(), i) {
            push(
                &at(&[key("token_env")]),
                format!(
                    "`{}` is already the credential variable of systems[{other}] (`{}`); \
                     each system has a credential of its own",
                    s.token_env, t.systems[other].id
                ),
            );
        }
        check_mtls(s, &at, push);
        check_oidc(s, &mut clients, &at, push);
        for (list, entries) in [("provides", &s.provides), ("consumes", &s.consumes)] {
            for (k, cap) in entries.iter().enumerate() {
                if !capability_ids.contains(cap.as_str()) {
                    push(
                        &at(&[key(list), Seg::Index(k)]),
                        format!("unknown capability `{cap}`"),
                    );
                }
            }
        }
        check_children(s, &at, push);
    }
}

/// `data_plane`: a plain-HTTP base URL, and a data-share the system
/// provides.
fn check_data_plane(
    t: &Topology,
    s: &System,
    at: &impl Fn(&[Seg<'static>]) -> Vec<Seg<'static>>,
    push: &mut impl FnMut(&[Seg<'_>], String),
) {
    let Some(plane) = &s.data_plane else {
        return;
    };
    if let Err(why) = check_base_url(&plane.base_url) {
        push(&at(&[key("data_plane"), key("base_url")]), why);
    } else if plane.base_url.starts_with("https://") {
        push(
            &at(&[key("data_plane"), key("base_url")]),
            "must be http://host:port: the hub reaches a data plane over plain HTTP only".into(),
        );
    }
    let serves = t
        .capabilities
        .iter()
        .find(|c| c.id == plane.capability)
        .map(|c| c.kind);
    if serves != Some(CapabilityKind::DataShare)
        || !s.provides.iter().any(|c| c == &plane.capability)
    {
        push(
            &at(&[key("data_plane"), key("capability")]),
            format!(
                "`{}` must be a data-share this system provides",
                plane.capability
            ),
        );
    }
}

/// `mtls`: names the system's certificate, each pin a pin.
fn check_mtls(
    s: &System,
    at: &impl Fn(&[Seg<'static>]) -> Vec<Seg<'static>>,
    push: &mut impl FnMut(&[Seg<'_>], String),
) {
    let Some(mtls) = &s.mtls else {
        return;
    };
    if mtls.spki_sha256.is_empty() && mtls.ca.is_none() {
        push(
            &at(&[key("mtls")]),
            "must name the system's certificate: `spki_sha256` pins, a `ca` file, or both".into(),
        );
    }
    for (k, pin) in mtls.spki_sha256.iter().enumerate() {
        if !is_spki_pin(pin) {
            push(
                &at(&[key("mtls"), key("spki_sha256"), Seg::Index(k)]),
                "must be the base64 SHA-256 of a SubjectPublicKeyInfo (44 characters)".into(),
            );
        }
    }
}

/// `oidc`: a usable issuer, the system's OAuth clients there (each
/// naming this system only: `clients`, by issuer and client, holds the
/// systems seen so far), its canvas login and its audiences.
fn check_oidc<'t>(
    s: &'t System,
    clients: &mut HashMap<(&'t str, &'t str), &'t str>,
    at: &impl Fn(&[Seg<'static>]) -> Vec<Seg<'static>>,
    push: &mut impl FnMut(&[Seg<'_>], String),
) {
    let Some(oidc) = &s.oidc else {
        return;
    };
    if let Err(why) = check_issuer(&oidc.issuer) {
        push(&at(&[key("oidc"), key("issuer")]), why);
    }
    if oidc.client_ids.is_empty() {
        push(
            &at(&[key("oidc"), key("client_ids")]),
            "must name at least one OAuth client of this system".into(),
        );
    }
    for (k, client) in oidc.client_ids.iter().enumerate() {
        let place = at(&[key("oidc"), key("client_ids"), Seg::Index(k)]);
        if client.trim().is_empty() {
            push(&place, "must not be empty".into());
        } else if let Some(other) =
            clients.insert((oidc.issuer.as_str(), client.as_str()), s.id.as_str())
        {
            push(
                &place,
                format!("client `{client}` of this issuer already names system `{other}`"),
            );
        }
    }
    if let Some(login) = &oidc.ui_login {
        if login.client_id.trim().is_empty() {
            push(
                &at(&[key("oidc"), key("ui_login"), key("client_id")]),
                "must name the hub's client at the issuer".into(),
            );
        }
        if login.role_claim.trim().is_empty() {
            push(
                &at(&[key("oidc"), key("ui_login"), key("role_claim")]),
                "must name a claim (or leave it out: `ws_role`)".into(),
            );
        }
    }
    for (k, aud) in oidc.audience.iter().enumerate() {
        if aud.trim().is_empty() {
            push(
                &at(&[key("oidc"), key("audience"), Seg::Index(k)]),
                "must not be empty".into(),
            );
        }
    }
}

/// `agents` and `datasources`: each id valid and unique within its list.
fn check_children(
    s: &System,
    at: &impl Fn(&[Seg<'static>]) -> Vec<Seg<'static>>,
    push: &mut impl FnMut(&[Seg<'_>], String),
) {
    for (list, ids) in [
        (
            "agents",
            s.agents.iter().map(|a| a.id.as_str()).collect::<Vec<_>>(),
        ),
        (
            "datasources",
            s.datasources
                .iter()
                .map(|d| d.id.as_str())
                .collect::<Vec<_>>(),
        ),
    ] {
        let mut seen_child = HashSet::new();
        for (k, id) in ids.into_iter().enumerate() {
            if !exchange::id::is_valid(id) {
                push(
                    &at(&[key(list), Seg::Index(k), key("id")]),
                    exchange::id::rule_for("id"),
                );
            } else if !seen_child.insert(id) {
                push(
                    &at(&[key(list), Seg::Index(k), key("id")]),
                    format!("duplicate id `{id}` in {list} of `{}`", s.id),
                );
            }
        }
    }
}

/// A pin as `tls::spki_sha256` writes it: 32 bytes in standard base64.
fn is_spki_pin(pin: &str) -> bool {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(pin)
        .is_ok_and(|bytes| bytes.len() == 32)
}

/// An OIDC issuer: an absolute http(s) URL without query, fragment or
/// credentials (its discovery document hangs below it).
fn check_issuer(raw: &str) -> Result<(), String> {
    let rule = "must be an http:// or https:// URL without query, fragment or credentials";
    let url = reqwest::Url::parse(raw).map_err(|e| format!("{rule}: {e}"))?;
    let ok = matches!(url.scheme(), "http" | "https")
        && url.host_str().is_some_and(|h| !h.is_empty())
        && url.username().is_empty()
        && url.password().is_none()
        && url.query().is_none()
        && url.fragment().is_none();
    if ok {
        Ok(())
    } else {
        Err(rule.to_string())
    }
}

/// `http://host:port` or `https://host:port`, optionally with a trailing `/`, nothing more. The
/// message never repeats the URL: base URLs are internal.
fn check_base_url(raw: &str) -> Result<(), String> {
    let rule = "must be http://host:port or https://host:port (no path, query or credentials)";
    let url = reqwest::Url::parse(raw).map_err(|e| format!("{rule}: {e}"))?;
    let ok = matches!(url.scheme(), "http" | "https")
        && url.host_str().is_some_and(|h| !h.is_empty())
        && url.port().is_some_and(|p| p != 0)
        && url.username().is_empty()
        && url.password().is_none()
        && url.path() == "/"
        && url.query().is_none()
        && url.fragment().is_none()
        // `Url` normalises away a `/` the operator did not write; reject
        // any other path the operator did write.
        && {
            let after_scheme = raw
                .strip_prefix("https://")
                .or_else(|| raw.strip_prefix("http://"))
                .unwrap_or(raw);
            let path_start = after_scheme.find('/').unwrap_or(after_scheme.len());
            matches!(&after_scheme[path_start..], "" | "/")
        };
    if ok {
        Ok(())
    } else {
        Err(rule.to_string())
    }
}
