//! `/inbox`: the hub's approval inbox, where a logged-in person decides
//! what the hub does with the actions other systems proposed.
//!
//! A proposal arrives with a consult answer the hub asked for (a canvas
//! drawer). It is listed here with its rationale as untrusted text; the
//! only controls are Approve and Reject. Approving lets the hub's own code
//! perform its own local write (its budget plan, shown below the list);
//! nothing is ever sent to the system that proposed it. The decision is
//! taken by the session's user on the server, so the page sends no name.
//!
//! The list is loaded once the page is hydrated (the server renders the
//! frame and says it is loading) and reloaded after every decision.

use leptos::prelude::*;

use crate::api::{self, Method};
use crate::dto::{ApprovalStatus, BudgetPlanView, InboxPageView, ProposedActionView};
use crate::format::format_number;
use crate::routes;
use crate::session::{require_session, use_hydrated, PageTopBar};
use crate::untrusted::UntrustedBlock;

/// What the page knows right now.
#[derive(Debug, Clone, PartialEq)]
enum Loaded {
    /// Not asked yet (server render, before hydration) or asking.
    Loading,
    /// The hub answered.
    Page(InboxPageView),
    /// The hub did not answer the listing.
    Failed(String),
}

/// The page's state, shared by its parts.
#[derive(Debug, Clone, Copy)]
struct InboxCtx {
    loaded: RwSignal<Loaded>,
    /// Entry ids with a decision in flight.
    busy: RwSignal<Vec<String>>,
    /// The last refused decision: entry id and the hub's words.
    refusal: RwSignal<Option<(String, String)>>,
}

impl InboxCtx {
    fn reload(self) {
        leptos::task::spawn_local(async move {
            let next = match api::get_json::<InboxPageView>(routes::INBOX_PAGE).await {
                Ok(p) => Loaded::Page(p),
                Err(f) => Loaded::Failed(f.describe()),
            };
            self.loaded.try_set(next);
        });
    }

    /// Sends a decision on entry `id` to `path(id)` (approve or reject).
    fn decide(self, id: String, path: fn(&str) -> String) {
        if self.busy.with_untracked(|b| b.contains(&id)) {
            return;
        }
        self.busy.update(|b| b.push(id.clone()));
        self.refusal.set(None);
        leptos::task::spawn_local(async move {
            let path = path(&id);
            let answer = api::send_json::<(), ProposedActionView>(Method::Post, &path, None).await;
            if let Err(f) = answer {
                self.refusal.try_set(Some((id.clone(), f.describe())));
            }
            self.busy.try_update(|b| b.retain(|x| x != &id));
            self.reload();
        });
    }
}

/// `/inbox`.
#[component]
pub fn InboxPage() -> impl IntoView {
    require_session();
    let ctx = InboxCtx {
        loaded: RwSignal::new(Loaded::Loading),
        busy: RwSignal::new(Vec::new()),
        refusal: RwSignal::new(None),
    };
    provide_context(ctx);
    let hydrated = use_hydrated();
    // Effects run in the browser only: the first load starts on hydration.
    Effect::new(move |_| ctx.reload());

    view! {
        <PageTopBar current=routes::Page::Inbox/>
        <main
            class="inbox-page"
            data-testid="inbox-page"
            data-hydrated=move || hydrated.get().to_string()
        >
            <h2>"Approval inbox"</h2>
            <p class="muted">
                "Actions proposed in consult answers the hub asked for. Nothing runs until you approve it; "
                "approving performs the hub's own local write and never writes at the system that proposed it."
            </p>
            {move || match ctx.loaded.get() {
                Loaded::Loading => view! {
                    <p class="muted" role="status" data-testid="inbox-loading">"Loading the inbox…"</p>
                }
                .into_any(),
                Loaded::Failed(why) => view! {
                    <p class="not-connected" role="alert" data-testid="inbox-error">
                        "The hub did not answer the inbox: " {why}
                    </p>
                }
                .into_any(),
                Loaded::Page(p) => Suspend::new(async move { inbox_part(p).await }).into_any(),
            }}
        </main>
    }
}

/// The inbox's entries and their buttons: a part of the bundle loaded
/// when the first page of entries arrives (the canvas never loads it).
#[lazy]
fn inbox_part(page: InboxPageView) -> AnyView {
    view! { <InboxBody page/> }.into_any()
}

