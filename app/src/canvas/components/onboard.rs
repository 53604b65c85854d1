//! "Add a system": the operator gives a company's base URL, the hub reads
//! its agent card from the hub's side and proposes a topology section,
//! the operator confirms or edits it (kinds, who may call it, which rules
//! it joins) and saves; the hub checks the server's identity again, writes
//! its topology file and shows the new system's token once.
//!
//! Everything the card says is the company's own text: its name and
//! description are shown as untrusted text, and the section is edited as
//! plain text in a textarea, never rendered as markup. A refusal is shown
//! as the hub gave it (a validation failure names the file, line and
//! field).

use leptos::ev::SubmitEvent;
use leptos::prelude::*;

use crate::canvas::commands::systems;
use crate::canvas::labels::kind_label;
use crate::canvas::state::CanvasCtx;
use crate::dto::{OnboardingProposal, SystemAdded};
use crate::parts::Prefetch;
use crate::untrusted::UntrustedBlock;

/// The toolbar's "Add a system" button, and its panel when open.
#[component]
pub(crate) fn OnboardButton() -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let open = RwSignal::new(false);
    let allowed = crate::session::can(crate::routes::ApiRoute::DiscoverSystem);
    move || {
        allowed.get().then(|| {
            view! {
                <button
                    type="button"
                    class="text-button"
                    data-testid="onboard-open"
                    aria-expanded=move || open.get().to_string()
                    aria-controls="onboard-panel"
                    title="Onboard a company's system from its agent card"
                    disabled=move || !ctx.hydrated.get()
                    on:click=move |_| open.update(|o| *o = !*o)
                    on:pointerenter=move |_| prefetch_onboard()
                    on:focus=move |_| prefetch_onboard()
                >
                    "Add a system"
                </button>
                {move || {
                    open.get().then(|| Suspend::new(async move { onboard_part(open).await }))
                }}
            }
        })
    }
}

/// Starts fetching the panel's part ([`crate::parts`]).
fn prefetch_onboard() {
    static ONBOARD: Prefetch = Prefetch::new();
    ONBOARD.once(|| {
        let _ = lazy_preload!(onboard_part);
    });
}

/// The panel: loaded the first time it opens (or sooner,
/// [`prefetch_onboard`]).
#[lazy]
pub(crate) fn onboard_part(open: RwSignal<bool>) -> AnyView {
    view! { <OnboardPanel open/> }.into_any()
}

/// Where the panel is: reading a card, editing its proposal, or done.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Address,
    Proposal(OnboardingProposal),
    Added(SystemAdded),
}

#[component]
fn OnboardPanel(open: RwSignal<bool>) -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let url = RwSignal::new(String::new());
    let section = RwSignal::new(String::new());
    let step = RwSignal::new(Step::Address);
    let error = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);

    let read = move |ev: SubmitEvent| {
        ev.prevent_default();
        busy.set(true);
        error.set(None);
        let address = url.get_untracked();
        leptos::task::spawn_local(async move {
            match systems::discover(address).await {
                Ok(p) => {
                    section.set(p.section.clone());
                    step.set(Step::Proposal(p));
                }
                Err(f) => error.set(Some(f.describe())),
            }
            busy.set(false);
        });
    };
    let save = move |_| {
        let Step::Proposal(p) = step.get_untracked() else {
            return;
        };
        busy.set(true);
        error.set(None);
        let text = section.get_untracked();
        leptos::task::spawn_local(async move {
            match systems::add(ctx, p.base, text).await {
                Ok(added) => step.set(Step::Added(added)),
                Err(f) => error.set(Some(f.describe())),
            }
            busy.set(false);
        });
    };
    let close = move |_| open.set(false);

    let body = move || match step.get() {
        Step::Address => None,
        Step::Proposal(p) => Some(
            view! {
                <ProposalView proposal=p section/>
                <div class="drawer-actions">
                    <button
                        type="button"
                        data-testid="onboard-save"
                        disabled=move || busy.get()
                        on:click=save
                    >
                        "Save to the topology"
                    </button>
                </div>
            }
            .into_any(),
        ),
        Step::Added(added) => Some(view! { <AddedView added/> }.into_any()),
    };
    view! {
        <aside
            class="onboard"
            id="onboard-panel"
            data-testid="onboard"
            aria-labelledby="onboard-title"
            aria-busy=move || busy.get().to_string()
        >
            <header class="drawer-head">
                <div>
                    <p class="eyebrow">"Onboarding"</p>
                    <h2 id="onboard-title">"Add a system"</h2>
                </div>
                <button
                    type="button"
                    class="drawer-close"
                    data-testid="onboard-close"
                    aria-label="Close onboarding"
                    on:click=close
                >
                    "×"
                </button>
            </header>
            <div class="drawer-body">
                <form class="onboard-address" on:submit=read>
                    <label>
                        "Base URL of its A2A server"
                        <input
                            type="url"
                            required=true
                            data-testid="onboard-url"
                            placeholder="http://127.0.0.1:3104"
                            prop:value=move || url.get()
                            on:input=move |ev| url.set(event_target_value(&ev))
                        />
                    </label>
                    <button type="submit" data-testid="onboard-read" disabled=move || busy.get()>
                        "Read its card"
                    </button>
                </form>
                {body}
                {move || {
                    error
                        .get()
                        .map(|e| {
                            view! {
                                <pre class="onboard-error" role="alert" data-testid="onboard-error">
                                    {e}
                                </pre>
                            }
                        })
                }}
            </div>
        </aside>
    }
}

