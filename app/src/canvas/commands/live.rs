//! The live channel: the hub's Server-Sent Events, applied to the canvas
//! without a reload.
//!
//! `status_changed` patches one system's health (its node, children and
//! edges follow); `topology_changed` refetches the topology;
//! `inbox_changed` updates the Inbox link's count of waiting proposals;
//! `agents_changed` reads again which of the hub's own agents are offered
//! ([`agents`](super::agents)); `traffic` replaces the recent traffic of
//! the edges it names, and only theirs ([`traffic`](super::traffic)).
//! The browser's `EventSource` retries by itself after a network error;
//! when it gives up (an HTTP error answer) this module reopens it with a
//! growing delay, and any reconnection refetches, since events may have
//! been missed.

use leptos::prelude::Set;

use crate::canvas::health::Health;
use crate::canvas::state::CanvasCtx;
use crate::dto::{HubEvent, NodeStatus};

/// Applies one event's JSON to the canvas. Unknown or malformed events are
/// ignored: a newer hub may send kinds this bundle does not know.
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
pub(crate) fn apply(ctx: &CanvasCtx, json: &str, now: impl FnOnce() -> String) -> bool {
    match serde_json::from_str::<HubEvent>(json) {
        Ok(HubEvent::StatusChanged {
            system,
            status,
            reason,
            detail,
        }) => {
            let degraded = status == NodeStatus::Degraded;
            ctx.apply_status(
                system,
                Health {
                    status,
                    reason: if degraded { reason } else { None },
                    detail: if degraded { detail } else { None },
                    // The event carries no time: the browser stamps arrival.
                    since: degraded.then(now),
                },
            );
            true
        }
        Ok(HubEvent::TopologyChanged) => {
            ctx.refetch();
            true
        }
        Ok(HubEvent::InboxChanged { pending }) => {
            ctx.inbox_pending.set(Some(pending));
            true
        }
        Ok(HubEvent::AgentsChanged) => {
            ctx.refetch_agents();
            true
        }
        Ok(HubEvent::Traffic { edges, observed }) => {
            ctx.traffic.apply_event(edges, observed);
            true
        }
        Err(_) => false,
    }
}

#[cfg(feature = "hydrate")]
pub(crate) use browser::start;

#[cfg(feature = "hydrate")]
mod browser {
    use std::cell::RefCell;
    use std::rc::Rc;
    use std::time::Duration;

    use leptos::prelude::*;
    use wasm_bindgen::closure::Closure;
    use wasm_bindgen::{JsCast, JsValue};
    use web_sys::{EventSource, MessageEvent};

    use super::apply;
    use crate::canvas::state::{CanvasCtx, LinkState};

    const FIRST_RETRY_MS: u64 = 1_000;
    const MAX_RETRY_MS: u64 = 10_000;

    #[derive(Default)]
    struct Channel {
        source: Option<EventSource>,
        retry: Option<TimeoutHandle>,
        retry_ms: u64,
        /// An error happened since the last open: refetch on reopening.
        missed: bool,
        stopped: bool,
    }

    type Shared = Rc<RefCell<Channel>>;

    /// Opens the channel; the returned function closes it for good.
    pub(crate) fn start(ctx: CanvasCtx) -> impl FnOnce() {
        let shared: Shared = Rc::new(RefCell::new(Channel {
            retry_ms: FIRST_RETRY_MS,
            ..Channel::default()
        }));
        open(ctx, shared.clone());
        move || {
            let mut ch = shared.borrow_mut();
            ch.stopped = true;
            if let Some(es) = ch.source.take() {
                es.close();
            }
            if let Some(t) = ch.retry.take() {
                t.clear();
            }
        }
    }

    fn now_iso() -> String {
        String::from(js_sys::Date::new_0().to_iso_string())
    }

