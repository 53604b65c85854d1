//! Every path the browser and the hub share, named once: the hub's `/api`
//! (its BFF and UI login) and the login page.
//!
//! Both sides use these names. The hub's axum router registers the route
//! templates (the `&str` constants, axum 0.8 syntax: `{id}` is a path
//! parameter, `{*rest}` a wildcard); the browser calls the concrete paths
//! the functions build from those same templates, with each parameter
//! percent-encoded as one segment ([`encode_segment`]: an edge id holds
//! `->` and `:`). A route changed here changes on both sides at once.
//! Each route also names its [`Rights`]: the role it needs and how far a
//! member-scoped person reaches with it ([`crate::access`]).

use crate::access::{Need, Reach, Rights, Role};

/// The prefix of everything the browser calls; the session guard covers
/// it (401 without a session), the login excepted.
pub const API: &str = "/api";
/// Any other path under [`API`]: the hub answers an API 404 there, not the
/// canvas's HTML page.
pub const API_UNKNOWN: &str = "/api/{*rest}";

/// `GET`: what the canvas draws.
pub const TOPOLOGY: &str = "/api/topology";
/// `GET`: status, topology and inbox changes as Server-Sent Events.
pub const EVENTS: &str = "/api/events";
/// `POST`: establishes an edge.
pub const EDGES: &str = "/api/edges";
/// `DELETE`: removes an edge.
pub const EDGE: &str = "/api/edges/{id}";
/// `PUT`: saves where nodes are on the canvas.
pub const POSITIONS: &str = "/api/positions";
/// `POST`: runs a data-share query on an edge.
pub const EDGE_QUERY: &str = "/api/edges/{id}/query";
/// `POST`: asks a consult edge a question.
pub const EDGE_ASK: &str = "/api/edges/{id}/ask";
/// `GET`: a data-share edge's contracts and negotiation transcripts.
pub const EDGE_CONTRACT: &str = "/api/edges/{id}/contract";
/// `POST`: the hub negotiates its own contract for a data-share edge.
pub const EDGE_NEGOTIATE: &str = "/api/edges/{id}/negotiate";
/// `GET`: the hub's inbox entries.
pub const INBOX: &str = "/api/inbox";
/// `GET`: the inbox page in one answer (entries and budget plans).
pub const INBOX_PAGE: &str = "/api/inbox/page";
/// `GET`: how many proposals wait for approval (the Inbox link's badge).
pub const INBOX_PENDING: &str = "/api/inbox/pending";
/// `POST`: approves a proposal.
pub const INBOX_APPROVE: &str = "/api/inbox/{id}/approve";
/// `POST`: rejects a proposal.
pub const INBOX_REJECT: &str = "/api/inbox/{id}/reject";
/// `GET`: an edge's metrics (calls, success rate, failures by reason…).
pub const EDGE_METRICS: &str = "/api/edges/{id}/metrics";
/// The envelope inspector of an edge: its last exchanges.
pub const EDGE_INSPECTOR: &str = "/api/edges/{id}/inspector";
/// Every edge's recent traffic.
pub const TRAFFIC: &str = "/api/traffic";
/// A system's metrics over every edge it is part of.
pub const NODE_METRICS: &str = "/api/nodes/{id}/metrics";
/// `GET` (with `?limit=`): a node's recent audit entries.
pub const NODE_AUDIT: &str = "/api/nodes/{id}/audit";

/// `GET`: which of the hub's own agents the canvas offers.
pub const AGENTS: &str = "/api/agents";
/// `GET`: the recommender's suggested connections.
pub const RECOMMENDATIONS: &str = "/api/recommendations";
/// `POST`: the data interpreter's sentence about a node.
pub const NODE_INTERPRET: &str = "/api/nodes/{id}/interpret";

/// `POST`: the hub reads a would-be member's agent card and proposes its
/// topology section.
pub const SYSTEMS_DISCOVER: &str = "/api/systems/discover";
/// `POST`: saves a system's section to the topology file (onboarding).
pub const SYSTEMS: &str = "/api/systems";
/// `DELETE`: removes a system from the topology file.
pub const SYSTEM: &str = "/api/systems/{id}";
/// `PUT`: adds a consumer to a connection rule, or takes it off.
pub const RULE_CONSUMERS: &str = "/api/rules/consumers";

