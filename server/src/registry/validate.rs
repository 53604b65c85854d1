//! The meaning of a topology file, checked (DESIGN.md §2 "topology file",
//! §1 rule 2): what serde cannot see — duplicate ids, rules and edges that
//! name systems or capabilities that do not exist, a provider that does not
//! list what a rule says it provides, base URLs, token env var names.
//!
//! Every problem is collected, located at its line through the text's
//! [`Locator`], never only the first; no message echoes a base URL or a
//! token env var's value. The loader (`super::load`) runs this after serde
//! accepted the file's shape, together with the contract checks
//! (`crate::contract`).

use std::collections::HashSet;

use exchange::located::{Issue, Locator, Seg};

use super::model::{CapabilityKind, Topology};

/// Every semantic check, every problem collected.
pub(super) fn validate(t: &Topology, loc: &Locator) -> Vec<Issue> {
    let key = |k: &'static str| Seg::key(k);
    let mut issues = Vec::new();
    let mut push = |path: &[Seg], msg: String| issues.push(loc.issue(path, msg));

    if t.version != 1 {
        push(
            &[key("version")],
            format!("unsupported version {}; only version 1 exists", t.version),
        );
    }
    if !exchange::id::is_valid(&t.hub.id) {
        push(&[key("hub"), key("id")], exchange::id::rule_for("hub id"));
    }
    for (field, value) in [
        ("default_deadline_ms", t.hub.default_deadline_ms),
        ("probe_interval_ms", t.hub.probe_interval_ms),
        ("probe_timeout_ms", t.hub.probe_timeout_ms),
    ] {
        if value == 0 {
            push(&[key("hub"), key(field)], "must be greater than 0".into());
        }
    }

    let capability_ids: HashSet<&str> = t.capabilities.iter().map(|c| c.id.as_str()).collect();
    let system_ids: HashSet<&str> = t.systems.iter().map(|s| s.id.as_str()).collect();

    let mut seen = HashSet::new();
    let mut clients = std::collections::HashMap::new();
    let mut credential_names = std::collections::HashMap::new();
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
        if let Some(plane) = &s.data_plane {
            if let Err(why) = check_base_url(&plane.base_url) {
                push(&at(&[key("data_plane"), key("base_url")]), why);
            } else if plane.base_url.starts_with("https://") {
                push(
                    &at(&[key("data_plane"), key("base_url")]),
                    "must be http://host:port: the hub reaches a data plane over plain HTTP only"
                        .into(),
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
        if let Err(why) = credential_variable(&s.token_env) {
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
        if let Some(mtls) = &s.mtls {
            if mtls.spki_sha256.is_empty() && mtls.ca.is_none() {
                push(
                    &at(&[key("mtls")]),
                    "must name the system's certificate: `spki_sha256` pins, a `ca` file, or both"
                        .into(),
                );
            }
            for (k, pin) in mtls.spki_sha256.iter().enumerate() {
                if !is_spki_pin(pin) {
                    push(
                        &at(&[key("mtls"), key("spki_sha256"), Seg::Index(k)]),
                        "must be the base64 SHA-256 of a SubjectPublicKeyInfo (44 characters)"
                            .into(),
                    );
                }
            }
        }
        if let Some(oidc) = &s.oidc {
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

    let mut seen = HashSet::new();
    for (i, c) in t.capabilities.iter().enumerate() {
        if !exchange::id::is_valid(&c.id) {
            push(
                &[key("capabilities"), Seg::Index(i), key("id")],
                exchange::id::rule_for("capability id"),
            );
        } else if !seen.insert(c.id.as_str()) {
            push(
                &[key("capabilities"), Seg::Index(i), key("id")],
                format!("duplicate capability id `{}`", c.id),
            );
        }
        if c.deadline_ms == Some(0) {
            push(
                &[key("capabilities"), Seg::Index(i), key("deadline_ms")],
                "must be greater than 0".into(),
            );
        }
        let at_task_deadline = [key("capabilities"), Seg::Index(i), key("task_deadline_ms")];
        match (c.kind, c.task_deadline_ms) {
            (CapabilityKind::Task, None) => push(
                &[key("capabilities"), Seg::Index(i), key("kind")],
                "a task names the longest a task may live (`task_deadline_ms: <ms>`)".into(),
            ),
            (CapabilityKind::Task, Some(0)) => {
                push(&at_task_deadline, "must be greater than 0".into())
            }
            (CapabilityKind::Task, Some(_)) => {}
            (_, Some(_)) => push(
                &at_task_deadline,
                "only a task capability has a task deadline".into(),
            ),
            (_, None) => {}
        }
        let at_negotiates = [key("capabilities"), Seg::Index(i), key("negotiates")];
        match (c.kind, &c.negotiates) {
            (CapabilityKind::Negotiation, None) => push(
                &[key("capabilities"), Seg::Index(i), key("kind")],
                "a negotiation names the data-share it negotiates (`negotiates: <capability>`)"
                    .into(),
            ),
            (CapabilityKind::Negotiation, Some(n)) => {
                match t.capabilities.iter().find(|d| &d.id == n) {
                    None => push(&at_negotiates, format!("unknown capability `{n}`")),
                    Some(d) if d.kind != CapabilityKind::DataShare => push(
                        &at_negotiates,
                        format!("`{n}` is a {:?}, not a data-share", d.kind),
                    ),
                    Some(_) => {}
                }
            }
            (_, Some(_)) => push(
                &at_negotiates,
                "only a negotiation capability negotiates a data-share".into(),
            ),
            (_, None) => {}
        }
    }

    for (i, r) in t.rules.iter().enumerate() {
        let at = |rest: &[Seg<'static>]| -> Vec<Seg<'static>> {
            let mut p = vec![key("rules"), Seg::Index(i)];
            p.extend_from_slice(rest);
            p
        };
        if let Some(scope) = &r.scope {
            if scope.is_empty() || scope.contains(char::is_whitespace) {
                push(
                    &at(&[key("scope")]),
                    "must be one OAuth scope (no spaces)".into(),
                );
            }
        }
        if let Some(rate) = &r.rate_limit {
            for (field, value) in [("calls", rate.calls), ("seconds", rate.seconds)] {
                if value == 0 {
                    push(
                        &at(&[key("rate_limit"), key(field)]),
                        "must be greater than 0".into(),
                    );
                }
            }
        }
        if r.daily_quota == Some(0) {
            push(&at(&[key("daily_quota")]), "must be greater than 0".into());
        }
        if !capability_ids.contains(r.capability.as_str()) {
            push(
                &at(&[key("capability")]),
                format!("unknown capability `{}`", r.capability),
            );
        }
        match t.system(&r.provider) {
            None => push(
                &at(&[key("provider")]),
                format!("unknown provider `{}`", r.provider),
            ),
            Some(p) => {
                if capability_ids.contains(r.capability.as_str())
                    && !p.provides.iter().any(|c| c == &r.capability)
                {
                    push(
                        &at(&[key("provider")]),
                        format!(
                            "`{}` does not list `{}` under provides",
                            r.provider, r.capability
                        ),
                    );
                }
            }
        }
        if r.consumers.is_empty() {
            push(
                &at(&[key("consumers")]),
                "must name at least one consumer".into(),
            );
        }
        for (k, consumer) in r.consumers.iter().enumerate() {
            if consumer != &t.hub.id && !system_ids.contains(consumer.as_str()) {
                push(
                    &at(&[key("consumers"), Seg::Index(k)]),
                    format!("unknown consumer `{consumer}`"),
                );
            } else if consumer == &r.provider {
                push(
                    &at(&[key("consumers"), Seg::Index(k)]),
                    format!("`{consumer}` cannot consume its own capability"),
                );
            }
        }
    }
    let mut seen = HashSet::new();
    for (i, e) in t.initial_edges.iter().enumerate() {
        let at = |field: &'static str| [key("initial_edges"), Seg::Index(i), key(field)];
        let consumer_known = e.consumer == t.hub.id || system_ids.contains(e.consumer.as_str());
        let provider_known = system_ids.contains(e.provider.as_str());
        let capability_known = capability_ids.contains(e.capability.as_str());
        if !consumer_known {
            push(
                &at("consumer"),
                format!("unknown consumer `{}`", e.consumer),
            );
        }
        if !provider_known {
            push(
                &at("provider"),
                format!("unknown provider `{}`", e.provider),
            );
        }
        if !capability_known {
            push(
                &at("capability"),
                format!("unknown capability `{}`", e.capability),
            );
        }
        if consumer_known && provider_known && capability_known {
            if !t.permits(&e.consumer, &e.capability, &e.provider) {
                push(
                    &[key("initial_edges"), Seg::Index(i)],
                    format!(
                        "no rule lets {} consume {} from {}",
                        e.consumer, e.capability, e.provider
                    ),
                );
            } else if !seen.insert(e.id()) {
                push(
                    &[key("initial_edges"), Seg::Index(i)],
                    format!("duplicate edge `{}`", e.id()),
                );
            }
        }
    }
    issues
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

/// Whether `name` may be a system's credential variable: one of the
/// hub's reserved namespace, `WS_TOKEN_` followed by capitals, digits and
/// `_` (`super::credentials::NAMESPACE`). No system can name any other
/// variable of the hub's environment (its database URL, a model key) as
/// its credential.
pub(super) fn credential_variable(name: &str) -> Result<(), String> {
    use super::credentials::NAMESPACE;
    let rest = name.strip_prefix(NAMESPACE).unwrap_or_default();
    if rest.is_empty()
        || !rest
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
    {
        return Err(format!(
            "must be a credential variable of the hub's reserved namespace: `{NAMESPACE}` \
             then capitals, digits or `_` (like `{NAMESPACE}VENDORCORP`)"
        ));
    }
    Ok(())
}
