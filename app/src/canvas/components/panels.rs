//! The panels of an edge's drawer: the data-share query form or the
//! consult form, and the answer each got (the calls themselves are
//! [`commands::drawer`](crate::canvas::commands::drawer)'s).
//!
//! A data-share answer is aggregates only (whitelisted, redacted by the
//! hub), shown as a table and a bar chart. A consult answer is untrusted
//! text from the peer: shown inert (a text node, never HTML), in a box
//! marked "from \<peer\>, unverified"; its proposed actions are listed as
//! waiting for approval in their receiver's inbox, with nothing here that
//! could execute them. `not_connected` says its reason code and the rest
//! of the drawer and canvas keep working.
//!
//! Answers and form drafts live in the page-wide [`CanvasCtx`], so a redraw
//! of the canvas (a topology change pushed live) never loses them.

use leptos::ev::SubmitEvent;
use leptos::prelude::*;

use crate::api::ApiFailure;
use crate::canvas::commands::drawer::{run_ask, run_query};
use crate::canvas::interaction::SceneCtx;
use crate::canvas::state::{CanvasCtx, EdgeAnswer};
use crate::dto::{
    ApprovalStatus, CallOutcomeView, ConsultView, EdgeView, Fact, InputGrant, ProposedActionView,
    QueryRequest, QueryResultView, QueryRow, UntrustedText,
};
use crate::format::format_number;
use crate::routes::encode_segment;
use crate::untrusted::UntrustedBlock;

/// The aggregates a data-share query may ask for.
pub const OPS: [&str; 5] = ["count", "sum", "avg", "min", "max"];

/// Bars drawn at most (the table lists every group).
const CHART_MAX_BARS: usize = 24;

/// A form field whose value survives redraws (kept as a draft in the
/// context under `<edge>#<field>`).
fn draft_signal(ctx: CanvasCtx, edge: &str, field: &str, default: &str) -> RwSignal<String> {
    let key = format!("{edge}#{field}");
    let sig = RwSignal::new(ctx.draft(&key).unwrap_or_else(|| default.to_string()));
    Effect::new(move |_| ctx.set_draft(&key, sig.get()));
    sig
}

/// `Some(text)` unless blank.
fn non_blank(s: String) -> Option<String> {
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// Whether a call of edge `id` is in flight (forms disable themselves).
fn running_memo(ctx: CanvasCtx, id: String) -> Memo<bool> {
    Memo::new(move |_| ctx.running.with(|r| r.contains(&id)))
}

/// The data-share form and its answer.
#[component]
pub(crate) fn QueryPanel(edge: EdgeView) -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let scene = expect_context::<SceneCtx>();
    let id = edge.id.clone();
    // What the capability's input contract grants, per field: offered as
    // suggestions and said in words (the hub refuses anything else).
    let grants: Vec<InputGrant> = scene
        .view
        .capability(&edge.capability)
        .map(|c| c.input_grants.clone())
        .unwrap_or_default();
    let allowed = |field: &str| -> Vec<String> {
        grants
            .iter()
            .find(|g| g.field == field)
            .map(|g| g.allowed.clone())
            .unwrap_or_default()
    };
    let (columns, groups) = (allowed("aggregate.column"), allowed("group_by"));
    let list_id = |what: &str| format!("grants-{what}-{}", encode_segment(&id));
    let granted_words = (!grants.is_empty()).then(|| {
        let fields = grants
            .iter()
            .map(|g| format!("{}: {}", g.field, g.allowed.join(", ")))
            .collect::<Vec<_>>()
            .join(" · ");
        view! {
            <p class="muted grants" data-testid="query-grants">
                "The contract lets a query name only — " {fields}
            </p>
        }
    });
    let op = draft_signal(ctx, &id, "op", "count");
    let column = draft_signal(ctx, &id, "column", "");
    let group_by = draft_signal(ctx, &id, "group_by", "");
    let running = running_memo(ctx, id.clone());
    let may_run = crate::session::can(crate::routes::ApiRoute::EdgeQuery);
    let on_submit = {
        let id = id.clone();
        move |ev: SubmitEvent| {
            ev.prevent_default();
            if running.get_untracked() {
                return;
            }
            run_query(
                ctx,
                id.clone(),
                QueryRequest {
                    op: op.get_untracked(),
                    column: non_blank(column.get_untracked()),
                    group_by: non_blank(group_by.get_untracked()),
                },
            );
        }
    };
    let options = OPS
        .iter()
        .map(|o| view! { <option value=*o selected=move || op.get() == *o>{*o}</option> })
        .collect_view();
    view! {
        <section class="drawer-section" aria-label="Query" data-testid="query-panel">
            <h3>"Query through the hub"</h3>
            {granted_words}
            <form class="drawer-form" on:submit=on_submit>
                <label>
                    <span>"Aggregate"</span>
                    <select
                        data-testid="query-op"
                        prop:value=move || op.get()
                        on:change=move |ev| op.set(event_target_value(&ev))
                    >
                        {options}
                    </select>
                </label>
                <ColumnField
                    label="Column"
                    testid="query-column"
                    placeholder="e.g. order_value (not needed for count)"
                    list_id=list_id("column")
                    suggestions=columns
                    value=column
                />
                <ColumnField
                    label="Group by"
                    testid="query-group-by"
                    placeholder="e.g. region (optional)"
                    list_id=list_id("group")
                    suggestions=groups
                    value=group_by
                />
                <button
                    type="submit"
                    class="primary"
                    data-testid="query-run"
                    disabled=move || running.get() || !may_run.get()
                    title=move || (!may_run.get()).then_some("Running a query needs the operator role")
                >
                    {move || if running.get() { "Running…" } else { "Run query" }}
                </button>
            </form>
            <Answer edge=id/>
        </section>
    }
}

