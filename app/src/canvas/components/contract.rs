//! "Data contracts" in a data-share (or negotiation) edge's drawer: for the
//! edge's consumer and for the hub, the contract each holds with the
//! provider, where its contract work stands, and the transcript of its
//! newest negotiation; and, for the hub, a form to have the hub negotiate
//! its own (DESIGN.md §4, "Open a data-share edge").
//!
//! The panel is a log reader (seed `000`, step 6): it shows only the
//! messages the hub recorded, in order (never a placeholder timeline,
//! never a message that did not happen), and the run state as the hub
//! derived it from them (it is not stored, here or there). The one thing
//! it says by itself is that the hub's own negotiation is on its way while
//! its POST runs. Peer words (purposes, rationales) are untrusted text,
//! shown inert and marked "from \<peer\>, unverified". A member's
//! negotiation is its own to start: the panel prints the `peer negotiate`
//! command for it, the hub never commands a peer.
//!
//! Its two calls to the hub (read the view, negotiate) are commands, in
//! [`crate::canvas::commands::contracts`].
//!
//! The view is loaded when the drawer opens, and again after each query
//! answer of the edge (a read may have changed the state) and after a
//! negotiation that failed; a negotiation that ran shows the view its POST
//! returned.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use leptos::prelude::*;

use crate::api::ApiFailure;
use crate::canvas::commands::contracts::{negotiate, running_key, Loader};
use crate::canvas::interaction::SceneCtx;
use crate::canvas::state::CanvasCtx;
use crate::dto::{
    CallOutcomeView, CapabilityKind, ContractSummaryView, ContractsView, EdgeView, InputGrant,
    NegotiateRequest, NegotiationMessageView, PartyContractView, RunState, TopologyView, TurnView,
    UntrustedText,
};
use crate::format::format_number;
use crate::untrusted::UntrustedBlock;

/// What the hub says its data is for, pre-filled (the user may edit it).
pub const DEFAULT_PURPOSE: &str = "Aggregate queries from the Wall Street canvas drawer";

/// How long the hub asks to keep the data.
pub const DEFAULT_RETENTION_DAYS: u64 = 30;

/// A run state's word: its CSS class and `data-state`.
pub fn state_word(state: RunState) -> &'static str {
    match state {
        RunState::Idle => "idle",
        RunState::Negotiating => "negotiating",
        RunState::Executing => "executing",
        RunState::Error => "error",
    }
}

/// The columns a query of the data-share may name (its input contract's
/// aggregate, filter and group-by columns), each once, in the contract's
/// order: what the hub asks a contract for.
pub fn queryable_columns(grants: &[InputGrant]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for g in grants {
        let last = g.field.rsplit('.').next().unwrap_or(&g.field);
        if !matches!(last.trim_end_matches("[]"), "column" | "group_by") {
            continue;
        }
        for c in &g.allowed {
            if !out.contains(c) {
                out.push(c.clone());
            }
        }
    }
    out
}

/// The command a member runs to negotiate its own contract (the hub never
/// commands a peer).
pub fn member_command(
    consumer: &str,
    provider: &str,
    negotiation: &str,
    columns: &[String],
) -> String {
    let columns = if columns.is_empty() {
        "<column,column,…>".to_string()
    } else {
        columns.join(",")
    };
    format!(
        "peer negotiate --config config/peers/{consumer}.yaml --provider {provider} \
         --capability {negotiation} --columns {columns} --purpose \"<what the data is for>\""
    )
}

/// `30 days`, `1 day`.
fn days(n: f64) -> String {
    let s = format_number(n);
    if n == 1.0 {
        format!("{s} day")
    } else {
        format!("{s} days")
    }
}

/// The test id of a part of `consumer`'s section.
fn tid(part: &str, consumer: &str) -> String {
    format!("{part}-{consumer}")
}

/// The draft key of the hub's form fields.
fn draft_key(edge: &str, field: &str) -> String {
    format!("{edge}#contract-{field}")
}

/// What the panel's parts need of the registry view the canvas drew:
/// display names and each data-share's queryable columns. Read from the
/// scene once, when the panel opens, and handed down by context, so that
/// the parts are plain functions of their props and of this.
#[derive(Debug, Clone, Default)]
struct Directory {
    names: Arc<HashMap<String, String>>,
    columns: Arc<HashMap<String, Vec<String>>>,
}

