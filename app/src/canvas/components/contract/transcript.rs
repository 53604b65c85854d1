//! A party's newest negotiation, turn by turn, as the hub recorded it:
//! what the consumer sent, and the reply or why there was none.

use leptos::prelude::*;

use super::columns::ColumnList;
use super::peer_text::Untrusted;
use super::words::{days, tid};
use crate::dto::{CallOutcomeView, NegotiationMessageView, TurnView};

/// The newest negotiation's turns, as the hub recorded them.
#[component]
pub(super) fn Transcript(consumer: String, turns: Vec<TurnView>) -> impl IntoView {
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
