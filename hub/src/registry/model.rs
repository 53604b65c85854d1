//! The shape of the topology file: every system, capability, connection
//! rule and response contract (DESIGN.md §2, "topology file").
//!
//! These types are the parsed file, secrets included by *name* only (the
//! env var that holds a token, never the token). They never leave the
//! server: the browser sees `app::dto` types built from them.

use std::sync::OnceLock;

use ipnet::IpNet;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The whole topology file.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    /// File format version; only `1` exists.
    pub version: u32,
    /// Settings of the hub itself.
    #[serde(default)]
    pub hub: HubSettings,
    /// Every system that exists. Order is kept for a deterministic layout.
    pub systems: Vec<System>,
    /// Every capability, with its kind and response contract.
    pub capabilities: Vec<Capability>,
    /// Who may consume which capability of which provider.
    #[serde(default)]
    pub rules: Vec<ConnectionRule>,
    /// Edges the hub establishes once, when its database's edge table is
    /// first created; after that, edges are made and removed on the canvas
    /// and this list is not read again. Each must be permitted by a rule.
    #[serde(default)]
    pub initial_edges: Vec<EdgeSpec>,
    /// Lookups by id, built on first use: the gateway asks [`Topology::permits`]
    /// and [`Topology::system`] on every call, so they must not scan.
    #[serde(skip)]
    #[schemars(skip)]
    index: Index,
}

/// Hub-wide settings.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct HubSettings {
    /// The id under which the hub itself appears as a consumer in rules.
    pub id: String,
    /// Deadline of a forwarded call when its capability names none.
    pub default_deadline_ms: u64,
    /// How often the prober checks each peer.
    pub probe_interval_ms: u64,
    /// How long one health probe may take before it counts as a timeout.
    pub probe_timeout_ms: u64,
    /// The auth chain's layers and their switches.
    pub auth: AuthSettings,
    /// What an anonymous client may learn at a provider's well-known card
    /// URL and in the hub's catalog (A2A v1.0 §3.3.2).
    pub public_cards: PublicCards,
}

/// Whether the hub publishes a provider's card to clients that present no
/// credential.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PublicCards {
    /// Every provider has a public card (its name, the hub's interfaces for
    /// it, security schemes; no skills) and an entry in
    /// `/.well-known/ai-catalog.json`: that it exists is public, what a
    /// caller may do there is told only to that caller.
    #[default]
    Listed,
    /// No provider has a public card: an anonymous request for any card
    /// answers exactly like one for a provider that does not exist, and
    /// the catalog lists the hub alone. A member learns of a provider only
    /// if a rule lets it use one of its skills.
    Hidden,
}

impl Default for HubSettings {
    fn default() -> Self {
        Self {
            id: "hub".into(),
            default_deadline_ms: 2_000,
            probe_interval_ms: 1_000,
            probe_timeout_ms: 800,
            auth: AuthSettings::default(),
            public_cards: PublicCards::default(),
        }
    }
}

/// Switches of the auth chain (IP allowlist → bearer token → mTLS).
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct AuthSettings {
    /// Every caller must present its client certificate (`System::mtls`);
    /// off, only the systems that register one are asked for it.
    pub mtls: bool,
}

/// What the canvas draws a system as. `System` is the generic type that
/// needs no frontend code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NodeType {
    #[default]
    System,
}

/// One independent system with its own A2A server.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct System {
    /// Stable id used in rules, headers and trails (`vendorcorp`).
    pub id: String,
    /// Display name (`VendorCorp`).
    pub name: String,
    #[serde(default)]
    pub node_type: NodeType,
    /// Where its A2A server listens. Internal: never sent to a browser.
    pub base_url: String,
    /// Name of the env var holding this system's bearer token. The token
    /// authenticates the system to the hub and the hub to the system.
    pub token_env: String,
    /// The system's own identity provider: an access token its issuer
    /// signed for the hub names this system as a caller, beside (or
    /// instead of) the static token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oidc: Option<OidcMember>,
    /// The client certificate this system presents when it calls the hub
    /// over TLS: the auth chain's mTLS layer checks it on every call of
    /// this system (and of every system when `hub.auth.mtls` is on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtls: Option<MtlsMember>,
    /// Source networks this system may call the hub from.
    #[schemars(with = "Vec<String>")]
    pub ip_allowlist: Vec<IpNet>,
    #[serde(default)]
    pub provides: Vec<String>,
    #[serde(default)]
    pub consumes: Vec<String>,
    #[serde(default)]
    pub agents: Vec<Agent>,
    #[serde(default)]
    pub datasources: Vec<Datasource>,
    /// Its MCP data plane, if it runs one: a separate process the hub
    /// fronts at `/mcp/{system}`.
    #[serde(default)]
    pub data_plane: Option<DataPlane>,
}