/// `POST`: makes a new credential for a system (an admin's rotation).
pub const SYSTEM_CREDENTIAL: &str = "/api/systems/{id}/credential";
/// `GET`: a system's part of the hub's trail, as a verifiable export.
pub const NODE_TRAIL: &str = "/api/nodes/{id}/trail";

/// `GET`: every person who may log in, with their role; `POST`: adds one.
pub const PEOPLE: &str = "/api/people";
/// `PUT`: changes a person's role or scope; `DELETE`: removes them.
pub const PERSON: &str = "/api/people/{id}";
/// `POST`: gives a person a new password (shown once).
pub const PERSON_PASSWORD: &str = "/api/people/{id}/password";

/// `POST`: logs in (public).
pub const LOGIN: &str = "/api/login";
/// `GET`: the members whose identity provider lets their people log in
/// (public: the login page lists them).
pub const LOGIN_PROVIDERS: &str = "/api/login/providers";
/// `POST`: ends the session.
pub const LOGOUT: &str = "/api/logout";
/// `GET`: who is logged in, and the session's CSRF token.
pub const SESSION: &str = "/api/session";

/// Where the Leptos server functions live: under [`API`] (behind the
/// session guard) and apart from the hub's own routes, so neither can
/// shadow the other.
pub const FN_PREFIX: &str = "/api/fn";
/// The canvas's topology server function (`get_topology`); its
/// `#[server]` attribute needs literals, a test checks they agree.
pub const TOPOLOGY_FN: &str = "/api/fn/topology";

/// The HTTP method of an `/api` route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    /// Reads; never changes state, so never needs the CSRF token.
    Get,
    /// Creates or acts.
    Post,
    /// Replaces.
    Put,
    /// Removes.
    Delete,
}

impl Verb {
    /// Whether a request with this method changes state (and so needs the
    /// session's CSRF token and this hub's `Origin`).
    pub fn changes_state(self) -> bool {
        !matches!(self, Verb::Get)
    }

    /// The method's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "GET",
            Verb::Post => "POST",
            Verb::Put => "PUT",
            Verb::Delete => "DELETE",
        }
    }
}

