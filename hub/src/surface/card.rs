//! The agent cards the hub serves (DESIGN.md §2 "A2A surface"; A2A v1.0
//! §8): its own, and two per provider.
//!
//! A provider's card on the hub is built from three sources, each for what
//! it is the authority on:
//! * the **provider's own card** (fetched and identity-checked by the
//!   prober, [`StatusBoard::card`](crate::health::StatusBoard::card)):
//!   name, description, version, and each skill's name, description,
//!   tags and examples — peer text, copied into a card and nowhere else;
//! * the **registry**: which capabilities the provider offers *through the
//!   hub* and which of them a caller may use. A skill is listed only
//!   if a rule lets the caller use it; a skill the provider's card lists
//!   but the registry does not is never shown;
//! * the **hub**: `supportedInterfaces` (the hub's JSON-RPC and HTTP+JSON
//!   URLs for this provider, v1.0, and the same JSON-RPC URL for v0.3
//!   callers), the security schemes ([`security`]: the bearer token the
//!   hub knows a caller by, never the provider's, or an access token of
//!   the caller's own identity provider, advertised as `oauth2` with the
//!   client-credentials flow), and the capabilities the surface offers
//!   (streaming yes, push yes through the hub's relay, an extended card,
//!   the receipts extension).
//!
//! Who sees which card ([`Viewer`]):
//! * an **anonymous** client gets the *public* card: everything above but
//!   the skills (`skills: []`, `capabilities.extendedAgentCard: true`), so
//!   any A2A SDK's default discovery finds the interfaces and how to
//!   authenticate — unless the topology says `public_cards: hidden`, and
//!   then no provider has one;
//! * an authenticated **member** gets the *extended* card: the public card
//!   plus the skills a rule lets that member use. With `public_cards:
//!   hidden` a member that may use none gets nothing, exactly like a
//!   provider that does not exist.

use std::collections::HashMap;

use axum::http::HeaderMap;
use serde_json::Value;

use crate::health::StatusBoard;
use crate::identity::Identity;
use crate::registry::model::{PublicCards, Topology};
use a2a::{
    AgentCapabilities, AgentCard, AgentInterface, AgentProvider, AgentSkill,
    ClientCredentialsOAuthFlow, HttpAuthSecurityScheme, OAuth2SecurityScheme, OAuthFlows,
    SecurityScheme, TRANSPORT_PROTOCOL_GRPC, TRANSPORT_PROTOCOL_HTTP_JSON,
    TRANSPORT_PROTOCOL_JSONRPC,
};

/// Where the HTTP+JSON binding of a provider lives, under its JSON-RPC URL.
pub const REST_SUFFIX: &str = "/rest";
/// The scheme names under `securitySchemes`.
const BEARER: &str = "bearer";
const OAUTH2: &str = "oauth2";

/// The capabilities of the hub's surface: streaming (a provider that does
/// not stream answers in one event), push notifications (relayed by the
/// hub, [`crate::push`]); an extended
/// card for a provider (the skills are on it), none for the hub itself;
/// and the receipts extension: every answer carries the hub's signed
/// receipt of the exchange ([`exchange::receipt`]), which a client may
/// ignore. For a provider whose own card declares it, results the
/// requester accepts ([`exchange::acceptance`]): the hub carries the
/// criteria and the decisions, and checks the contract before the
/// requester is asked.
pub fn capabilities(extended_card: bool, acceptance: bool) -> AgentCapabilities {
    let mut extensions = vec![receipts_extension()];
    if acceptance {
        extensions.push(exchange::acceptance::card_extension(
            "Submit a task with criteria to have its result wait for your acceptance: the hub \
             first checks the result against the capability's response schema and your \
             artifactSchema and requiredArtifacts (a result that fails is rejected for you); \
             then accept it, or reject it with a reason and feedback, on the same task."
                .into(),
        ));
    }
    AgentCapabilities {
        streaming: Some(true),
        push_notifications: Some(true),
        extensions: Some(extensions),
        extended_agent_card: Some(extended_card),
    }
}