/// Which client certificates are a member's: a pinned public key, or any
/// certificate its own CA issued (at least one of the two).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MtlsMember {
    /// Pinned keys: the base64 SHA-256 of a certificate's
    /// SubjectPublicKeyInfo (`crate::net::tls::spki_sha256`), so a renewed
    /// certificate with the same key still passes.
    #[serde(default)]
    pub spki_sha256: Vec<String>,
    /// The member's CA, a PEM file (relative to the topology file): a
    /// certificate it issued, valid now, for client authentication, is
    /// this system's. Read with each generation of the topology.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca: Option<String>,
}

/// A member's identity provider, as the topology names it. The hub reads
/// the issuer's discovery document for its keys; it never holds a secret
/// of the member.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OidcMember {
    /// The issuer (`iss`), exactly as its tokens say it; its discovery
    /// document is at `{issuer}/.well-known/openid-configuration`.
    pub issuer: String,
    /// Audiences (`aud`) the hub accepts from this issuer besides its own
    /// resource URLs (see `crate::identity`).
    #[serde(default)]
    pub audience: Vec<String>,
    /// The OAuth clients of this system at its issuer (`client_id`, or
    /// `azp` when a token has no `client_id`).
    pub client_ids: Vec<String>,
    /// The company's people log in to the canvas through this issuer:
    /// bound to this system, with the role its claim names
    /// (`ui_auth::oidc`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ui_login: Option<UiLogin>,
}

/// How a member company's people log in to the canvas through its own
/// identity provider (OpenID Connect's authorization code flow with PKCE;
/// the hub is a public client: it holds no secret of the company's).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UiLogin {
    /// The hub's client at the issuer (registered there with the redirect
    /// URI `{hub}/login/oidc/callback`).
    pub client_id: String,
    /// The ID token claim naming the person's role (`viewer`, `operator`
    /// or `approver`; absent: `viewer`; never `admin`).
    #[serde(default = "UiLogin::default_role_claim")]
    pub role_claim: String,
}

impl UiLogin {
    fn default_role_claim() -> String {
        "ws_role".into()
    }
}

/// Where a system's MCP data plane listens and which data-share it serves:
/// its `query_records` tool is governed by that capability's rules, input
/// schema, deadline and response schema, and by the provider's contracts.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DataPlane {
    /// `http://host:port` of the data plane; MCP Streamable HTTP at
    /// [`exchange::wire::MCP_PATH`]. Internal: never sent to a browser.
    pub base_url: String,
    /// The data-share it serves (`orders.query`).
    pub capability: String,
}

/// An agent a system runs (drawn hanging off its system node).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Agent {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub description: String,
}

/// A datasource a system owns (drawn hanging off its system node).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Datasource {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub description: String,
}

/// The kinds of capability (DESIGN.md §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CapabilityKind {
    /// Pull the provider's data through a query call.
    DataShare,
    /// Ask; the answer is a read-only conclusion. Idempotent by request id.
    Consult,
    /// Agree a data contract for a data-share: strict
    /// messages, one negotiation per A2A `contextId`, the grant written
    /// by the provider.
    Negotiation,
    /// Long-running work (DESIGN.md §2, "task"): accepted as an
    /// A2A task under the caller's idempotency key and a deadline, with a
    /// lifecycle the provider reports and the hub records.
    Task,
}

