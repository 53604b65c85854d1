//! Who may do what, decided from what a request names: the route a method
//! and a path match (`app::routes::ApiRoute::matching`), the session
//! guard's decision for a person of each role and scope
//! (`hub::web::ui_auth::authorize`), the UI users file
//! (`ui_auth::users::UiUsers::parse`) and the hub's public addresses
//! (`machine::PublicUrls::parse`, `for_request`). The input is lines:
//! each is tried as `METHOD PATH`, as a `Host`, as a public address list;
//! the whole text as a users file.
//!
//! Properties beyond "no panic":
//! - a matched route has the request's method, and its template with the
//!   matched id put back is the path;
//! - a member-scoped person (bound to `buyercorp`) is let through a route
//!   that names a node or an edge only when the id, decoded, is of
//!   `buyercorp`'s part; never through an exchange-wide route; a viewer
//!   never through a route that needs another role;
//! - a users file that parses lists no member-scoped admin and only known
//!   roles; a refused one names the file;
//! - a request is answered with one of the configured public addresses,
//!   whatever its `Host` says.

use app::access::{edge_ends, node_system, Need, Reach, Role, Scope};
use app::routes::{decode_segment, ApiRoute};
use http::{HeaderMap, HeaderValue};
use hub::net::machine::PublicUrls;
use hub::web::ui_auth::people::{Origin, Person};
use hub::web::ui_auth::users::UiUsers;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;

use crate::{Broken, Class, Target};

/// The target.
pub static TARGET: Target = Target {
    name: "access",
    run,
    generate,
    dictionary: DICTIONARY,
    repo_seeds: &["config/ui-users.example.yaml"],
};

const DICTIONARY: &[&str] = &[
    "GET ",
    "POST ",
    "PUT ",
    "DELETE ",
    "/api/",
    "/api/nodes/",
    "/api/edges/",
    "/metrics",
    "/audit",
    "/trail",
    "/credential",
    "/api/people/",
    "buyercorp",
    "vendorcorp",
    "->",
    "%3E",
    "%3A",
    "%2F",
    ":",
    "/",
    "//",
    "%",
    "http://",
    "https://",
    "hub.example",
    "127.0.0.1:3000",
    ", ",
    "role: admin",
    "system: buyercorp",
    "users:\n  - username: a\n    password_hash: \"$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaGhhc2g\"\n    role: ",
];

fn person(role: Role, scope: Scope) -> Person {
    Person {
        username: "fuzz".into(),
        role,
        scope,
        origin: Origin::Admin,
    }
}

fn run(input: &[u8]) -> Result<Class, Broken> {
    let text = match super::text(input) {
        Ok(t) => t,
        Err(class) => return Ok(class),
    };
    let mut classes = Vec::new();
    let member = person(Role::Operator, Scope::Member("buyercorp".into()));
    let viewer = person(Role::Viewer, Scope::Exchange);
    let public = PublicUrls::parse("https://hub.example, http://127.0.0.1:3000")
        .map_err(|e| format!("the fixed list: {e}"))?;
    for line in text.lines() {
        if let Some((method, path)) = line.split_once(' ') {
            if let Some((route, id)) = ApiRoute::matching(method, path) {
                classes.push("route");
                if route.verb().as_str() != method {
                    return Err(format!("{line:?} matched {route:?} of another method"));
                }
                let rebuilt = match id {
                    Some(id) => route.template().replacen("{id}", id, 1),
                    None => route.template().to_string(),
                };
                if rebuilt != path {
                    return Err(format!("{line:?} matched {route:?} but is not its path"));
                }
                let rights = route.rights();
                let decoded = id.and_then(decode_segment);
                if hub::web::ui_auth::authorize(&member, route, id).is_ok() {
                    classes.push("member admitted");
                    let own = |s: &str| s == "buyercorp";
                    let fits = match rights.reach {
                        Reach::Exchange => false,
                        Reach::Part | Reach::Body => true,
                        Reach::OwnNode => decoded.as_deref().is_some_and(|i| own(node_system(i))),
                        Reach::OwnEdge => decoded
                            .as_deref()
                            .and_then(edge_ends)
                            .is_some_and(|(c, p)| own(c) || own(p)),
                    };
                    if !fits {
                        return Err(format!("a member of buyercorp was let through {line:?}"));
                    }
                }
                let needs_more = matches!(rights.need, Need::Role(r) if r != Role::Viewer);
                if needs_more && hub::web::ui_auth::authorize(&viewer, route, id).is_ok() {
                    return Err(format!("a viewer was let through {line:?}"));
                }
            } else {
                classes.push("no route");
            }
        }
        if let Ok(host) = HeaderValue::from_str(line) {
            let mut headers = HeaderMap::new();
            headers.insert(http::header::HOST, host);
            let answered = public.for_request(&headers);
            if !public.all().iter().any(|u| u == answered) {
                return Err(format!("Host {line:?} was answered with {answered}"));
            }
        }
        match PublicUrls::parse(line) {
            Ok(list) => {
                classes.push("public ok");
                for url in list.all() {
                    if !(url.starts_with("http://") || url.starts_with("https://"))
                        || url
                            .trim_start_matches("https://")
                            .trim_start_matches("http://")
                            .contains('/')
                    {
                        return Err(format!("{line:?} gave the public address {url:?}"));
                    }
                }
            }
            Err(e) if e.starts_with("WS_PUBLIC_URL: ") => classes.push("public refused"),
            Err(e) => return Err(format!("a public address refused without its name: {e}")),
        }
    }
    match UiUsers::parse("ui-users.yaml", text) {
        Ok(users) => {
            classes.push("users ok");
            for u in users.people() {
                if u.role == Role::Admin && u.scope != Scope::Exchange {
                    return Err(format!("{} is a member-scoped admin", u.username));
                }
            }
        }
        Err(e) if e.to_string().starts_with("ui-users.yaml: ") => classes.push("users refused"),
        Err(e) => return Err(format!("a users file refused without its name: {e}")),
    }
    classes.sort_unstable();
    classes.dedup();
    Ok(classes.join(" + "))
}

fn generate(seeds: &[Vec<u8>]) -> BoxedStrategy<Vec<u8>> {
    let verb = prop_oneof![Just("GET"), Just("POST"), Just("PUT"), Just("DELETE")];
    let segment = prop_oneof![
        Just("buyercorp".to_string()),
        Just("vendorcorp".to_string()),
        Just("buyercorp-%3Evendorcorp%3Aorders.query".to_string()),
        Just("hub-%3Evendorcorp%3Aorders.query".to_string()),
        Just("buyercorp%2Fagent%2Fx".to_string()),
        Just("buyercorpx".to_string()),
        "[a-z%0-9./:>-]{0,24}",
    ];
    let template = proptest::sample::select(
        ApiRoute::ALL
            .iter()
            .map(|r| r.template())
            .collect::<Vec<_>>(),
    );
    let line =
        (verb, template, segment).prop_map(|(v, t, s)| format!("{v} {}", t.replace("{id}", &s)));
    let seeds = seeds.to_vec();
    prop_oneof![
        vec(line, 1..8).prop_map(|lines| lines.join("\n").into_bytes()),
        proptest::sample::select(if seeds.is_empty() {
            vec![Vec::new()]
        } else {
            seeds
        }),
    ]
    .boxed()
}