impl Directory {
    fn from_view(view: &TopologyView) -> Self {
        let names = view
            .nodes
            .iter()
            .map(|n| (n.id.clone(), n.name.clone()))
            .collect();
        let columns = view
            .capabilities
            .iter()
            .filter(|c| c.kind == CapabilityKind::DataShare)
            .map(|c| (c.id.clone(), queryable_columns(&c.input_grants)))
            .collect();
        Directory {
            names: Arc::new(names),
            columns: Arc::new(columns),
        }
    }

    /// Display name of a node, falling back to its id.
    fn name(&self, id: &str) -> String {
        self.names
            .get(id)
            .cloned()
            .unwrap_or_else(|| id.to_string())
    }

    /// The queryable columns of data-share `capability` (none if unknown).
    fn columns(&self, capability: &str) -> Vec<String> {
        self.columns.get(capability).cloned().unwrap_or_default()
    }
}

/// The section: every party's contract, state and transcript.
#[component]
pub(crate) fn ContractPanel(edge: EdgeView) -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    provide_context(Directory::from_view(&expect_context::<SceneCtx>().view));
    let loader = Loader::new(edge.id.clone());
    let error = RwSignal::new(None::<ApiFailure>);
    let negotiating = {
        let key = running_key(&edge.id);
        Memo::new(move |_| ctx.running.with(|r| r.contains(&key)))
    };
    // Load when the drawer opens and after each query answer of this edge;
    // a negotiation's answer comes with its own view.
    let answer = {
        let id = edge.id.clone();
        Memo::new(move |_| ctx.answers.with(|a| a.get(&id).cloned()))
    };
    Effect::new(move |_| {
        answer.track();
        loader.load();
    });
    // A negotiation this panel did not see start (the drawer was redrawn
    // while it ran) ends: read what it left.
    Effect::new(move |was: Option<bool>| {
        let now = negotiating.get();
        if was == Some(true) && !now && !loader.take_settled() {
            loader.load();
        }
        now
    });
    let hub_form = HubForm::new(ctx, &edge.id);
    view! {
        <section class="drawer-section contracts" aria-label="Data contracts" data-testid="contract-panel">
            <div class="section-head">
                <h3>"Data contracts"</h3>
                <button
                    type="button"
                    class="link-button"
                    data-testid="contract-refresh"
                    on:click=move |_| loader.load()
                >
                    "Refresh"
                </button>
            </div>
            {move || match loader.view.get() {
                None => view! { <p class="muted" role="status">"Loading the contracts…"</p> }.into_any(),
                Some(Err(f)) => view! {
                    <p class="not-connected" role="alert" data-testid="contract-error">
                        "Could not load the contracts — " {f.describe()}
                    </p>
                }
                .into_any(),
                Some(Ok(v)) => view! { <Parties v loader error negotiating hub_form/> }.into_any(),
            }}
        </section>
    }
}

/// The hub's negotiation form state, kept as drafts so a redraw of the
/// scene keeps what the user typed.
#[derive(Clone, Copy)]
struct HubForm {
    purpose: RwSignal<String>,
    /// Columns the user unticked (all are asked for by default).
    unticked: RwSignal<BTreeSet<String>>,
}