/// A kind's name as the topology file spells it.
pub fn kind_name(kind: CapabilityKind) -> &'static str {
    match kind {
        CapabilityKind::DataShare => "data-share",
        CapabilityKind::Consult => "consult",
        CapabilityKind::Negotiation => "negotiation",
        CapabilityKind::Task => "task",
    }
}

/// A named capability and its contract.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Capability {
    /// `orders.query`.
    pub id: String,
    pub kind: CapabilityKind,
    #[serde(default)]
    pub description: String,
    /// For a `negotiation`: the data-share whose contracts it negotiates.
    #[serde(default)]
    pub negotiates: Option<String>,
    /// Deadline of one call; the hub default applies when absent.
    #[serde(default)]
    pub deadline_ms: Option<u64>,
    /// For a `task`: the longest a task may live, from acceptance to a
    /// final state. A caller's own deadline is capped by it.
    #[serde(default)]
    pub task_deadline_ms: Option<u64>,
    /// JSON Schema every response must satisfy (else `SCHEMA_INVALID`).
    pub response_schema: serde_json::Value,
    /// JSON Schema a caller's input must satisfy before the hub forwards
    /// it (else `NOT_PERMITTED`): the hub's half of a data-share grant, e.g.
    /// which columns a query may group by. Absent: the provider decides.
    #[serde(default)]
    pub input_schema: Option<serde_json::Value>,
    /// What of a response may reach a browser, and how redacted; which
    /// fields are untrusted free text. Absent: nothing reaches a browser.
    #[serde(default)]
    pub contract: Option<crate::contract::model::DataContract>,
}

/// The lookups of one [`Topology`], built from its lists on first use.
///
/// A topology is read once and then shared immutably (the registry swaps
/// whole generations). Code that edits one edits a clone, and a clone
/// starts without an index, so an index never describes lists other than
/// the ones beside it. It takes no part in equality or in the file.
#[derive(Default)]
struct Index(OnceLock<Lookup>);

/// Keys are the registry's own ids (inserted from the file, never from a
/// caller), so a fast hash without flood resistance is enough.
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

struct Lookup {
    /// System id → position in `systems` (the first, if repeated; the
    /// validator refuses repeats).
    systems: HashMap<String, usize>,
    /// Capability id → position in `capabilities`.
    capabilities: HashMap<String, usize>,
    /// Provider → capability → the consumers a rule names, each with what
    /// that rule grants it.
    consumers: HashMap<String, HashMap<String, HashMap<String, Grant>>>,
}

/// What the rule that names a consumer grants it along one edge.
struct Grant {
    /// The scope an OIDC access token must carry (if the rule names one).
    scope: Option<String>,
    /// How much it may call (`None`: the rule sets no limit).
    limits: Option<Limits>,
}

impl Lookup {
    fn of(t: &Topology) -> Self {
        let mut systems = HashMap::default();
        for (at, s) in t.systems.iter().enumerate() {
            systems.entry(s.id.clone()).or_insert(at);
        }
        let mut capabilities = HashMap::default();
        for (at, c) in t.capabilities.iter().enumerate() {
            capabilities.entry(c.id.clone()).or_insert(at);
        }
        let mut consumers: HashMap<String, HashMap<String, HashMap<String, Grant>>> =
            HashMap::default();
        for r in &t.rules {
            let by_consumer = consumers
                .entry(r.provider.clone())
                .or_default()
                .entry(r.capability.clone())
                .or_default();
            for c in &r.consumers {
                by_consumer.entry(c.clone()).or_insert_with(|| Grant {
                    scope: r.scope.clone(),
                    limits: r.limits(),
                });
            }
        }
        Self {
            systems,
            capabilities,
            consumers,
        }
    }
}

impl Clone for Index {
    /// A clone may be edited: it rebuilds its own index when first asked.
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl PartialEq for Index {
    /// Derived data: two topologies with equal lists are equal.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.get().is_some() {
            "Index(built)"
        } else {
            "Index(not built)"
        })
    }
}