/// The receipts extension as the cards declare it.
fn receipts_extension() -> a2a::AgentExtension {
    a2a::AgentExtension {
        uri: exchange::receipt::EXTENSION_URI.into(),
        description: Some(format!(
            "Every answer's metadata carries the hub's signed receipt of the exchange \
                 under this URI ({{\"id\", \"jws\"}}: a compact JWS over the receipt's RFC 8785 \
                 claims, verifiable against the hub's {}); a party reads its receipts back at {}.",
            crate::signing::JWKS_PATH,
            exchange::receipt::PATH
        )),
        required: Some(false),
        params: None,
    }
}

/// Whether a provider's own card declares results the requester accepts.
fn declares_acceptance(own_card: Option<&Value>) -> bool {
    own_card
        .and_then(|c| c.pointer("/capabilities/extensions"))
        .and_then(Value::as_array)
        .is_some_and(|exts| {
            exts.iter().any(|e| {
                e.get("uri").and_then(Value::as_str) == Some(exchange::acceptance::EXTENSION_URI)
            })
        })
}

/// Who asks for a provider's card.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Viewer<'a> {
    /// No credential: the public card, if the topology publishes one.
    Anonymous,
    /// An authenticated member system (its id): the extended card.
    Member(&'a str),
}

/// A card's `securitySchemes` and `securityRequirements`.
type Security = (
    Option<HashMap<String, SecurityScheme>>,
    Option<Vec<HashMap<String, Vec<String>>>>,
);

/// A card's security schemes, for `viewer` of `provider`'s card (`None`:
/// the hub's own card). Always the bearer scheme: the token the hub knows
/// the caller by. Then, for each member identity provider the viewer may
/// use (its own for a member; every member's for an anonymous client), an
/// OAuth 2.0 scheme with the client-credentials flow at the issuer's token
/// endpoint, the scopes the rules ask for this provider, and the issuer's
/// metadata URL — once the hub has read that issuer's discovery document
/// (`crate::identity`; an issuer it could not read is left out). Each
/// scheme is an alternative: `securityRequirements` lists one entry each.
pub fn security(
    topology: &Topology,
    identity: &Identity,
    provider: Option<&str>,
    viewer: Viewer<'_>,
) -> Security {
    let mut schemes = HashMap::from([(
        BEARER.to_string(),
        SecurityScheme::HttpAuth(HttpAuthSecurityScheme {
            scheme: "Bearer".into(),
            description: Some(
                "The token the hub holds for the calling system (never the provider's), or an \
                 access token of the calling system's own identity provider."
                    .into(),
            ),
            bearer_format: None,
        }),
    )]);
    let mut requirements = vec![HashMap::from([(BEARER.to_string(), Vec::new())])];
    let members = topology.systems.iter().filter(|s| match viewer {
        Viewer::Anonymous => true,
        Viewer::Member(id) => s.id == id,
    });
    let mut issuers: Vec<&str> = members
        .filter_map(|s| s.oidc.as_ref().map(|o| o.issuer.as_str()))
        .collect();
    issuers.sort_unstable();
    issuers.dedup();
    let scopes = provider
        .map(|p| provider_scopes(topology, p, viewer))
        .unwrap_or_default();
    let several = issuers.len() > 1;
    for (i, issuer) in issuers.into_iter().enumerate() {
        let Some(token_url) = identity.keys().token_endpoint(issuer) else {
            continue;
        };
        let name = if several {
            format!("{OAUTH2}-{}", i + 1)
        } else {
            OAUTH2.to_string()
        };
        let scheme = OAuth2SecurityScheme {
            flows: OAuthFlows::ClientCredentials(ClientCredentialsOAuthFlow {
                token_url,
                scopes: scopes
                    .iter()
                    .map(|s| {
                        (
                            s.clone(),
                            format!("calls the capabilities whose rule asks `{s}`"),
                        )
                    })
                    .collect(),
                refresh_url: None,
            }),
            description: Some(format!(
                "A member system's own identity provider ({issuer}): its client-credentials \
                 access token for the hub, sent as a bearer token."
            )),
            oauth2_metadata_url: Some(format!(
                "{}/.well-known/openid-configuration",
                issuer.trim_end_matches('/')
            )),
        };
        requirements.push(HashMap::from([(name.clone(), scopes.clone())]));
        schemes.insert(name, SecurityScheme::OAuth2(scheme));
    }
    (Some(schemes), Some(requirements))
}

