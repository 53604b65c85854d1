//! A system's place in the exchange, in its drawer: the rules it may call
//! (each can be taken away), the rules it could join (one can be given),
//! and its removal from the exchange. Each is an edit of the hub's
//! topology file made against the version this drawing was read from
//! ([`TopologyView::digest`](crate::dto::TopologyView)): if the file
//! changed since, the hub says so and nothing is written.

use leptos::prelude::*;

use crate::canvas::commands::systems;
use crate::canvas::interaction::SceneCtx;
use crate::canvas::state::CanvasCtx;
use crate::dto::RuleConsumerRequest;

/// One rule as the drawer lists it: capability and provider.
#[derive(Debug, Clone, PartialEq, Eq)]
struct RuleRef {
    capability: String,
    provider: String,
}

impl RuleRef {
    fn key(&self) -> String {
        format!("{}@{}", self.capability, self.provider)
    }
}

/// The membership section of system `system`'s drawer.
#[component]
pub(crate) fn MembershipSection(system: String) -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let scene = expect_context::<SceneCtx>();
    let base = scene.view.digest.clone();
    let (calls, joinable): (Vec<RuleRef>, Vec<RuleRef>) = {
        let mut calls = Vec::new();
        let mut joinable = Vec::new();
        for r in &scene.view.rules {
            let rule = RuleRef {
                capability: r.capability.clone(),
                provider: r.provider.clone(),
            };
            if r.consumers.contains(&system) {
                calls.push(rule);
            } else if r.provider != system {
                joinable.push(rule);
            }
        }
        (calls, joinable)
    };
    let error = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let confirm = RwSignal::new(false);
    let choice = RwSignal::new(0usize);

    let change = {
        let (system, base) = (system.clone(), base.clone());
        move |rule: RuleRef, member: bool| {
            busy.set(true);
            error.set(None);
            let req = RuleConsumerRequest {
                base: base.clone(),
                capability: rule.capability,
                provider: rule.provider,
                consumer: system.clone(),
                member,
            };
            leptos::task::spawn_local(async move {
                if let Err(f) = systems::set_consumer(ctx, req).await {
                    error.set(Some(f.describe()));
                }
                busy.set(false);
            });
        }
    };
    let listed = calls
        .into_iter()
        .map(|rule| {
            let provider = scene.name(&rule.provider);
            let change = change.clone();
            let stop = rule.clone();
            view! {
                <li data-testid="may-call" data-rule=rule.key()>
                    <code>{rule.capability.clone()}</code>
                    " of "
                    {provider}
                    <button
                        type="button"
                        class="link-button"
                        data-testid="may-call-stop"
                        disabled=move || busy.get()
                        on:click=move |_| change(stop.clone(), false)
                    >
                        "Stop"
                    </button>
                </li>
            }
        })
        .collect_view();
    let options = joinable
        .iter()
        .enumerate()
        .map(|(i, r)| {
            view! {
                <option value=i.to_string()>
                    {format!("{} of {}", r.capability, scene.name(&r.provider))}
                </option>
            }
        })
        .collect_view();
    let join_form = (!joinable.is_empty()).then(|| {
        let change = change.clone();
        view! {
            <div class="membership-join">
                <select
                    data-testid="may-call-choose"
                    aria-label="A rule it may join"
                    on:change=move |ev| {
                        choice.set(event_target_value(&ev).parse().unwrap_or(0));
                    }
                >
                    {options}
                </select>
                <button
                    type="button"
                    data-testid="may-call-add"
                    disabled=move || busy.get()
                    on:click=move |_| {
                        if let Some(rule) = joinable.get(choice.get_untracked()).cloned() {
                            change(rule, true);
                        }
                    }
                >
                    "Let it call"
                </button>
            </div>
        }
    });
    let remove = {
        let (system, base) = (system.clone(), base.clone());
        move |_| {
            busy.set(true);
            error.set(None);
            let (system, base) = (system.clone(), base.clone());
            leptos::task::spawn_local(async move {
                match systems::remove(ctx, system, base).await {
                    Ok(()) => ctx.selection.set(None),
                    Err(f) => error.set(Some(f.describe())),
                }
                busy.set(false);
            });
        }
    };
    let name = scene.name(&system);
    view! {
        <section class="drawer-section membership" aria-label="Membership" data-testid="membership">
            <h3>"May call"</h3>
            <ul class="membership-calls">{listed}</ul>
            {join_form}
            <h3>"Leave the exchange"</h3>
            {move || {
                if confirm.get() {
                    view! {
                        <p>
                            {format!(
                                "Remove {name} from the topology, with its rules, the capabilities only it provides and the edges that name it?"
                            )}
                        </p>
                        <div class="drawer-actions">
                            <button
                                type="button"
                                class="danger"
                                data-testid="remove-system-confirm"
                                disabled=move || busy.get()
                                on:click=remove.clone()
                            >
                                "Remove"
                            </button>
                            <button type="button" on:click=move |_| confirm.set(false)>
                                "Keep it"
                            </button>
                        </div>
                    }
                    .into_any()
                } else {
                    view! {
                        <button
                            type="button"
                            data-testid="remove-system"
                            on:click=move |_| confirm.set(true)
                        >
                            "Remove from the exchange…"
                        </button>
                    }
                    .into_any()
                }
            }}
            {move || {
                error
                    .get()
                    .map(|e| view! { <pre class="onboard-error" role="alert" data-testid="membership-error">{e}</pre> })
            }}
        </section>
    }
}

/// An admin's rotation of system `system`'s credential, in its drawer: the
/// new one is shown once, here; the old one stops at once.
#[component]
pub(crate) fn CredentialSection(system: String) -> impl IntoView {
    let issued = RwSignal::new(None::<crate::dto::CredentialIssued>);
    let error = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let rotate = move |_| {
        busy.set(true);
        error.set(None);
        let system = system.clone();
        leptos::task::spawn_local(async move {
            match systems::rotate_credential(system).await {
                Ok(i) => {
                    issued.try_set(Some(i));
                }
                Err(f) => {
                    error.try_set(Some(f.describe()));
                }
            }
            busy.try_set(false);
        });
    };
    view! {
        <section class="drawer-section" aria-label="Credential" data-testid="credential">
            <h3>"Credential"</h3>
            <button
                type="button"
                data-testid="credential-rotate"
                disabled=move || busy.get()
                on:click=rotate
            >
                "Make a new credential"
            </button>
            {move || issued.get().map(|i| view! {
                <p>"The new credential, shown this once (the old one no longer works):"</p>
                <pre class="onboard-token" data-testid="credential-new">{i.credential.clone()}</pre>
                <pre class="onboard-export">{format!("export {}={}", i.token_env, i.credential)}</pre>
            })}
            {move || error.get().map(|e| view! { <pre class="onboard-error" role="alert">{e}</pre> })}
        </section>
    }
}