#[component]
fn InboxBody(page: InboxPageView) -> impl IntoView {
    let pending = page
        .entries
        .iter()
        .filter(|e| e.status == ApprovalStatus::Pending)
        .count();
    let entries = if page.entries.is_empty() {
        view! {
            <p class="empty" data-testid="inbox-empty">
                "No proposed actions. Ask a consult edge on the canvas; any action its answer proposes waits here."
            </p>
        }
        .into_any()
    } else {
        view! {
            <ul class="inbox-entries" data-testid="inbox-entries">
                {page
                    .entries
                    .into_iter()
                    .map(|entry| view! { <Entry entry/> })
                    .collect_view()}
            </ul>
        }
        .into_any()
    };
    view! {
        <p data-testid="inbox-counts">
            {format!("{pending} pending in {}'s inbox", page.owner)}
        </p>
        {entries}
        <BudgetPlans plans=page.budget_plans/>
    }
}

/// One proposal: what, why (untrusted), and the decision or its controls.
#[component]
fn Entry(entry: ProposedActionView) -> impl IntoView {
    let ctx = expect_context::<InboxCtx>();
    let hydrated = use_hydrated();
    let id = entry.id.clone();
    let from = entry.rationale.from.clone();
    let busy = {
        let id = id.clone();
        Memo::new(move |_| ctx.busy.with(|b| b.contains(&id)))
    };
    let refusal = {
        let id = id.clone();
        move || {
            ctx.refusal
                .get()
                .filter(|(r, _)| r == &id)
                .map(|(_, why)| view! { <p class="not-connected" role="alert" data-testid="decision-error">{why}</p> })
        }
    };
    let may_decide = crate::session::can(routes::ApiRoute::InboxApprove);
    let decision = match entry.status {
        ApprovalStatus::Pending if !may_decide.get_untracked() => view! {
            <p class="muted" data-testid="decision-pending">"Waiting for an approver."</p>
        }
        .into_any(),
        ApprovalStatus::Pending => {
            let (a, r) = (id.clone(), id.clone());
            view! {
                <div class="decision" role="group" aria-label=format!("Decide on proposal {id}")>
                    <button
                        type="button"
                        class="approve"
                        data-testid="approve"
                        disabled=move || !hydrated.get() || busy.get()
                        on:click=move |_| ctx.decide(a.clone(), routes::inbox_approve)
                    >
                        "Approve"
                    </button>
                    <button
                        type="button"
                        class="reject"
                        data-testid="reject"
                        disabled=move || !hydrated.get() || busy.get()
                        on:click=move |_| ctx.decide(r.clone(), routes::inbox_reject)
                    >
                        "Reject"
                    </button>
                </div>
            }
            .into_any()
        }
        status => {
            let who = entry.decided_by.clone().unwrap_or_default();
            let when = entry.decided_at.clone().unwrap_or_default();
            let effect = entry
                .effect
                .clone()
                .unwrap_or_else(|| "nothing was written".to_string());
            view! {
                <p class="decided" data-testid="decision">
                    {format!("{} by {who} at {when}", if status == ApprovalStatus::Approved { "Approved" } else { "Rejected" })}
                    <br/>
                    <span data-testid="effect">{effect}</span>
                </p>
            }
            .into_any()
        }
    };
    view! {
        <li
            class="inbox-entry"
            data-testid=format!("inbox-entry-{}", entry.id)
            data-status=entry.status.as_str()
        >
            <p class="what">
                <code>{entry.action_type}</code>
                " on "
                <code>{entry.target}</code>
                " "
                <code class="params">{entry.parameters}</code>
            </p>
            <p class="muted">
                {format!("proposed by {from} · trace ")}
                <code data-testid="entry-trace">{entry.trace_id}</code>
            </p>
            <UntrustedBlock text=entry.rationale from_name=from testid="entry-rationale"/>
            {decision}
            {refusal}
        </li>
    }
}

/// The hub's own state that approvals write.
#[component]
fn BudgetPlans(plans: Vec<BudgetPlanView>) -> impl IntoView {
    let body = if plans.is_empty() {
        view! {
            <p class="empty" data-testid="budget-plans-empty">
                "No approved budget change yet: approving a set_budget proposal records it here."
            </p>
        }
        .into_any()
    } else {
        view! {
            <table class="plans" data-testid="budget-plans">
                <thead>
                    <tr>
                        <th scope="col">"Department"</th>
                        <th scope="col">"Amount"</th>
                        <th scope="col">"Approved by"</th>
                        <th scope="col">"At"</th>
                        <th scope="col">"Proposed by"</th>
                    </tr>
                </thead>
                <tbody>
                    {plans
                        .into_iter()
                        .map(|p| {
                            let testid = format!("plan-{}", p.department);
                            view! {
                                <tr data-testid=testid>
                                    <td>{p.department}</td>
                                    <td class="num">{format_number(p.amount)}</td>
                                    <td>{p.approved_by}</td>
                                    <td>{p.approved_at}</td>
                                    <td>{p.proposed_by}</td>
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
        }
        .into_any()
    };
    view! {
        <section class="plans-section" aria-labelledby="plans-title">
            <h3 id="plans-title">"The hub's budget plan (local)"</h3>
            {body}
        </section>
    }
}