/// The scopes the rules of `provider` ask of `viewer` (every consumer's,
/// for an anonymous client), sorted, once each.
fn provider_scopes(topology: &Topology, provider: &str, viewer: Viewer<'_>) -> Vec<String> {
    let mut scopes: Vec<String> = topology
        .rules
        .iter()
        .filter(|r| r.provider == provider)
        .filter(|r| match viewer {
            Viewer::Anonymous => true,
            Viewer::Member(id) => r.consumers.iter().any(|c| c == id),
        })
        .filter_map(|r| r.scope.clone())
        .collect();
    scopes.sort_unstable();
    scopes.dedup();
    scopes
}

/// A card as JSON that both SDK lines read: the v1.0 card, plus every
/// field of its v0.3 translation ([`bridge::card_to_v03`]) that v1.0 does
/// not have (`url`, `protocolVersion`, `preferredTransport`, `security`),
/// and each security scheme carrying its v0.3 shape (`type`, `scheme`)
/// beside the v1.0 one. A v1.0 reader ignores the v0.3 fields when
/// `supportedInterfaces` is there; a v0.3 reader ignores the v1.0 ones
/// (measured with a2a-sdk 1.3 and 0.3, see NOTES.md).
///
/// [`bridge::card_to_v03`]: crate::bridge::card_to_v03
pub fn both_versions(card: &AgentCard) -> Value {
    let mut v1 = serde_json::to_value(card).unwrap_or(Value::Null);
    let v03 = match crate::bridge::card_to_v03(v1.clone()) {
        Ok(Value::Object(v03)) => v03,
        Ok(_) | Err(_) => {
            tracing::warn!("a provider card has no v0.3 form; serving v1.0 only");
            return v1;
        }
    };
    let Some(obj) = v1.as_object_mut() else {
        return v1;
    };
    for (key, value) in v03 {
        match (obj.get_mut(&key), value) {
            (None, value) => {
                obj.insert(key, value);
            }
            // One entry per scheme name, in both shapes (their keys differ).
            (Some(Value::Object(schemes)), Value::Object(v03_schemes))
                if key == "securitySchemes" =>
            {
                for (name, v03_scheme) in v03_schemes {
                    if let (Some(Value::Object(entry)), Value::Object(extra)) =
                        (schemes.get_mut(&name), v03_scheme)
                    {
                        for (k, v) in extra {
                            entry.entry(k).or_insert(v);
                        }
                    }
                }
            }
            _ => {}
        }
    }
    v1
}

/// The URL of a provider's JSON-RPC binding on the hub.
pub fn jsonrpc_url(hub_base: &str, provider: &str) -> String {
    format!("{}/a2a/{provider}", hub_base.trim_end_matches('/'))
}

/// The URL a provider's card names as its JSON-RPC interface for a
/// request: the provider's own host when the request came by it
/// ([`crate::net::provider_hosts`]), else its path on the hub's address
/// the request reached.
pub fn interface_url(identity: &Identity, headers: &HeaderMap, provider: &str) -> String {
    identity
        .public()
        .and_then(|p| p.provider_host(headers))
        .filter(|h| h.provider == provider)
        .map(|h| h.origin)
        .unwrap_or_else(|| jsonrpc_url(&identity.base(headers), provider))
}

