//! "Inspector" in an edge's drawer (DESIGN.md §6, metrics on the canvas;
//! §2 "envelope"): the edge's last exchanges as the hub recorded them,
//! newest first. Each is one line (time, A2A method, HTTP status, outcome
//! and reason code, duration) that opens to the envelope (A2A version,
//! request id, traceparent), the task it made or read, and the payloads
//! **after** the contract's redaction, as pretty JSON text.
//!
//! Payloads are peer data: they are shown as text nodes only, never as
//! HTML, and strings the redaction layer marked untrusted (`{text, from}`)
//! stay text too, flagged as the peer's unverified words. Nothing here is
//! a control but the disclosure itself. The view is read and kept fresh
//! by a [`Refresher`](crate::canvas::commands::traffic::Refresher); the
//! list is keyed, so a refresh keeps open exchanges open.
//!
//! Test hooks: the section is `data-testid="inspector"`; each exchange an
//! `exchange` with `data-outcome`, `data-reason`, `data-method`,
//! `data-http-status`, `data-request-id`; inside it `exchange-summary`,
//! `exchange-request`, `exchange-response`, `exchange-note`.

use leptos::prelude::*;

use crate::canvas::commands::traffic::Refresher;
use crate::canvas::traffic::{
    exchange_summary, has_untrusted, outcome_ok, outcome_word, pretty_json,
};
use crate::dto::{ExchangeView, InspectorView};

/// What the section shows; changes only when the kind of content does, so
/// a refresh of the list does not rebuild it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shown {
    Loading,
    Failed,
    Empty,
    List,
}

/// The key of an exchange in the keyed list.
fn key(x: &ExchangeView) -> String {
    format!("{}|{}|{}|{}", x.at, x.request_id, x.method, x.traceparent)
}

/// The section.
#[component]
pub(crate) fn InspectorSection(loader: Refresher<InspectorView>) -> impl IntoView {
    let shown = Memo::new(move |_| {
        loader.view.with(|v| match v {
            None => Shown::Loading,
            Some(Err(_)) => Shown::Failed,
            Some(Ok(v)) if v.exchanges.is_empty() => Shown::Empty,
            Some(Ok(_)) => Shown::List,
        })
    });
    let exchanges = Memo::new(move |_| {
        loader.view.with(|v| match v {
            Some(Ok(v)) => v.exchanges.clone(),
            _ => Vec::new(),
        })
    });
    let caption = move || {
        loader.view.with(|v| match v {
            Some(Ok(v)) if !v.exchanges.is_empty() => Some(format!(
                "The last {} exchanges, newest first (the hub keeps up to {}); payloads as redacted by the contract.",
                v.exchanges.len(),
                v.capacity
            )),
            _ => None,
        })
    };
    let failure = move || {
        loader.view.with(|v| match v {
            Some(Err(f)) => f.describe(),
            _ => String::new(),
        })
    };
    view! {
        <section class="drawer-section inspector" aria-label="Inspector" data-testid="inspector">
            <div class="section-head">
                <h3>"Inspector"</h3>
                <button
                    type="button"
                    class="link-button"
                    data-testid="inspector-refresh"
                    on:click=move |_| loader.poke()
                >
                    "Refresh"
                </button>
            </div>
            {move || caption().map(|c| view! { <p class="muted inspector-caption">{c}</p> })}
            {move || match shown.get() {
                Shown::Loading => {
                    view! { <p class="muted" role="status">"Loading the exchanges…"</p> }.into_any()
                }
                Shown::Failed => view! {
                    <p class="not-connected" role="alert" data-testid="inspector-error">
                        "Could not load the exchanges — " {failure}
                    </p>
                }
                .into_any(),
                Shown::Empty => view! {
                    <p class="muted" data-testid="inspector-empty">"No exchanges yet."</p>
                }
                .into_any(),
                Shown::List => view! {
                    <ol class="exchanges" data-testid="exchanges">
                        <For
                            each=move || exchanges.get()
                            key=key
                            children=|x| view! { <Exchange x/> }
                        />
                    </ol>
                }
                .into_any(),
            }}
        </section>
    }
}

