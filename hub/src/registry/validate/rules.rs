//! The `rules` section: who may consume which capability of which
//! provider, and the limits a rule sets.

use exchange::located::Seg;

use super::key;
use crate::registry::model::Topology;

/// Each rule: its scope and limits well formed, its capability known and
/// listed by its provider, at least one known consumer other than the
/// provider (the hub itself may consume).
pub(super) fn check(t: &Topology, push: &mut impl FnMut(&[Seg<'_>], String)) {
    let capability_ids = super::capability_ids(t);
    let system_ids = super::system_ids(t);
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
}