/// The hub's own card: who it is and how to reach a provider through it.
/// It lists no skills: the hub's skills are its providers', each on the
/// provider's own card, shown to callers who may use them.
pub fn hub_card(hub_base: &str, topology: &Topology, identity: &Identity) -> AgentCard {
    let base = hub_base.trim_end_matches('/');
    let hub_id = &topology.hub.id;
    let (security_schemes, security_requirements) =
        security(topology, identity, None, Viewer::Anonymous);
    let own_host = identity
        .public()
        .and_then(|p| p.provider_origin(base, "{provider}"))
        .map(|origin| format!(" and at the root of its own host, {origin}"))
        .unwrap_or_default();
    AgentCard {
        name: "Wall Street hub".into(),
        description: format!(
            "The A2A exchange hub `{hub_id}`. Each member system is reached at \
             {base}/a2a/{{provider}} (agent card at \
             {base}/a2a/{{provider}}/.well-known/agent-card.json){own_host}, with the bearer token \
             the hub issued to the calling system; the card lists the skills that caller may use, \
             and its interfaces (JSON-RPC, HTTP+JSON, gRPC)."
        ),
        version: env!("CARGO_PKG_VERSION").into(),
        supported_interfaces: Vec::new(),
        capabilities: capabilities(false, false),
        default_input_modes: modes(),
        default_output_modes: modes(),
        skills: Vec::new(),
        provider: Some(AgentProvider {
            organization: "Wall Street".into(),
            url: base.to_string(),
        }),
        documentation_url: None,
        icon_url: None,
        security_schemes,
        security_requirements,
        signatures: None,
    }
}

fn modes() -> Vec<String> {
    exchange::wire::ACCEPTED_MEDIA_TYPES
        .iter()
        .map(|m| m.to_string())
        .collect()
}