    fn open(ctx: CanvasCtx, shared: Shared) {
        if shared.borrow().stopped {
            return;
        }
        let es = match EventSource::new(crate::routes::EVENTS) {
            Ok(es) => es,
            Err(_) => {
                schedule_reopen(ctx, shared);
                return;
            }
        };

        let on_open = {
            let shared = shared.clone();
            Closure::<dyn FnMut(JsValue)>::new(move |_| {
                let missed = {
                    let mut ch = shared.borrow_mut();
                    ch.retry_ms = FIRST_RETRY_MS;
                    std::mem::take(&mut ch.missed)
                };
                ctx.link.try_set(LinkState::Live);
                // A refetch of the topology reads the traffic again too.
                if missed {
                    ctx.refetch();
                    ctx.refetch_agents();
                }
            })
            .into_js_value()
        };
        es.set_onopen(Some(on_open.unchecked_ref()));

        // The hub sends unnamed events (`message`); named ones are accepted
        // too, so either framing of the same JSON works.
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
            if let Some(text) = ev.data().as_string() {
                apply(&ctx, &text, now_iso);
            }
        })
        .into_js_value();
        for name in [
            "message",
            "status_changed",
            "topology_changed",
            "agents_changed",
            "traffic",
        ] {
            let _ = es.add_event_listener_with_callback(name, on_message.unchecked_ref());
        }

        let on_error = {
            let shared = shared.clone();
            Closure::<dyn FnMut(JsValue)>::new(move |_| {
                ctx.link.try_set(LinkState::Reconnecting);
                let closed = {
                    let mut ch = shared.borrow_mut();
                    ch.missed = true;
                    ch.source
                        .as_ref()
                        .is_some_and(|es| es.ready_state() == EventSource::CLOSED)
                };
                // CONNECTING: the browser retries by itself. CLOSED: it gave
                // up (an HTTP error answer), so we retry.
                if closed {
                    if let Some(es) = shared.borrow_mut().source.take() {
                        es.close();
                    }
                    schedule_reopen(ctx, shared.clone());
                }
            })
            .into_js_value()
        };
        es.set_onerror(Some(on_error.unchecked_ref()));

        shared.borrow_mut().source = Some(es);
    }

    fn schedule_reopen(ctx: CanvasCtx, shared: Shared) {
        ctx.link.try_set(LinkState::Reconnecting);
        let delay = {
            let mut ch = shared.borrow_mut();
            if ch.stopped {
                return;
            }
            ch.missed = true;
            let d = ch.retry_ms;
            ch.retry_ms = (d * 2).min(MAX_RETRY_MS);
            d
        };
        let again = shared.clone();
        if let Ok(handle) =
            set_timeout_with_handle(move || open(ctx, again), Duration::from_millis(delay))
        {
            shared.borrow_mut().retry = Some(handle);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dto::ReasonCode;
    use leptos::prelude::*;

    #[test]
    fn status_events_patch_and_topology_events_refetch() {
        let owner = Owner::new();
        owner.with(|| {
            let ctx = CanvasCtx::new();
            let json = r#"{"type":"status_changed","system":"vendorcorp","status":"degraded","reason":"PEER_UNREACHABLE","detail":"connection refused"}"#;
            assert!(apply(&ctx, json, || "2026-01-01T00:00:00Z".into()));
            let patch = ctx.live.with_untracked(|m| m.get("vendorcorp").cloned());
            let Some(patch) = patch else {
                panic!("patched");
            };
            assert_eq!(patch.seq, 1);
            assert_eq!(patch.health.reason, Some(ReasonCode::PeerUnreachable));
            assert_eq!(patch.health.since.as_deref(), Some("2026-01-01T00:00:00Z"));

            assert!(apply(&ctx, r#"{"type":"topology_changed"}"#, String::new));
            assert_eq!(ctx.refresh.get_untracked(), 1);
            assert_eq!(ctx.inbox_pending.get_untracked(), None);
            assert!(apply(&ctx, r#"{"type":"inbox_changed","pending":3}"#, String::new));
            assert_eq!(ctx.inbox_pending.get_untracked(), Some(3));
            assert!(apply(&ctx, r#"{"type":"agents_changed"}"#, String::new));
            assert_eq!(ctx.agents.refresh.get_untracked(), 1);
            assert_eq!(ctx.refresh.get_untracked(), 1);
            assert!(!apply(&ctx, r#"{"type":"something_new"}"#, String::new));
            assert!(!apply(&ctx, "not json", String::new));
        });
    }

    #[test]
    fn traffic_events_replace_only_the_edges_they_name() {
        use crate::canvas::state::EdgeTraffic;
        let owner = Owner::new();
        owner.with(|| {
            let ctx = CanvasCtx::new();
            let a = "buyercorp->vendorcorp:orders.query";
            let b = "hub->helpdesk:ticket.classify";
            assert_eq!(ctx.traffic.get(a), EdgeTraffic::Unknown);
            let json = r#"{"type":"traffic","edges":[{"edge":"buyercorp->vendorcorp:orders.query","window_secs":60,"calls":3,"failures":1,"last":{"at":"2026-01-01T00:00:00Z","outcome":"not_connected","reason":"PEER_UNREACHABLE","duration_ms":4}}]}"#;
            assert!(apply(&ctx, json, String::new));
            let Some(v) = ctx.traffic.get(a).view().cloned() else {
                panic!("applied");
            };
            assert_eq!((v.calls, v.failures), (3, 1));
            assert_eq!(
                v.last.and_then(|l| l.reason),
                Some(ReasonCode::PeerUnreachable)
            );
            assert_eq!(ctx.traffic.get(b), EdgeTraffic::Unknown);
            // A topology refetch is not asked for: only the cells change.
            assert_eq!(ctx.refresh.get_untracked(), 0);
            assert!(!apply(&ctx, "not json", String::new));
        });
    }

    #[test]
    fn traffic_events_name_the_observed_edges_and_drop_them_when_quiet() {
        let owner = Owner::new();
        owner.with(|| {
            let ctx = CanvasCtx::new();
            let id = "helpdesk->vendorcorp:orders.query";
            let seen = r#"{"type":"traffic","edges":[{"edge":"helpdesk->vendorcorp:orders.query","window_secs":60,"calls":1,"failures":1,"last":{"at":"2026-01-01T00:00:00Z","outcome":"not_connected","reason":"NOT_PERMITTED","duration_ms":1}}],"observed":[{"id":"helpdesk->vendorcorp:orders.query","consumer":"helpdesk","provider":"vendorcorp","capability":"orders.query"}]}"#;
            assert!(apply(&ctx, seen, String::new));
            let ends = ctx.traffic.observed.with_untracked(|s| {
                s.get(id)
                    .map(|o| (o.consumer.clone(), o.provider.clone(), o.capability.clone()))
            });
            assert_eq!(
                ends,
                Some(("helpdesk".into(), "vendorcorp".into(), "orders.query".into()))
            );
            // The window emptied: pushed once more, not named.
            let quiet = r#"{"type":"traffic","edges":[{"edge":"helpdesk->vendorcorp:orders.query","window_secs":60,"calls":0,"failures":0,"last":null}],"observed":[]}"#;
            assert!(apply(&ctx, quiet, String::new));
            assert!(ctx.traffic.observed.with_untracked(|s| s.is_empty()));
        });
    }
}