/// `capability + provider + legal consumers`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConnectionRule {
    pub capability: String,
    pub provider: String,
    pub consumers: Vec<String>,
    /// The OAuth scope a consumer's OIDC access token must carry to use
    /// this capability (a static token carries no scopes and is not asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// At most this many calls per fixed window, for each consumer named
    /// (see the quotas module).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limit: Option<RateLimit>,
    /// At most this many calls per UTC day, for each consumer named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daily_quota: Option<u64>,
}

/// `rate_limit: { calls: 60, seconds: 60 }`: at most `calls` calls in each
/// fixed window of `seconds` seconds (windows start at multiples of
/// `seconds` since the Unix epoch).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RateLimit {
    pub calls: u64,
    pub seconds: u64,
}

/// How much one consumer may call along one edge: what a rule's
/// `rate_limit` and `daily_quota` say, together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub rate: Option<RateLimit>,
    /// Calls per UTC day.
    pub daily: Option<u64>,
}

impl ConnectionRule {
    /// The limits this rule sets on each consumer it names (`None`: none).
    pub fn limits(&self) -> Option<Limits> {
        (self.rate_limit.is_some() || self.daily_quota.is_some()).then_some(Limits {
            rate: self.rate_limit,
            daily: self.daily_quota,
        })
    }
}

/// An established connection `consumer → provider` for one capability, as
/// the topology file seeds it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EdgeSpec {
    pub consumer: String,
    pub provider: String,
    pub capability: String,
}

impl EdgeSpec {
    /// The edge's stable id, `<consumer>-><provider>:<capability>`.
    pub fn id(&self) -> String {
        edge_id(&self.consumer, &self.provider, &self.capability)
    }
}

/// The id of the edge `consumer → provider` for `capability`: stable across
/// reloads and restarts, and what the canvas addresses an edge by. Its
/// format is written once, in the browser's DTOs, for the hub and the
/// canvas alike.
pub use app::dto::edge_id;

impl Capability {
    /// The parts of this entry that `crate::contract` compiles.
    pub fn contract_spec(&self) -> crate::contract::Spec<'_> {
        crate::contract::Spec {
            response_schema: &self.response_schema,
            input_schema: self.input_schema.as_ref(),
            contract: self.contract.as_ref(),
        }
    }
}

impl Topology {
    /// The system with this id. O(1).
    pub fn system(&self, id: &str) -> Option<&System> {
        let at = *self.index().systems.get(id)?;
        self.systems.get(at)
    }

    /// The capability with this id. O(1).
    pub fn capability(&self, id: &str) -> Option<&Capability> {
        let at = *self.index().capabilities.get(id)?;
        self.capabilities.get(at)
    }

    /// Whether a rule lets `consumer` use `capability` of `provider`: the
    /// rule check of every call, three hash lookups whatever the number of
    /// systems and rules.
    pub fn permits(&self, consumer: &str, capability: &str, provider: &str) -> bool {
        self.index()
            .consumers
            .get(provider)
            .and_then(|by_capability| by_capability.get(capability))
            .is_some_and(|consumers| consumers.contains_key(consumer))
    }

    /// How much `consumer` may call `capability` of `provider`, when the
    /// rule that permits it sets limits: three hash lookups, and `None`
    /// for the many rules that set none.
    pub fn limits(&self, consumer: &str, capability: &str, provider: &str) -> Option<Limits> {
        self.index()
            .consumers
            .get(provider)?
            .get(capability)?
            .get(consumer)?
            .limits
    }

    /// The scope an OIDC access token must carry for `consumer` to use
    /// `capability` of `provider`, when the rule that permits it names one.
    pub fn required_scope(&self, consumer: &str, capability: &str, provider: &str) -> Option<&str> {
        self.index()
            .consumers
            .get(provider)?
            .get(capability)?
            .get(consumer)?
            .scope
            .as_deref()
    }

    fn index(&self) -> &Lookup {
        self.index.0.get_or_init(|| Lookup::of(self))
    }

    /// The deadline of a call to `capability`, in milliseconds.
    pub fn deadline_ms(&self, capability: &str) -> u64 {
        self.capability(capability)
            .and_then(|c| c.deadline_ms)
            .unwrap_or(self.hub.default_deadline_ms)
    }
}
