//! The parties of a loaded view, the edge's consumer first, each with its
//! state badge, its contract (or what would start one), the hub's form
//! when the hub may negotiate, and its transcript.

use leptos::prelude::*;

use super::badge::StateBadge;
use super::context::{Directory, PartyCtx};
use super::form::{HubForm, NegotiateForm};
use super::summary::{Contract, NoContract};
use super::transcript::Transcript;
use super::words::tid;
use crate::api::ApiFailure;
use crate::canvas::commands::contracts::Loader;
use crate::dto::{ContractsView, PartyContractView, RunState};

/// Every party of a loaded view, the edge's consumer first.
#[component]
pub(super) fn Parties(
    v: ContractsView,
    loader: Loader,
    error: RwSignal<Option<ApiFailure>>,
    negotiating: Memo<bool>,
    hub_form: HubForm,
) -> impl IntoView {
    // What a contract may grant: the data-share's queryable columns, as
    // the registry's input contract says them.
    let columns = expect_context::<Directory>().columns(&v.capability);
    let missing = v.negotiation.is_none().then(|| {
        view! {
            <p class="muted" data-testid="contract-no-negotiation">
                "The registry has no negotiation capability for "
                <code>{v.capability.clone()}</code>
                ": no contract can be agreed for it here."
            </p>
        }
    });
    let ctx_of = PartyCtx {
        provider: v.provider.clone(),
        negotiation: v.negotiation.clone(),
        columns,
    };
    let parties = v
        .parties
        .into_iter()
        .map(|p| {
            view! { <Party p ctx_of=ctx_of.clone() loader error negotiating hub_form/> }
        })
        .collect_view();
    view! {
        {missing}
        <div class="contract-parties">{parties}</div>
    }
}

/// One consumer's contract with the provider, its state and transcript.
#[component]
fn Party(
    p: PartyContractView,
    ctx_of: PartyCtx,
    loader: Loader,
    error: RwSignal<Option<ApiFailure>>,
    negotiating: Memo<bool>,
    hub_form: HubForm,
) -> impl IntoView {
    let names = expect_context::<Directory>();
    let c = p.consumer.clone();
    let is_hub = p.is_hub;
    let can_negotiate = is_hub && p.may_negotiate && ctx_of.negotiation.is_some();
    let (state, detail) = (p.state, p.state_detail.clone());
    let provider_name = names.name(&ctx_of.provider);
    // While the hub's POST runs its state is "negotiating", whatever the
    // last load said.
    let badge = {
        let c = c.clone();
        move || {
            let (state, detail) = if is_hub && negotiating.get() {
                (
                    RunState::Negotiating,
                    format!("The hub is negotiating with {provider_name}…"),
                )
            } else {
                (state, detail.clone())
            };
            view! { <StateBadge consumer=c.clone() state detail/> }.into_any()
        }
    };
    let contract = match p.contract.clone() {
        Some(k) => view! { <Contract consumer=c.clone() k/> }.into_any(),
        None => view! { <NoContract p=p.clone() ctx_of=ctx_of.clone() can_negotiate/> }.into_any(),
    };
    let form = can_negotiate.then(|| {
        view! {
            <NegotiateForm
                consumer=c.clone()
                columns=ctx_of.columns.clone()
                again=p.contract.is_some()
                loader
                error
                negotiating
                form=hub_form
            />
        }
        .into_any()
    });
    view! {
        <article class="contract-party" data-testid=tid("contract-party", &c) data-hub=is_hub.to_string()>
            <header class="party-head">
                <h4>
                    {names.name(&c)} " " <code class="muted">{c.clone()}</code>
                    {is_hub.then(|| view! { <span class="muted">" (the hub)"</span> })}
                </h4>
                {badge}
            </header>
            {contract}
            {form}
            {view! { <Transcript consumer=c.clone() turns=p.transcript/> }.into_any()}
        </article>
    }
    .into_any()
}