/// A column-name field of the query form, with the columns the contract
/// grants for it as suggestions (a free text field still: the hub decides).
#[component]
fn ColumnField(
    label: &'static str,
    testid: &'static str,
    placeholder: &'static str,
    list_id: String,
    suggestions: Vec<String>,
    value: RwSignal<String>,
) -> impl IntoView {
    let list = (!suggestions.is_empty()).then(|| list_id.clone());
    view! {
        <label>
            <span>{label}</span>
            <input
                type="text"
                data-testid=testid
                placeholder=placeholder
                spellcheck="false"
                list=list
                bind:value=value
            />
            <datalist id=list_id>
                {suggestions.into_iter().map(|v| view! { <option value=v></option> }).collect_view()}
            </datalist>
        </label>
    }
}

/// The consult form and its answer.
#[component]
pub(crate) fn ConsultPanel(edge: EdgeView) -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let scene = expect_context::<SceneCtx>();
    let id = edge.id.clone();
    let question = draft_signal(ctx, &id, "question", "");
    let running = running_memo(ctx, id.clone());
    let may_run = crate::session::can(crate::routes::ApiRoute::EdgeQuery);
    let on_submit = {
        let id = id.clone();
        move |ev: SubmitEvent| {
            ev.prevent_default();
            if running.get_untracked() {
                return;
            }
            if let Some(q) = non_blank(question.get_untracked()) {
                run_ask(ctx, id.clone(), q);
            }
        }
    };
    let provider = scene.name(&edge.provider);
    view! {
        <section class="drawer-section" aria-label="Ask" data-testid="ask-panel">
            <h3>"Ask through the hub"</h3>
            <form class="drawer-form" on:submit=on_submit>
                <label>
                    <span>{format!("Question for {provider}")}</span>
                    <textarea
                        data-testid="ask-question"
                        rows="3"
                        placeholder="e.g. how much of the marketing budget is left?"
                        bind:value=question
                    ></textarea>
                </label>
                <button
                    type="submit"
                    class="primary"
                    data-testid="ask-run"
                    disabled=move || running.get() || !may_run.get() || question.with(|q| q.trim().is_empty())
                    title=move || (!may_run.get()).then_some("Asking needs the operator role")
                >
                    {move || if running.get() { "Asking…" } else { "Ask" }}
                </button>
            </form>
            <Answer edge=id/>
        </section>
    }
}

/// The last answer of an edge, whichever kind.
#[component]
fn Answer(edge: String) -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let running = running_memo(ctx, edge.clone());
    let answer = Memo::new(move |_| ctx.answers.with(|a| a.get(&edge).cloned()));
    view! {
        <div class="answer" aria-busy=move || running.get().to_string()>
            {move || running.get().then(|| view! { <p class="muted" role="status">"Waiting for the hub…"</p> })}
            {move || match answer.get() {
                None => None,
                Some(EdgeAnswer::Query(Err(f)) | EdgeAnswer::Consult(Err(f))) => {
                    Some(view! { <Refused failure=f/> }.into_any())
                }
                Some(EdgeAnswer::Query(Ok(v))) => Some(view! { <QueryAnswer v/> }.into_any()),
                Some(EdgeAnswer::Consult(Ok(v))) => Some(view! { <ConsultAnswer v/> }.into_any()),
            }}
        </div>
    }
}