/// Declares [`ApiRoute`]: one variant per `/api` route, with its method,
/// template and [`Rights`], and [`ApiRoute::ALL`] listing every variant
/// (the macro writes the list, so a variant cannot be left out of it).
macro_rules! api_routes {
    ($( $(#[$doc:meta])* $variant:ident = $verb:ident $template:ident, $need:expr, $reach:ident; )*) => {
        /// Every `/api` route the hub serves, as one table. The hub builds
        /// its router from this table, guards each route with the rights
        /// named here, and its security tests walk it, so a route added
        /// here is covered by the session, role, CSRF and origin tests
        /// without anyone listing it again.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ApiRoute {
            $( $(#[$doc])* $variant, )*
        }

        impl ApiRoute {
            /// Every route, in declaration order.
            pub const ALL: &'static [ApiRoute] = &[$( ApiRoute::$variant, )*];

            /// Its method.
            pub fn verb(self) -> Verb {
                match self {
                    $( ApiRoute::$variant => Verb::$verb, )*
                }
            }

            /// Its axum path template (`{id}` is one path segment).
            pub fn template(self) -> &'static str {
                match self {
                    $( ApiRoute::$variant => $template, )*
                }
            }

            /// Who may call it, and how far a member-scoped person reaches
            /// with it.
            pub fn rights(self) -> Rights {
                match self {
                    $( ApiRoute::$variant => Rights { need: $need, reach: Reach::$reach }, )*
                }
            }
        }
    };
}

const VIEWER: Need = Need::Role(Role::Viewer);
const OPERATOR: Need = Need::Role(Role::Operator);
const APPROVER: Need = Need::Role(Role::Approver);
const ADMIN: Need = Need::Role(Role::Admin);

api_routes! {
    /// [`TOPOLOGY`].
    Topology = Get TOPOLOGY, VIEWER, Part;
    /// [`EVENTS`].
    Events = Get EVENTS, VIEWER, Part;
    /// [`EDGES`].
    CreateEdge = Post EDGES, OPERATOR, Body;
    /// [`EDGE`].
    RemoveEdge = Delete EDGE, OPERATOR, OwnEdge;
    /// [`POSITIONS`]: the layout every canvas shares.
    SavePositions = Put POSITIONS, OPERATOR, Exchange;
    /// [`EDGE_QUERY`].
    EdgeQuery = Post EDGE_QUERY, OPERATOR, OwnEdge;
    /// [`EDGE_ASK`].
    EdgeAsk = Post EDGE_ASK, OPERATOR, OwnEdge;
    /// [`EDGE_CONTRACT`].
    EdgeContract = Get EDGE_CONTRACT, VIEWER, OwnEdge;
    /// [`EDGE_NEGOTIATE`].
    EdgeNegotiate = Post EDGE_NEGOTIATE, OPERATOR, OwnEdge;
    /// [`INBOX`].
    Inbox = Get INBOX, VIEWER, Part;
    /// [`INBOX_PAGE`].
    InboxPage = Get INBOX_PAGE, VIEWER, Part;
    /// [`INBOX_PENDING`].
    InboxPending = Get INBOX_PENDING, VIEWER, Part;
    /// [`INBOX_APPROVE`]: a decision of the hub's own inbox.
    InboxApprove = Post INBOX_APPROVE, APPROVER, Exchange;
    /// [`INBOX_REJECT`].
    InboxReject = Post INBOX_REJECT, APPROVER, Exchange;
    /// [`NODE_AUDIT`].
    NodeAudit = Get NODE_AUDIT, VIEWER, OwnNode;
    /// [`NODE_TRAIL`].
    NodeTrail = Get NODE_TRAIL, VIEWER, OwnNode;
    /// [`TRAFFIC`].
    Traffic = Get TRAFFIC, VIEWER, Part;
    /// [`EDGE_METRICS`].
    EdgeMetrics = Get EDGE_METRICS, VIEWER, OwnEdge;
    /// [`EDGE_INSPECTOR`].
    EdgeInspector = Get EDGE_INSPECTOR, VIEWER, OwnEdge;
    /// [`NODE_METRICS`].
    NodeMetrics = Get NODE_METRICS, VIEWER, OwnNode;
    /// [`AGENTS`].
    Agents = Get AGENTS, VIEWER, Part;
    /// [`RECOMMENDATIONS`].
    Recommendations = Get RECOMMENDATIONS, VIEWER, Part;
    /// [`NODE_INTERPRET`].
    NodeInterpret = Post NODE_INTERPRET, VIEWER, OwnNode;
    /// [`SYSTEMS_DISCOVER`].
    DiscoverSystem = Post SYSTEMS_DISCOVER, OPERATOR, Exchange;
    /// [`SYSTEMS`].
    AddSystem = Post SYSTEMS, OPERATOR, Exchange;
    /// [`SYSTEM`].
    RemoveSystem = Delete SYSTEM, OPERATOR, Exchange;
    /// [`SYSTEM_CREDENTIAL`].
    RotateCredential = Post SYSTEM_CREDENTIAL, ADMIN, Exchange;
    /// [`RULE_CONSUMERS`]: the rule's provider decides who may call it.
    SetRuleConsumer = Put RULE_CONSUMERS, OPERATOR, Body;
    /// [`PEOPLE`].
    People = Get PEOPLE, ADMIN, Exchange;
    /// [`PEOPLE`].
    AddPerson = Post PEOPLE, ADMIN, Exchange;
    /// [`PERSON`].
    UpdatePerson = Put PERSON, ADMIN, Exchange;
    /// [`PERSON`].
    RemovePerson = Delete PERSON, ADMIN, Exchange;
    /// [`PERSON_PASSWORD`].
    ResetPassword = Post PERSON_PASSWORD, ADMIN, Exchange;
    /// [`LOGIN`]: served without a session.
    Login = Post LOGIN, Need::Public, Part;
    /// [`LOGIN_PROVIDERS`]: served without a session.
    LoginProviders = Get LOGIN_PROVIDERS, Need::Public, Part;
    /// [`LOGOUT`].
    Logout = Post LOGOUT, VIEWER, Part;
    /// [`SESSION`].
    Session = Get SESSION, VIEWER, Part;
    /// [`TOPOLOGY_FN`]: registered by Leptos from its `#[server]` attribute.
    TopologyFn = Post TOPOLOGY_FN, VIEWER, Part;
}

impl ApiRoute {
    /// Whether the route is served without a session (the login and the
    /// list of the members' logins).
    pub fn is_public(self) -> bool {
        self.rights().need == Need::Public
    }

    /// The route `method` and `path` name (a concrete path: each `{id}`
    /// matches one segment), with the `{id}` it names.
    pub fn matching<'p>(method: &str, path: &'p str) -> Option<(ApiRoute, Option<&'p str>)> {
        ApiRoute::ALL.iter().find_map(|&route| {
            if route.verb().as_str() != method {
                return None;
            }
            match_template(route.template(), path).map(|id| (route, id))
        })
    }

    /// A concrete path of the route: each `{id}` replaced by `id`, encoded
    /// as one segment.
    pub fn path_with(self, id: &str) -> String {
        self.template().replace("{id}", &encode_segment(id))
    }
}

/// `path` against `template` segment by segment; `Some(id)` (the segment
/// at `{id}`, still percent-encoded) when it matches.
fn match_template<'p>(template: &str, path: &'p str) -> Option<Option<&'p str>> {
    let mut id = None;
    let mut t = template.split('/');
    let mut p = path.split('/');
    loop {
        match (t.next(), p.next()) {
            (None, None) => return Some(id),
            (Some("{id}"), Some(seg)) if !seg.is_empty() => id = Some(seg),
            (Some(a), Some(b)) if a == b && !a.starts_with('{') => {}
            _ => return None,
        }
    }
}

