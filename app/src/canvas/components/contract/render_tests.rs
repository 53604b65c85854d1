//! The panel's markup as the server renders it, from a fixed view: every
//! party, its test ids, and peer words escaped, never markup.

use leptos::prelude::*;

use super::context::Directory;
use super::form::HubForm;
use super::party::Parties;
use crate::api::ApiFailure;
use crate::canvas::commands::contracts::Loader;
use crate::canvas::state::CanvasCtx;
use crate::dto::{
    CallOutcomeView, CapabilityKind, CapabilityRef, CapabilityView, ContractSummaryView,
    ContractsView, InputGrant, NegotiationMessageView, NodeKind, NodeView, PartyContractView,
    ReasonCode, RuleView, RunState, TopologyView, TurnView, UntrustedText,
};

const EDGE: &str = "buyercorp->vendorcorp:orders.query";

fn topology() -> TopologyView {
    let mut vendor = NodeView::healthy("vendorcorp", "VendorCorp", NodeKind::System, None);
    vendor.provides = vec![CapabilityRef {
        id: "orders.query".into(),
        kind: CapabilityKind::DataShare,
    }];
    TopologyView {
        hub_id: "hub".into(),
        nodes: vec![
            NodeView::healthy("hub", "Wall Street hub", NodeKind::Hub, None),
            vendor,
            NodeView::healthy("buyercorp", "BuyerCorp", NodeKind::System, None),
            NodeView::healthy("helpdesk", "Helpdesk", NodeKind::System, None),
        ],
        edges: vec![],
        rules: vec![RuleView {
            capability: "orders.query".into(),
            kind: CapabilityKind::DataShare,
            provider: "vendorcorp".into(),
            consumers: vec!["buyercorp".into(), "hub".into()],
        }],
        capabilities: vec![CapabilityView {
            id: "orders.query".into(),
            kind: CapabilityKind::DataShare,
            description: String::new(),
            deadline_ms: 2000,
            input_grants: vec![
                InputGrant {
                    field: "aggregate.column".into(),
                    allowed: vec!["order_value".into(), "region".into()],
                },
                InputGrant {
                    field: "group_by".into(),
                    allowed: vec!["region".into(), "order_date".into()],
                },
            ],
        }],
        reload_error: None,
        positions: vec![],
        layout: vec![],
        digest: String::new(),
    }
}

fn words(text: &str, from: &str) -> Option<UntrustedText> {
    Some(UntrustedText {
        text: text.into(),
        from: from.into(),
    })
}

fn message(from: &str, intent: &str, columns: &[&str], rationale: &str) -> NegotiationMessageView {
    NegotiationMessageView {
        from: from.into(),
        intent: intent.into(),
        columns: columns.iter().map(|c| c.to_string()).collect(),
        retention_days: Some(30.0),
        purpose: None,
        rationale: words(rationale, from),
    }
}

fn contracts() -> ContractsView {
    let turn = |seq, sent, reply, grant_id: Option<&str>, failure| TurnView {
        seq,
        at: "2026-01-02T10:11:12Z".into(),
        context_id: "ctx-1".into(),
        sent,
        reply,
        grant_id: grant_id.map(Into::into),
        failure,
    };
    ContractsView {
        edge: EDGE.into(),
        capability: "orders.query".into(),
        provider: "vendorcorp".into(),
        negotiation: Some("orders.negotiate".into()),
        parties: vec![
            PartyContractView {
                consumer: "buyercorp".into(),
                is_hub: false,
                may_negotiate: true,
                contract: Some(ContractSummaryView {
                    contract_id: "c-0123456789ab".into(),
                    columns: vec!["region".into(), "order_value".into()],
                    purpose: words("Budget planning", "vendorcorp"),
                    retention_days: Some(30.0),
                    expires_at: Some("2026-02-01T00:00:00Z".into()),
                    expired: false,
                }),
                state: RunState::Executing,
                state_detail: "Reads run under c-0123456789ab.".into(),
                transcript: vec![
                    turn(
                        1,
                        message(
                            "buyercorp",
                            "propose",
                            &["region", "order_id"],
                            "need <b>it</b>",
                        ),
                        Some(message(
                            "vendorcorp",
                            "counter",
                            &["region"],
                            "<script>alert(1)</script>",
                        )),
                        None,
                        None,
                    ),
                    turn(
                        2,
                        message("buyercorp", "accept", &["region"], "ok"),
                        Some(message("vendorcorp", "accept", &["region"], "granted")),
                        Some("c-0123456789ab"),
                        None,
                    ),
                ],
            },
            PartyContractView {
                consumer: "hub".into(),
                is_hub: true,
                may_negotiate: true,
                contract: None,
                state: RunState::Error,
                state_detail: "The newest negotiation failed.".into(),
                transcript: vec![turn(
                    3,
                    message("hub", "propose", &["region"], "drawer"),
                    None,
                    None,
                    Some(CallOutcomeView::NotConnected {
                        reason: ReasonCode::PeerUnreachable,
                        detail: "connection refused".into(),
                    }),
                )],
            },
        ],
    }
}