/// The card of `provider` as `viewer` sees it through the hub (see the
/// module doc); `None` when the registry has no such provider, when the
/// topology hides public cards from an anonymous viewer, or when it hides
/// them and no rule lets the member use any of the provider's skills. The
/// viewer cannot tell these apart. `interface` is the JSON-RPC URL the
/// card names ([`interface_url`]); HTTP+JSON is under it.
pub fn provider_card(
    interface: &str,
    topology: &Topology,
    identity: &Identity,
    board: &StatusBoard,
    provider: &str,
    viewer: Viewer<'_>,
) -> Option<AgentCard> {
    let system = topology
        .system(provider)
        .filter(|s| !s.provides.is_empty())?;
    let hidden = topology.hub.public_cards == PublicCards::Hidden;
    if hidden && viewer == Viewer::Anonymous {
        return None;
    }
    let own = board.card(provider);
    let own_card = own.as_ref().map(|c| &c.card);
    let own_skill = |id: &str| {
        own_card
            .and_then(|c| c.get("skills"))
            .and_then(Value::as_array)
            .and_then(|skills| {
                skills
                    .iter()
                    .find(|s| s.get("id").and_then(Value::as_str) == Some(id))
            })
            .and_then(|s| serde_json::from_value::<AgentSkill>(s.clone()).ok())
    };
    let caller = match viewer {
        Viewer::Anonymous => None,
        Viewer::Member(id) => Some(id),
    };
    let skills: Vec<AgentSkill> = system
        .provides
        .iter()
        .filter(|cap| caller.is_some_and(|c| topology.permits(c, cap, provider)))
        .map(|cap| {
            let registry = topology.capability(cap);
            let mut skill = own_skill(cap).unwrap_or_else(|| AgentSkill {
                id: cap.clone(),
                name: cap.clone(),
                description: registry.map(|c| c.description.clone()).unwrap_or_default(),
                tags: Vec::new(),
                examples: None,
                input_modes: None,
                output_modes: None,
                security_requirements: None,
            });
            // The provider's card may not redefine what the id is.
            skill.id.clone_from(cap);
            skill.security_requirements = None;
            // The registry's kind (`data-share`, `consult`) as a tag.
            let kind = registry
                .and_then(|c| serde_json::to_value(c.kind).ok())
                .and_then(|v| v.as_str().map(str::to_string));
            if let Some(kind) = kind {
                if !skill.tags.contains(&kind) {
                    skill.tags.push(kind);
                }
            }
            skill
        })
        .collect();
    if hidden && skills.is_empty() {
        return None;
    }
    let text = |field: &str| {
        own_card
            .and_then(|c| c.get(field))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let url = interface.to_string();
    let mut v03 = AgentInterface::new(url.clone(), TRANSPORT_PROTOCOL_JSONRPC);
    v03.protocol_version = "0.3".into();
    let (security_schemes, security_requirements) =
        security(topology, identity, Some(provider), viewer);
    Some(AgentCard {
        name: text("name").unwrap_or_else(|| system.name.clone()),
        description: text("description")
            .unwrap_or_else(|| format!("{} through the Wall Street hub.", system.name)),
        version: text("version").unwrap_or_else(|| "unknown".into()),
        supported_interfaces: vec![
            AgentInterface::new(url.clone(), TRANSPORT_PROTOCOL_JSONRPC),
            AgentInterface::new(format!("{url}{REST_SUFFIX}"), TRANSPORT_PROTOCOL_HTTP_JSON),
            grpc_interface(&url, provider),
            v03,
        ],
        capabilities: capabilities(true, declares_acceptance(own_card)),
        default_input_modes: modes(),
        default_output_modes: modes(),
        skills,
        provider: Some(AgentProvider {
            organization: system.name.clone(),
            url,
        }),
        documentation_url: None,
        icon_url: None,
        security_schemes,
        security_requirements,
        signatures: None,
    })
}

/// The gRPC interface beside the JSON-RPC one at `url`: the same
/// address as a gRPC target (`host:port`; `https://` kept for TLS), the
/// provider as its tenant (one gRPC service serves every provider).
fn grpc_interface(url: &str, provider: &str) -> AgentInterface {
    let origin = url::Url::parse(url)
        .map(|u| u.origin().ascii_serialization())
        .unwrap_or_else(|_| url.to_string());
    let mut grpc = AgentInterface::new(origin, TRANSPORT_PROTOCOL_GRPC);
    grpc.tenant = Some(provider.to_string());
    grpc
}

/// The media type of an A2A agent card in an AI catalog entry.
const A2A_CARD_TYPE: &str = "application/a2a-agent-card+json";

/// The hub's AI catalog (`/.well-known/ai-catalog.json`, the shape of the
/// Agent Resource Discovery drafts: `specVersion`, `host`, `entries`): the
/// hub's own card, then one entry per provider with a public card, each
/// pointing at that card. With `public_cards: hidden` it lists the hub
/// alone.
pub fn catalog(
    hub_base: &str,
    topology: &Topology,
    identity: &Identity,
    board: &StatusBoard,
) -> Value {
    let base = hub_base.trim_end_matches('/');
    let authority = base
        .split_once("://")
        .map_or(base, |(_, rest)| rest)
        .to_string();
    let hub_id = &topology.hub.id;
    let mut entries = vec![serde_json::json!({
        "identifier": format!("urn:air:{authority}:agent:{hub_id}"),
        "displayName": "Wall Street hub",
        "type": A2A_CARD_TYPE,
        "url": format!("{base}{}", exchange::health::CARD_PATH),
        "description": format!("The A2A exchange hub `{hub_id}`: one entry per member system follows."),
    })];
    for system in &topology.systems {
        let Some(card) = provider_card(
            &jsonrpc_url(base, &system.id),
            topology,
            identity,
            board,
            &system.id,
            Viewer::Anonymous,
        ) else {
            continue;
        };
        entries.push(serde_json::json!({
            "identifier": format!("urn:air:{authority}:agent:{}", system.id),
            "displayName": card.name,
            "type": A2A_CARD_TYPE,
            "url": format!("{}{}", jsonrpc_url(base, &system.id), exchange::health::CARD_PATH),
            "description": card.description,
            "version": card.version,
        }));
    }
    serde_json::json!({
        "specVersion": "1.0",
        "host": { "displayName": format!("Wall Street hub `{hub_id}`"), "identifier": authority },
        "entries": entries,
    })
}