impl HubForm {
    fn new(ctx: CanvasCtx, edge: &str) -> Self {
        let (pk, uk) = (draft_key(edge, "purpose"), draft_key(edge, "unticked"));
        let purpose = RwSignal::new(
            ctx.draft(&pk)
                .unwrap_or_else(|| DEFAULT_PURPOSE.to_string()),
        );
        let unticked = RwSignal::new(
            ctx.draft(&uk)
                .map(|s| {
                    s.split(',')
                        .filter(|c| !c.is_empty())
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
        );
        Effect::new(move |_| ctx.set_draft(&pk, purpose.get()));
        Effect::new(move |_| {
            let joined = unticked
                .with(|u: &BTreeSet<String>| u.iter().cloned().collect::<Vec<_>>().join(","));
            ctx.set_draft(&uk, joined);
        });
        HubForm { purpose, unticked }
    }

    /// Of `all`, the columns still ticked, in order.
    fn chosen(&self, all: &[String]) -> Vec<String> {
        self.unticked
            .with(|u| all.iter().filter(|c| !u.contains(*c)).cloned().collect())
    }
}

/// Every party of a loaded view, the edge's consumer first.
#[component]
fn Parties(
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

/// What every party section needs of the view.
#[derive(Debug, Clone)]
struct PartyCtx {
    provider: String,
    negotiation: Option<String>,
    /// The data-share's queryable columns.
    columns: Vec<String>,
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

/// The derived run state, in a badge whose text is what it means now.
#[component]
fn StateBadge(consumer: String, state: RunState, detail: String) -> impl IntoView {
    let word = state_word(state);
    view! {
        <p
            class=format!("run-state {word}")
            data-testid=tid("contract-state", &consumer)
            data-state=word
            role="status"
        >
            <span class="run-state-word">{word}</span>
            " "
            <span class="run-state-detail">{detail}</span>
        </p>
    }
}

/// A granted contract: id, columns, purpose, retention, expiry.
#[component]
fn Contract(consumer: String, k: ContractSummaryView) -> impl IntoView {
    let expired = k.expired.then(|| {
        view! { <span class="contract-expired" data-testid=tid("contract-expired", &consumer)>"expired"</span> }
    });
    view! {
        <dl class="contract" data-testid=tid("contract", &consumer) data-expired=k.expired.to_string()>
            <dt>"Contract"</dt>
            <dd><code data-testid=tid("contract-id", &consumer)>{k.contract_id}</code></dd>
            <dt>"Columns"</dt>
            <dd><ColumnList testid=tid("contract-columns", &consumer) columns=k.columns/></dd>
            <dt>"Retention"</dt>
            <dd data-testid=tid("contract-retention", &consumer)>
                {k.retention_days.map(days).unwrap_or_else(|| "—".into())}
            </dd>
            <dt>"Expires"</dt>
            <dd data-testid=tid("contract-expires", &consumer)>
                {k.expires_at.unwrap_or_else(|| "—".into())} " " {expired}
            </dd>
        </dl>
        {k.purpose.map(|t| view! { <Untrusted text=t testid="contract-purpose"/> })}
    }
}

/// No contract yet: what would start one.
#[component]
fn NoContract(p: PartyContractView, ctx_of: PartyCtx, can_negotiate: bool) -> impl IntoView {
    let names = expect_context::<Directory>();
    let who = names.name(&p.consumer);
    let provider = names.name(&ctx_of.provider);
    let what = match (&ctx_of.negotiation, p.may_negotiate) {
        (None, _) => view! {
            <p>"No negotiation capability is registered for this data-share, so none can start."</p>
        }
        .into_any(),
        (Some(_), false) => view! {
            <p>{format!("No rule lets {who} negotiate with {provider}.")}</p>
        }
        .into_any(),
        (Some(_), true) if can_negotiate => view! {
            <p>{format!("Negotiate one below: the hub proposes the columns it needs to {provider}.")}</p>
        }
        .into_any(),
        (Some(n), true) => {
            let command = member_command(&p.consumer, &ctx_of.provider, n, &ctx_of.columns);
            view! {
                <p>{format!("{who} negotiates its own contract; on its side, run:")}</p>
                <pre class="command"><code data-testid=tid("contract-command", &p.consumer)>{command}</code></pre>
            }
            .into_any()
        }
    };
    view! {
        <div class="contract-empty" data-testid=tid("contract-empty", &p.consumer)>
            <p class="muted">{format!("No contract yet: {who} reads no rows of {provider}'s data without one.")}</p>
            {what}
        </div>
    }
}

/// The hub's form: the columns it asks for, its purpose, the button.
#[component]
fn NegotiateForm(
    consumer: String,
    columns: Vec<String>,
    /// Whether the hub holds a contract already (the button says "again").
    again: bool,
    loader: Loader,
    error: RwSignal<Option<ApiFailure>>,
    negotiating: Memo<bool>,
    form: HubForm,
) -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let all = StoredValue::new(columns.clone());
    let chosen = move || all.with_value(|cols| form.chosen(cols));
    let on_submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let purpose = form.purpose.get_untracked().trim().to_string();
        let columns = chosen();
        if negotiating.get_untracked() || purpose.is_empty() || columns.is_empty() {
            return;
        }
        let retention_days = DEFAULT_RETENTION_DAYS;
        negotiate(
            ctx,
            loader,
            error,
            NegotiateRequest {
                columns,
                purpose,
                retention_days,
            },
        );
    };
    let disabled = move || {
        negotiating.get() || form.purpose.with(|p| p.trim().is_empty()) || chosen().is_empty()
    };
    let label = move || match (negotiating.get(), again) {
        (true, _) => "Negotiating…",
        (false, false) => "Negotiate",
        (false, true) => "Negotiate again",
    };
    let failure = {
        let consumer = consumer.clone();
        move || {
            error.get().map(|f| {
                view! {
                    <p class="not-connected" role="alert" data-testid=tid("negotiate-error", &consumer)>
                        "The hub could not negotiate — " {f.describe()}
                    </p>
                }
            })
        }
    };
    let retention = format!("Retention: {}", days(DEFAULT_RETENTION_DAYS as f64));
    view! {
        <form
            class="drawer-form negotiate-form"
            on:submit=on_submit
            aria-busy=move || negotiating.get().to_string()
        >
            <ColumnChoices columns unticked=form.unticked/>
            <label>
                <span>"Purpose"</span>
                <input
                    type="text"
                    data-testid=tid("negotiate-purpose", &consumer)
                    bind:value=form.purpose
                />
            </label>
            <p class="muted negotiate-retention">{retention}</p>
            <button type="submit" class="primary" data-testid=tid("negotiate", &consumer) disabled=disabled>
                {label}
            </button>
            {failure}
        </form>
    }
    .into_any()
}

/// A checkbox per column the hub may ask for, all ticked at first.
#[component]
fn ColumnChoices(columns: Vec<String>, unticked: RwSignal<BTreeSet<String>>) -> impl IntoView {
    if columns.is_empty() {
        return view! {
            <p class="muted" data-testid="negotiate-no-columns">
                "The registry lists no queryable columns for this data-share."
            </p>
        }
        .into_any();
    }
    let boxes = columns
        .into_iter()
        .map(|c| {
            let (shown, toggled) = (c.clone(), c.clone());
            let on_change = move |ev| {
                let on = event_target_checked(&ev);
                unticked.update(|u| {
                    if on {
                        u.remove(&toggled);
                    } else {
                        u.insert(toggled.clone());
                    }
                });
            };
            view! {
                <label class="column-choice">
                    <input
                        type="checkbox"
                        data-testid=format!("negotiate-column-{c}")
                        prop:checked=move || unticked.with(|u| !u.contains(&shown))
                        on:change=on_change
                    />
                    <code>{c}</code>
                </label>
            }
        })
        .collect_view();
    view! {
        <fieldset class="column-choices">
            <legend>"Columns to ask for"</legend>
            {boxes}
        </fieldset>
    }
    .into_any()
}

/// The newest negotiation's turns, as the hub recorded them.
#[component]
fn Transcript(consumer: String, turns: Vec<TurnView>) -> impl IntoView {
    if turns.is_empty() {
        return view! {
            <p class="muted" data-testid=tid("transcript-empty", &consumer)>
                "No negotiation messages recorded."
            </p>
        }
        .into_any();
    }
    let rows = turns
        .into_iter()
        .map(|t| view! { <Turn t/> })
        .collect_view();
    view! {
        <div class="transcript-wrap">
            <h5>"Transcript"</h5>
            <ol class="transcript" data-testid=tid("transcript", &consumer)>{rows}</ol>
        </div>
    }
    .into_any()
}

/// One turn: what the consumer sent, and the reply or why there was none.
#[component]
fn Turn(t: TurnView) -> impl IntoView {
    let answer = match (t.reply, t.failure) {
        (Some(reply), _) => view! { <Message m=reply testid="turn-reply" grant=t.grant_id/> }.into_any(),
        (None, Some(CallOutcomeView::NotConnected { reason, detail })) => view! {
            <div class="not-connected turn-failure" data-testid="turn-failure" data-reason=reason.as_str()>
                <strong>"not connected — " {reason.as_str()}</strong>
                {(!detail.is_empty()).then(|| view! { <p>{detail}</p> })}
            </div>
        }
        .into_any(),
        (None, _) => view! {
            <p class="muted turn-no-reply" data-testid="turn-no-reply">"No valid reply was recorded."</p>
        }
        .into_any(),
    };
    view! {
        <li
            class="turn"
            data-testid="turn"
            data-seq=t.seq.to_string()
            title=format!("{} · context {}", t.at, t.context_id)
        >
            <Message m=t.sent testid="turn-sent" grant=None/>
            {answer}
        </li>
    }
}

/// One negotiation message: speaker and intent, columns, retention, the
/// contract it granted, and the speaker's words (untrusted).
#[component]
fn Message(
    m: NegotiationMessageView,
    testid: &'static str,
    /// The contract granted with this message.
    grant: Option<String>,
) -> impl IntoView {
    let retention = m.retention_days.map(|d| {
        view! { <span class="turn-retention" data-testid="turn-retention">{days(d)}</span> }
    });
    let grant = grant.map(|g| {
        view! {
            <span class="turn-grant" data-testid="turn-grant">
                "grant " <code data-testid="turn-grant-id">{g}</code>
            </span>
        }
    });
    view! {
        <div
            class=format!("turn-message {testid}")
            data-testid=testid
            data-from=m.from.clone()
            data-intent=m.intent.clone()
        >
            <p class="turn-line">
                <strong data-testid="turn-who">{format!("{} {}", m.from, m.intent)}</strong>
                " "
                <ColumnList testid="turn-columns".to_string() columns=m.columns/>
                " "
                {retention}
                " "
                {grant}
            </p>
            {m.purpose.map(|t| view! { <Untrusted text=t testid="turn-purpose"/> })}
            {m.rationale.map(|t| view! { <Untrusted text=t testid="turn-rationale"/> })}
        </div>
    }
}

/// Column names as chips.
#[component]
fn ColumnList(testid: String, columns: Vec<String>) -> impl IntoView {
    let n = columns.len();
    view! {
        <span class="column-list" data-testid=testid data-count=n.to_string()>
            {if columns.is_empty() {
                view! { <span class="muted">"no columns"</span> }.into_any()
            } else {
                columns
                    .into_iter()
                    .map(|c| view! { <code class="column" data-testid="column">{c}</code> })
                    .collect_view()
                    .into_any()
            }}
        </span>
    }
}

/// Peer text, inert and marked, named as the canvas names its source.
#[component]
fn Untrusted(text: UntrustedText, testid: &'static str) -> impl IntoView {
    let from_name = expect_context::<Directory>().name(&text.from);
    view! { <UntrustedBlock text from_name testid/> }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(field: &str, allowed: &[&str]) -> InputGrant {
        InputGrant {
            field: field.into(),
            allowed: allowed.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn queryable_columns_are_the_column_grants_once_each() {
        let grants = vec![
            grant(
                "aggregate.column",
                &["order_value", "region", "order_date", "product"],
            ),
            grant("aggregate.op", &["count", "sum"]),
            grant(
                "filters[].column",
                &["region", "order_date", "order_value", "product"],
            ),
            grant("group_by", &["region", "order_date", "product"]),
        ];
        assert_eq!(
            queryable_columns(&grants),
            vec!["order_value", "region", "order_date", "product"]
        );
        assert!(queryable_columns(&[]).is_empty());
    }

    #[test]
    fn a_member_is_told_the_command_to_run() {
        let cmd = member_command(
            "buyercorp",
            "vendorcorp",
            "orders.negotiate",
            &["region".into(), "order_value".into()],
        );
        assert_eq!(
            cmd,
            "peer negotiate --config config/peers/buyercorp.yaml --provider vendorcorp \
             --capability orders.negotiate --columns region,order_value --purpose \"<what the data is for>\""
        );
    }

    #[test]
    fn states_and_days_read_as_words() {
        assert_eq!(state_word(RunState::Executing), "executing");
        assert_eq!(state_word(RunState::Error), "error");
        assert_eq!(days(30.0), "30 days");
        assert_eq!(days(1.0), "1 day");
    }
}

/// The panel's markup as the server renders it, from a fixed view: every
/// party, its test ids, and peer words escaped, never markup.
#[cfg(all(test, feature = "ssr"))]
mod render_tests {
    use super::*;
    use crate::dto::{
        CapabilityRef, CapabilityView, NodeKind, NodeView, ReasonCode, RuleView, TopologyView,
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
        }
    }

    fn words(text: &str, from: &str) -> Option<UntrustedText> {
        Some(UntrustedText {
            text: text.into(),
            from: from.into(),
        })
    }

    fn message(
        from: &str,
        intent: &str,
        columns: &[&str],
        rationale: &str,
    ) -> NegotiationMessageView {
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
}