/// A payload as text, or nothing when the hub sent none.
fn payload(
    title: &'static str,
    testid: &'static str,
    value: Option<serde_json::Value>,
) -> Option<impl IntoView> {
    value.map(|v| {
        let untrusted = has_untrusted(&v).then(|| {
            view! {
                <p class="payload-untrusted">
                    "Holds peer free text (each " <code>"{text, from}"</code>
                    "): the peer's words, data, unverified."
                </p>
            }
        });
        view! {
            <h5>{title}</h5>
            {untrusted}
            <pre class="payload" data-testid=testid><code>{pretty_json(&v)}</code></pre>
        }
    })
}

/// One exchange: its summary line, and the envelope and payloads behind it.
#[component]
fn Exchange(x: ExchangeView) -> impl IntoView {
    let ok = outcome_ok(x.outcome);
    let summary = exchange_summary(&x);
    let reason = x.reason.map(|r| r.as_str());
    let task = x.task_id.clone().map(|id| {
        let state = x
            .task_state
            .clone()
            .unwrap_or_else(|| "state not reported".into());
        view! {
            <dt>"Task"</dt>
            <dd data-testid="exchange-task" data-task-state=x.task_state.clone()>
                <code>{id}</code> " · " {state}
            </dd>
        }
    });
    let note = x
        .payload_note
        .clone()
        .map(|n| view! { <p class="muted payload-note" data-testid="exchange-note">{n}</p> });
    view! {
        <li
            class=format!("exchange {}", if ok { "ok" } else { "failed" })
            data-testid="exchange"
            data-outcome=outcome_word(x.outcome)
            data-reason=reason
            data-method=x.method.clone()
            data-http-status=x.http_status.to_string()
            data-request-id=x.request_id.clone()
        >
            <details>
                <summary data-testid="exchange-summary" title=x.at.clone()>
                    <span class=if ok { "traffic-dot ok" } else { "traffic-dot failed" } aria-hidden="true"></span>
                    {summary}
                </summary>
                <dl class="envelope">
                    <dt>"Call"</dt>
                    <dd>{x.caller.clone()} " → " {x.provider.clone()} " · " <code>{x.capability.clone()}</code></dd>
                    <dt>"A2A version"</dt>
                    <dd data-testid="exchange-version"><code>{x.version.clone()}</code></dd>
                    <dt>"Request id"</dt>
                    <dd data-testid="exchange-request-id"><code>{x.request_id.clone()}</code></dd>
                    <dt>"traceparent"</dt>
                    <dd data-testid="exchange-traceparent"><code>{x.traceparent.clone()}</code></dd>
                    {task}
                </dl>
                {payload("Request", "exchange-request", x.request.clone())}
                {payload("Response", "exchange-response", x.response.clone())}
                {note}
            </details>
        </li>
    }
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use super::*;
    use crate::dto::TrafficOutcome;

    #[test]
    fn payloads_are_text_never_html() {
        let x = ExchangeView {
            at: "2026-01-02T10:11:12Z".into(),
            method: "SendMessage".into(),
            version: "1.0".into(),
            request_id: "req-1".into(),
            traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01".into(),
            caller: "buyercorp".into(),
            provider: "helpdesk".into(),
            capability: "ticket.triage".into(),
            http_status: 200,
            outcome: TrafficOutcome::Connected,
            reason: None,
            duration_ms: 9,
            task_id: Some("t-1".into()),
            task_state: Some("completed".into()),
            request: Some(serde_json::json!({"ticket_id": "T-1003"})),
            response: Some(serde_json::json!({
                "requester_email": "a***@example.com",
                "subject": {"text": "<img src=x onerror=alert(1)>", "from": "helpdesk"}
            })),
            payload_note: None,
        };
        let owner = Owner::new();
        let html = owner.with(|| view! { <Exchange x/> }.to_html());
        assert!(!html.contains("<img"), "{html}");
        assert!(html.contains("&lt;img"), "{html}");
        assert!(html.contains("a***@example.com"), "{html}");
        assert!(html.contains("Holds peer free text"), "{html}");
        assert!(html.contains(r#"data-outcome="connected""#), "{html}");
        assert!(html.contains("completed"), "{html}");
    }
}
