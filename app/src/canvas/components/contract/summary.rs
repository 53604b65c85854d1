//! A party's contract with the provider: the granted one's summary, or,
//! without one, what would start one (the hub's form below, or the
//! command a member runs on its side).

use leptos::prelude::*;

use super::columns::ColumnList;
use super::context::{Directory, PartyCtx};
use super::peer_text::Untrusted;
use super::words::{days, member_command, tid};
use crate::dto::{ContractSummaryView, PartyContractView};

/// A granted contract: id, columns, purpose, retention, expiry.
#[component]
pub(super) fn Contract(consumer: String, k: ContractSummaryView) -> impl IntoView {
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
pub(super) fn NoContract(
    p: PartyContractView,
    ctx_of: PartyCtx,
    can_negotiate: bool,
) -> impl IntoView {
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