/// The login page: the only page served without a session.
pub const LOGIN_PAGE: &str = "/login";

/// The pages of the site: one per path, the same on the server (which
/// renders it) and in the browser (which hydrates it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Page {
    /// `/`: the canvas.
    Canvas,
    /// `/inbox`: the approval inbox.
    Inbox,
    /// `/people`: people and roles (an admin's).
    People,
    /// [`LOGIN_PAGE`].
    Login,
    /// Any other path.
    NotFound,
}

impl Page {
    /// Every page with a path.
    pub const ALL: [Page; 4] = [Page::Canvas, Page::Inbox, Page::People, Page::Login];

    /// The page of `path` (a trailing `/` is ignored).
    pub fn from_path(path: &str) -> Page {
        match path
            .strip_suffix('/')
            .filter(|p| !p.is_empty())
            .unwrap_or(path)
        {
            "/" | "" => Page::Canvas,
            "/inbox" => Page::Inbox,
            "/people" => Page::People,
            p if p == LOGIN_PAGE => Page::Login,
            _ => Page::NotFound,
        }
    }

    /// Its path (`/` for [`Page::NotFound`], which has none).
    pub fn path(self) -> &'static str {
        match self {
            Page::Canvas | Page::NotFound => "/",
            Page::Inbox => "/inbox",
            Page::People => "/people",
            Page::Login => LOGIN_PAGE,
        }
    }

    /// The document title.
    pub fn title(self) -> &'static str {
        match self {
            Page::Canvas => "Wall Street",
            Page::Inbox => "Inbox — Wall Street",
            Page::People => "People — Wall Street",
            Page::Login => "Log in — Wall Street",
            Page::NotFound => "Not found — Wall Street",
        }
    }
}