/// The hub refused the request itself (not a peer failure).
#[component]
fn Refused(failure: ApiFailure) -> impl IntoView {
    view! {
        <p class="not-connected" role="alert" data-testid="answer-error">
            "The hub refused the request — "
            {failure.describe()}
        </p>
    }
}

/// `not connected — REASON` and the detail.
#[component]
fn NotConnected(reason: String, detail: String) -> impl IntoView {
    view! {
        <div class="not-connected" role="alert" data-testid="answer-outcome" data-outcome="not_connected">
            <strong>"not connected — " {reason}</strong>
            {(!detail.is_empty()).then(|| view! { <p>{detail}</p> })}
        </div>
    }
}

/// A data-share answer: how many rows, a chart and a table.
#[component]
fn QueryAnswer(v: QueryResultView) -> impl IntoView {
    if let CallOutcomeView::NotConnected { reason, detail } = v.outcome {
        return view! { <NotConnected reason=reason.as_str().to_string() detail/> }.into_any();
    }
    let summary = match v.row_count {
        Some(n) => format!(
            "{} groups over {} rows",
            v.rows.len(),
            format_number(n as f64)
        ),
        None => format!("{} groups", v.rows.len()),
    };
    view! {
        <div data-testid="answer-outcome" data-outcome="connected">
            <p class="muted answer-meta">
                {summary} " · trace " <code data-testid="trace-id">{v.trace_id.clone()}</code>
            </p>
            {(!v.rows.is_empty()).then(|| view! { <BarChart rows=v.rows.clone()/> })}
            <QueryTable rows=v.rows/>
        </div>
    }
    .into_any()
}

/// The groups as a table; `data-value` keeps the exact number.
#[component]
fn QueryTable(rows: Vec<QueryRow>) -> impl IntoView {
    if rows.is_empty() {
        return view! { <p class="muted" data-testid="query-empty">"No rows matched."</p> }
            .into_any();
    }
    let body = rows
        .into_iter()
        .map(|r| {
            let raw = r.value.map(|x| x.to_string()).unwrap_or_default();
            let shown = r.value.map(format_number).unwrap_or_else(|| "—".into());
            view! {
                <tr data-testid="query-row">
                    <th scope="row" data-testid="query-key">{r.key.unwrap_or_else(|| "(all)".into())}</th>
                    <td class="num" data-testid="query-value" data-value=raw>{shown}</td>
                    <td class="num" data-testid="query-count">{r.count}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table class="data-table" data-testid="query-table">
            <thead>
                <tr>
                    <th scope="col">"Group"</th>
                    <th scope="col" class="num">"Value"</th>
                    <th scope="col" class="num">"Rows"</th>
                </tr>
            </thead>
            <tbody>{body}</tbody>
        </table>
    }
    .into_any()
}

/// One horizontal bar per group: people would rather look than read.
#[component]
fn BarChart(rows: Vec<QueryRow>) -> impl IntoView {
    const W: f64 = 320.0;
    const LABEL_W: f64 = 96.0;
    const VALUE_W: f64 = 72.0;
    const BAR_H: f64 = 16.0;
    const GAP: f64 = 6.0;
    let shown: Vec<QueryRow> = rows.into_iter().take(CHART_MAX_BARS).collect();
    let max = shown
        .iter()
        .filter_map(|r| r.value)
        .filter(|v| v.is_finite())
        .fold(0.0_f64, |m, v| m.max(v.abs()));
    let h = shown.len() as f64 * (BAR_H + GAP) + GAP;
    let span = W - LABEL_W - VALUE_W;
    let bars = shown
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            let y = GAP + i as f64 * (BAR_H + GAP);
            let value = r.value.filter(|v| v.is_finite());
            let len = match value {
                Some(v) if max > 0.0 => (v.abs() / max * span).max(1.0),
                _ => 0.0,
            };
            let key = r.key.unwrap_or_else(|| "(all)".into());
            let shown = value.map(format_number).unwrap_or_else(|| "—".into());
            let short: String = if key.chars().count() > 14 {
                key.chars().take(13).chain(['…']).collect()
            } else {
                key.clone()
            };
            view! {
                <g data-testid="query-bar">
                    <title>{format!("{key}: {shown}")}</title>
                    <text x=format!("{:.0}", LABEL_W - 6.0) y=format!("{:.1}", y + BAR_H - 4.0) class="bar-label" text-anchor="end">
                        {short}
                    </text>
                    <rect x=format!("{LABEL_W:.0}") y=format!("{y:.1}") width=format!("{len:.1}") height=format!("{BAR_H:.0}") rx="2" class="bar"></rect>
                    <text x=format!("{:.1}", LABEL_W + len + 4.0) y=format!("{:.1}", y + BAR_H - 4.0) class="bar-value">
                        {shown}
                    </text>
                </g>
            }
        })
        .collect_view();
    view! {
        <svg
            class="query-chart"
            data-testid="query-chart"
            role="img"
            aria-label="Bar chart of the value per group"
            width=format!("{W:.0}")
            height=format!("{h:.0}")
            viewBox=format!("0 0 {W:.0} {h:.0}")
        >
            {bars}
        </svg>
    }
}

