//! Data transfer objects: the only shapes of data a browser ever receives.
//!
//! Every field here is whitelisted on purpose. Nothing secret (tokens, token
//! env var names, internal base URLs, IP allowlists) has a field to live in.
//!
//! This module compiles for the browser (wasm) as well as for the hub, so it
//! depends on serde and on the plain vocabulary of the `exchange` crate
//! (its reason codes) only.
//!
//! One room per concern, cut as the hub's side that builds them is
//! (`hub::web::bff`, one file each). Every type is re-exported here, so
//! its path is `app::dto::Type` whichever room holds it.
//!
//! | room | what a browser sees from it |
//! |------|-----------------------------|
//! | `topology` | `GET /api/topology`: nodes, edges of the map, rules, capabilities, health |
//! | `edges` | an edge's id ([`edge_id`]); making an edge; where nodes sit |
//! | `events` | `GET /api/events`: what keeps an open canvas current |
//! | `traffic` | what crossed each edge, metrics, the envelope inspector |
//! | `drawers` | a query's result, a consult's answer, audit lines; how a call ended |
//! | `contracts` | a data-share's contracts and negotiations |
//! | `inbox` | the approval inbox: proposed actions, budget plans |
//! | `approvals` | how many proposals wait for a decision |
//! | `agents` | the hub's own agents: suggestions, interpretations, transcripts |
//! | `systems` | onboarding, removing a system, editing rules, a new credential |
//! | `people` | the people page: people, roles, a new password |
//! | `login` | the login form, who offers a login, the session |
//! | `error` | the body of every refused `/api` request |
//! | `untrusted` | a peer's free text, wherever it shows |
//!
//! Arrows point one way: `topology` uses `edges`; `events` uses `topology`
//! and `traffic`; `contracts` uses `drawers`, which uses `inbox`; `agents`
//! and `systems` use `topology`; `untrusted` is used by every room that
//! shows a peer's words and uses none.

mod agents;
mod approvals;
mod contracts;
mod drawers;
mod edges;
mod error;
mod events;
mod inbox;
mod login;
mod people;
mod systems;
mod topology;
mod traffic;
mod untrusted;

/// The nine reasons a call can end `not_connected`: defined once in the
/// shared `exchange` crate (the hub produces them, peers read them, the
/// canvas draws them), re-exported here for the browser.
pub use exchange::reason::ReasonCode;

pub use agents::{
    AgentsView, InterpretationView, RankedBy, RecommendationsView, RunOutcomeView, StepView,
    SuggestionView, TranscriptView,
};
pub use approvals::InboxPendingView;
pub use contracts::{
    ContractSummaryView, ContractsView, NegotiateRequest, NegotiationMessageView,
    PartyContractView, RunState, TurnView,
};
pub use drawers::{
    AskRequest, AuditEntryView, CallOutcomeView, ConsultView, Fact, QueryRequest, QueryResultView,
    QueryRow,
};
pub use edges::{edge_id, CreateEdgeRequest, NodePosition, SavePositionsRequest};
pub use error::ApiError;
pub use events::HubEvent;
pub use inbox::{ApprovalStatus, BudgetPlanView, InboxPageView, ProposedActionView};
pub use login::{LoginProviderView, LoginProvidersView, LoginRequest, SessionView};
pub use people::{NewPersonRequest, PasswordIssued, PeopleView, PersonUpdate, PersonView};
pub use systems::{
    AddSystemRequest, CredentialIssued, DiscoverRequest, OnboardingProposal, ProposedSkill,
    RuleConsumerRequest, SystemAdded, TopologyBase,
};
pub use topology::{
    CapabilityKind, CapabilityRef, CapabilityView, CardSignatureView, EdgeView, InputGrant,
    NodeKind, NodeStatus, NodeView, RuleView, TopologyView,
};
pub use traffic::{
    EdgeTrafficView, ExchangeView, InspectorView, LastCallView, MetricsView, ObservedEdgeView,
    ReasonCountView, TrafficOutcome, TrafficView,
};
pub use untrusted::UntrustedText;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reason_codes_use_screaming_snake_case() {
        for code in ReasonCode::ALL {
            let json = serde_json::to_string(&code).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", code.as_str()));
        }
    }
}