fn render(v: ContractsView, negotiating: bool) -> String {
    let owner = Owner::new();
    owner.with(|| {
        let ctx = CanvasCtx::new();
        provide_context(ctx);
        provide_context(Directory::from_view(&topology()));
        let loader = Loader::new(EDGE.into());
        let error = RwSignal::new(None::<ApiFailure>);
        let running = RwSignal::new(negotiating);
        let negotiating = Memo::new(move |_| running.get());
        let hub_form = HubForm::new(ctx, EDGE);
        view! { <Parties v loader error negotiating hub_form/> }.to_html()
    })
}

#[test]
fn parties_show_contracts_states_and_transcripts() {
    let html = render(contracts(), false);
    for id in [
        "contract-party-buyercorp",
        "contract-state-buyercorp",
        "contract-id-buyercorp",
        "transcript-buyercorp",
        "contract-party-hub",
        "contract-state-hub",
        "contract-empty-hub",
        "negotiate-hub",
        "transcript-hub",
        "turn-failure",
    ] {
        assert!(
            html.contains(&format!("data-testid=\"{id}\"")),
            "{id} in {html}"
        );
    }
    // The consumer first, then the hub.
    let (buyer, hub) = (
        html.find("contract-party-buyercorp").expect("buyer"),
        html.find("contract-party-hub").expect("hub"),
    );
    assert!(buyer < hub);
    assert!(html.contains(r#"data-state="executing""#));
    assert!(html.contains(r#"data-state="error""#));
    assert!(html.contains("c-0123456789ab"));
    assert!(html.contains("buyercorp propose"));
    assert!(html.contains("vendorcorp counter"));
    assert!(html.contains("PEER_UNREACHABLE"));
    assert!(html.contains("connection refused"));
    assert_eq!(html.matches(r#"data-testid="turn""#).count(), 3);
    // Only the hub gets a button; a member is not one to command.
    assert!(!html.contains("negotiate-buyercorp"));
    assert!(!html.contains("contract-command-buyercorp"));
    // The form asks for the data-share's columns, each once.
    assert_eq!(
        html.matches(r#"data-testid="negotiate-column-region""#)
            .count(),
        1
    );
    assert!(html.contains(r#"data-testid="negotiate-column-order_date""#));
    // (The purpose is a property the browser sets, so it is not in
    // the HTML; the end-to-end test checks it.)
}

#[test]
fn peer_words_are_escaped_and_marked() {
    let html = render(contracts(), false);
    assert!(!html.contains("<script>"));
    assert!(!html.contains("<b>it</b>"));
    assert!(html.contains("&lt;script&gt;"));
    assert!(html.contains("from VendorCorp, unverified"));
    assert!(html.contains("from BuyerCorp, unverified"));
}

#[test]
fn a_member_without_a_contract_is_shown_its_command() {
    let mut v = contracts();
    v.parties[0].contract = None;
    let html = render(v, false);
    assert!(html.contains(r#"data-testid="contract-empty-buyercorp""#));
    assert!(html.contains(
        "peer negotiate --config config/peers/buyercorp.yaml --provider vendorcorp \
         --capability orders.negotiate --columns order_value,region,order_date"
    ));
    assert!(!html.contains("negotiate-buyercorp\""));
}

#[test]
fn without_a_negotiation_capability_nothing_can_start() {
    let mut v = contracts();
    v.negotiation = None;
    let html = render(v, false);
    assert!(html.contains("contract-no-negotiation"));
    assert!(!html.contains(r#"data-testid="negotiate-hub""#));
}

#[test]
fn the_hub_negotiating_shows_so_while_its_post_runs() {
    let html = render(contracts(), true);
    let hub = &html[html.find("contract-party-hub").expect("hub")..];
    assert!(hub.contains(r#"data-state="negotiating""#));
    assert!(hub.contains("Negotiating…"));
}