/// Peer text, inert and marked, named as the canvas names its source.
#[component]
fn Untrusted(text: UntrustedText, #[prop(optional)] testid: &'static str) -> impl IntoView {
    let scene = expect_context::<SceneCtx>();
    let from_name = scene.name(&text.from);
    view! { <UntrustedBlock text from_name testid/> }
}

/// A consult answer: the peer's text, its facts, its proposed actions.
#[component]
fn ConsultAnswer(v: ConsultView) -> impl IntoView {
    if let CallOutcomeView::NotConnected { reason, detail } = v.outcome {
        return view! { <NotConnected reason=reason.as_str().to_string() detail/> }.into_any();
    }
    view! {
        <div data-testid="answer-outcome" data-outcome="connected">
            <p class="muted answer-meta">
                "trace " <code data-testid="trace-id">{v.trace_id.clone()}</code>
            </p>
            {v.answer.map(|a| view! { <Untrusted text=a testid="consult-answer"/> })}
            {(!v.facts.is_empty()).then(|| view! { <Facts facts=v.facts.clone()/> })}
            {(!v.proposed_actions.is_empty())
                .then(|| view! { <ProposedActions actions=v.proposed_actions.clone()/> })}
        </div>
    }
    .into_any()
}

#[component]
fn Facts(facts: Vec<Fact>) -> impl IntoView {
    view! {
        <h4>"Facts"</h4>
        <dl class="facts" data-testid="consult-facts">
            {facts
                .into_iter()
                .map(|f| view! { <dt>{f.label}</dt><dd>{f.value}</dd> })
                .collect_view()}
        </dl>
    }
}

/// Where a proposed action stands, in words.
fn approval_words(status: ApprovalStatus, inbox: &str) -> String {
    match status {
        ApprovalStatus::Pending => format!("waiting for approval in {inbox}'s inbox"),
        ApprovalStatus::Approved => format!("approved in {inbox}'s inbox"),
        ApprovalStatus::Rejected => format!("rejected in {inbox}'s inbox"),
    }
}

/// Proposed actions, listed, never executable from here: approving is the
/// receiver's human's job, in the receiver's inbox.
#[component]
fn ProposedActions(actions: Vec<ProposedActionView>) -> impl IntoView {
    let scene = expect_context::<SceneCtx>();
    let items = actions
        .into_iter()
        .map(|a| {
            let inbox = scene.name(&a.inbox);
            let status = a.status.as_str();
            view! {
                <li class="proposed-action" data-testid="proposed-action" data-status=status>
                    <p>
                        <code>{a.action_type}</code>
                        " on "
                        <code>{a.target}</code>
                        " "
                        <code class="params">{a.parameters}</code>
                    </p>
                    <p class="approval" data-testid="approval-state">
                        {approval_words(a.status, &inbox)}
                    </p>
                    <Untrusted text=a.rationale testid="action-rationale"/>
                </li>
            }
        })
        .collect_view();
    view! {
        <h4>"Proposed actions"</h4>
        <p class="muted">
            "Nothing runs from here: each waits for a person to approve it in its receiver's inbox ("
            <a href="/inbox" data-testid="open-inbox">"open the hub's inbox"</a>
            ")."
        </p>
        <ul class="proposed-actions" data-testid="proposed-actions">{items}</ul>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approval_states_name_the_inbox() {
        assert_eq!(
            approval_words(ApprovalStatus::Pending, "Wall Street hub"),
            "waiting for approval in Wall Street hub's inbox"
        );
    }
}