/// The card as read, and the section to confirm.
#[component]
fn ProposalView(proposal: OnboardingProposal, section: RwSignal<String>) -> impl IntoView {
    let from = if proposal.card_name.text.is_empty() {
        proposal.system.clone()
    } else {
        proposal.card_name.text.clone()
    };
    let skills = proposal
        .skills
        .iter()
        .map(|s| {
            let kind = s.kind.map(kind_label).unwrap_or("kind not stated: confirm");
            let note = if s.existing {
                " — defined in the registry already"
            } else {
                ""
            };
            view! {
                <li data-testid="onboard-skill" data-capability=s.capability.clone()>
                    <code>{s.capability.clone()}</code>
                    " · "
                    {kind}
                    {note}
                </li>
            }
        })
        .collect_view();
    view! {
        <section class="drawer-section" data-testid="onboard-proposal" aria-label="Proposal">
            <h3>"Its card"</h3>
            <dl>
                <dt>"System"</dt>
                <dd data-testid="onboard-system">{proposal.system.clone()}</dd>
                <dt>"Signature"</dt>
                <dd>{if proposal.signed { "signed (checked by the prober once it is a member)" } else { "unsigned" }}</dd>
            </dl>
            <UntrustedBlock text=proposal.card_name.clone() from_name=from.clone() testid="onboard-card-name"/>
            {(!proposal.card_description.text.is_empty()).then(|| view! {
                <UntrustedBlock text=proposal.card_description.clone() from_name=from testid="onboard-card-description"/>
            })}
            <h3>"Skills"</h3>
            <ul class="onboard-skills">{skills}</ul>
            <label class="onboard-section">
                "Its topology section (checked by the hub's loader when saved)"
                <textarea
                    data-testid="onboard-section"
                    rows="22"
                    spellcheck="false"
                    prop:value=move || section.get()
                    on:input=move |ev| section.set(event_target_value(&ev))
                ></textarea>
            </label>
        </section>
    }
}

/// Done: the system is a member; its token, shown this once.
#[component]
fn AddedView(added: SystemAdded) -> impl IntoView {
    let token = added.credential.clone();
    let credential = view! {
        <p>"Its token, shown this once — give it to the company, which sets it in its peer's environment:"</p>
        <pre class="onboard-token" data-testid="onboard-token">{token.clone()}</pre>
        <pre class="onboard-export" data-testid="onboard-export">
            {format!("export {}={}", added.token_env, token)}
        </pre>
    };
    view! {
        <section
            class="drawer-section onboard-added"
            data-testid="onboard-added"
            data-system=added.system.clone()
            role="status"
        >
            <h3>{format!("{} joined the exchange", added.system)}</h3>
            {credential}
        </section>
    }
}