/// The value of `key` in a query string (`a=1&next=%2F`, with or without
/// its `?`), percent-decoded (`+` is a space); `None` when absent or not
/// UTF-8 once decoded.
pub fn query_param(query: &str, key: &str) -> Option<String> {
    query
        .strip_prefix('?')
        .unwrap_or(query)
        .split('&')
        .find_map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (percent_decode(k)? == key)
                .then(|| percent_decode(v))
                .flatten()
        })
}

/// `%XX` and `+` decoded; `None` for bytes that are not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = |c: u8| (c as char).to_digit(16);
                match (
                    b.get(i + 1).and_then(|&c| hex(c)),
                    b.get(i + 2).and_then(|&c| hex(c)),
                ) {
                    (Some(h), Some(l)) => {
                        out.push((h * 16 + l) as u8);
                        i += 2;
                    }
                    _ => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// `template` with its one `{id}` replaced by `id`, encoded as one segment.
fn with_id(template: &str, id: &str) -> String {
    template.replacen("{id}", &encode_segment(id), 1)
}

/// [`SYSTEM`] of system `id`.
pub fn system(id: &str) -> String {
    with_id(SYSTEM, id)
}

/// [`EDGE`] of edge `id`.
pub fn edge(id: &str) -> String {
    with_id(EDGE, id)
}

/// [`EDGE_QUERY`] of edge `id`.
pub fn edge_query(id: &str) -> String {
    with_id(EDGE_QUERY, id)
}

/// [`EDGE_ASK`] of edge `id`.
pub fn edge_ask(id: &str) -> String {
    with_id(EDGE_ASK, id)
}

/// [`EDGE_CONTRACT`] of edge `id`.
pub fn edge_contract(id: &str) -> String {
    with_id(EDGE_CONTRACT, id)
}

/// [`EDGE_NEGOTIATE`] of edge `id`.
pub fn edge_negotiate(id: &str) -> String {
    with_id(EDGE_NEGOTIATE, id)
}

/// [`INBOX_APPROVE`] of inbox entry `id`.
pub fn inbox_approve(id: &str) -> String {
    with_id(INBOX_APPROVE, id)
}

/// [`INBOX_REJECT`] of inbox entry `id`.
pub fn inbox_reject(id: &str) -> String {
    with_id(INBOX_REJECT, id)
}

/// [`NODE_INTERPRET`] of node `id`.
pub fn node_interpret(id: &str) -> String {
    with_id(NODE_INTERPRET, id)
}

/// [`EDGE_METRICS`] of edge `id`.
pub fn edge_metrics(id: &str) -> String {
    with_id(EDGE_METRICS, id)
}

/// [`EDGE_INSPECTOR`] of edge `id`.
pub fn edge_inspector(id: &str) -> String {
    with_id(EDGE_INSPECTOR, id)
}

/// [`NODE_METRICS`] of node `id`.
pub fn node_metrics(id: &str) -> String {
    with_id(NODE_METRICS, id)
}

/// [`SYSTEM_CREDENTIAL`] of system `id`.
pub fn system_credential(id: &str) -> String {
    with_id(SYSTEM_CREDENTIAL, id)
}

/// [`NODE_TRAIL`] of node `id`.
pub fn node_trail(id: &str) -> String {
    with_id(NODE_TRAIL, id)
}

/// [`PERSON`] of username `id`.
pub fn person(id: &str) -> String {
    with_id(PERSON, id)
}

/// [`PERSON_PASSWORD`] of username `id`.
pub fn person_password(id: &str) -> String {
    with_id(PERSON_PASSWORD, id)
}

/// One path segment as [`encode_segment`] wrote it, decoded; `None` when
/// it is not UTF-8 once decoded.
pub fn decode_segment(segment: &str) -> Option<String> {
    percent_decode(&segment.replace('+', "%2B"))
}

/// [`NODE_AUDIT`] of node `id`, asking for at most `limit` entries.
pub fn node_audit(id: &str, limit: usize) -> String {
    format!("{}?limit={limit}", with_id(NODE_AUDIT, id))
}

/// Percent-encodes one path segment (an edge id holds `->` and `:`), so it
/// reaches the hub as one segment, unchanged.
pub fn encode_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
#[path = "routes_tests.rs"]
mod tests;
