//! "Metrics" in a drawer (DESIGN.md §6, metrics on the canvas): whether
//! work got done on an edge, or on every edge a system is part of — calls,
//! success rate, failures by reason code, retries, wait, human
//! interventions, unfinished tasks — exactly as the hub's `MetricsView`
//! says. The view is read and kept fresh by a
//! [`Refresher`](crate::canvas::commands::traffic::Refresher), a command.
//!
//! Test hooks: the section is `data-testid="metrics"`; each figure is a
//! `metric-<name>` with its number in `data-value`; each failure reason a
//! `metric-failure` with `data-reason` and `data-count`.

use leptos::prelude::*;

use crate::canvas::commands::traffic::Refresher;
use crate::canvas::traffic::{millis, percent};
use crate::dto::MetricsView;
use crate::format::format_number;

/// The section; `scope` says what it counts ("this connection", "this
/// system") in its empty state.
#[component]
pub(crate) fn MetricsSection(loader: Refresher<MetricsView>, scope: &'static str) -> impl IntoView {
    view! {
        <section class="drawer-section metrics" aria-label="Metrics" data-testid="metrics">
            <div class="section-head">
                <h3>"Metrics"</h3>
                <button
                    type="button"
                    class="link-button"
                    data-testid="metrics-refresh"
                    on:click=move |_| loader.poke()
                >
                    "Refresh"
                </button>
            </div>
            {move || match loader.view.get() {
                None => view! { <p class="muted" role="status">"Loading metrics…"</p> }.into_any(),
                Some(Err(f)) => view! {
                    <p class="not-connected" role="alert" data-testid="metrics-error">
                        "Could not load the metrics — " {f.describe()}
                    </p>
                }
                .into_any(),
                Some(Ok(m)) => view! { <MetricsBody m scope/> }.into_any(),
            }}
        </section>
    }
}

/// One figure: `<dt>label</dt><dd data-testid=metric-<name> data-value>`.
fn figure(label: &'static str, name: &'static str, value: String, text: String) -> impl IntoView {
    view! {
        <dt>{label}</dt>
        <dd data-testid=format!("metric-{name}") data-value=value>{text}</dd>
    }
}

fn count(label: &'static str, name: &'static str, n: u64) -> impl IntoView {
    figure(label, name, n.to_string(), format_number(n as f64))
}

#[component]
fn MetricsBody(m: MetricsView, scope: &'static str) -> impl IntoView {
    // Read from the hub's store, so they may be there before any call.
    let interventions = view! {
        {count("Approvals", "approvals", m.approvals)}
        {count("Rejections", "rejections", m.rejections)}
        {count("Unfinished tasks", "unfinished-tasks", m.unfinished_tasks)}
    };
    if m.calls == 0 {
        return view! {
            <p class="muted" data-testid="metrics-empty">
                {format!("No calls yet on {scope} since the hub started.")}
            </p>
            <dl class="metrics-list">{interventions}</dl>
        }
        .into_any();
    }
    let rate = m.success_rate.map_or_else(
        || "—".to_string(),
        |r| {
            format!(
                "{} ({} of {})",
                percent(r),
                format_number(m.succeeded as f64),
                format_number(m.calls as f64)
            )
        },
    );
    let failures = if m.failures.is_empty() {
        view! { <span class="muted">"none"</span> }.into_any()
    } else {
        view! {
            <ul class="metric-failures">
                {m
                    .failures
                    .iter()
                    .map(|f| {
                        view! {
                            <li
                                data-testid="metric-failure"
                                data-reason=f.reason.as_str()
                                data-count=f.count.to_string()
                            >
                                <code>{f.reason.as_str()}</code>
                                " · "
                                {format_number(f.count as f64)}
                            </li>
                        }
                    })
                    .collect_view()}
            </ul>
        }
        .into_any()
    };
    let wait = format!("{} / {}", millis(m.wait_p50_ms), millis(m.wait_p95_ms));
    view! {
        <dl class="metrics-list">
            {count("Calls", "calls", m.calls)}
            {figure(
                "Success rate",
                "success-rate",
                m.success_rate.map(|r| r.to_string()).unwrap_or_default(),
                rate,
            )}
            <dt>"Failures"</dt>
            <dd data-testid="metric-failures">{failures}</dd>
            {count("Retries", "retries", m.retries)}
            <dt>"Wait p50 / p95"</dt>
            <dd
                data-testid="metric-wait"
                data-p50=m.wait_p50_ms.map(|v| v.to_string())
                data-p95=m.wait_p95_ms.map(|v| v.to_string())
            >
                {wait}
            </dd>
            {interventions}
        </dl>
    }
    .into_any()
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use super::*;
    use crate::dto::{ReasonCode, ReasonCountView};

    fn metrics(calls: u64) -> MetricsView {
        MetricsView {
            scope: "buyercorp->vendorcorp:orders.query".into(),
            calls,
            succeeded: calls.saturating_sub(1),
            success_rate: (calls > 0).then(|| (calls - 1) as f64 / calls as f64),
            failures: if calls > 0 {
                vec![ReasonCountView {
                    reason: ReasonCode::PeerUnreachable,
                    count: 1,
                }]
            } else {
                vec![]
            },
            retries: 2,
            wait_p50_ms: Some(12),
            wait_p95_ms: None,
            approvals: 1,
            rejections: 0,
            unfinished_tasks: 3,
        }
    }

    fn render(m: MetricsView) -> String {
        let owner = Owner::new();
        owner.with(|| view! { <MetricsBody m scope="this connection"/> }.to_html())
    }

    #[test]
    fn figures_are_the_hubs() {
        let html = render(metrics(40));
        assert!(html.contains("97.5% (39 of 40)"), "{html}");
        assert!(html.contains(r#"data-reason="PEER_UNREACHABLE""#), "{html}");
        assert!(html.contains("12 ms / —"), "{html}");
        assert!(
            html.contains(r#"data-testid="metric-unfinished-tasks" data-value="3""#),
            "{html}"
        );
        assert!(!html.contains("metrics-empty"), "{html}");
    }

    #[test]
    fn no_calls_says_so() {
        let html = render(metrics(0));
        assert!(html.contains("No calls yet"), "{html}");
        assert!(!html.contains("metric-success-rate"), "{html}");
        assert!(
            html.contains(r#"data-testid="metric-approvals" data-value="1""#),
            "{html}"
        );
    }
}
