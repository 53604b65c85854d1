//! Words and numbers for what crossed an edge (DESIGN.md §6, metrics on
//! the canvas): an edge label's recent calls, the drawer's metrics and the
//! envelope inspector's one-line summaries. Pure: no reactive or browser
//! code, tested without a browser.
//!
//! Everything here says only what the hub's views say: a count over the
//! hub's window, a rate the hub computed, an outcome and a reason code the
//! hub recorded. Nothing is estimated or extrapolated.

use super::graph::text_cells;
use crate::dto::{EdgeTrafficView, ExchangeView, LastCallView, ReasonCode, TrafficOutcome};
use crate::format::format_number;

/// The wire spelling of an outcome: `data-*` attributes and CSS classes.
pub fn outcome_word(outcome: TrafficOutcome) -> &'static str {
    match outcome {
        TrafficOutcome::Connected => "connected",
        TrafficOutcome::Replayed => "replayed",
        TrafficOutcome::NotConnected => "not_connected",
    }
}

/// An outcome in words.
pub fn outcome_label(outcome: TrafficOutcome) -> &'static str {
    match outcome {
        TrafficOutcome::Connected => "connected",
        TrafficOutcome::Replayed => "replayed",
        TrafficOutcome::NotConnected => "not connected",
    }
}

/// Whether the caller got an answer (connected, or replayed from the
/// hub's store): the dot's colour, `ok` or `failed`.
pub fn outcome_ok(outcome: TrafficOutcome) -> bool {
    !matches!(outcome, TrafficOutcome::NotConnected)
}

/// How a count over `window_secs` reads after its number: `/min` for a
/// minute, `/h` for an hour, ` in 5 min` or ` in 30 s` otherwise.
pub fn window_suffix(window_secs: u32) -> String {
    match window_secs {
        60 => "/min".into(),
        3600 => "/h".into(),
        s if s >= 60 && s % 60 == 0 => format!(" in {} min", s / 60),
        s => format!(" in {s} s"),
    }
}

/// The window in words, for screen readers: `the last minute`, `the last
/// 5 minutes`, `the last 30 seconds`.
fn window_spoken(window_secs: u32) -> String {
    match window_secs {
        60 => "the last minute".into(),
        3600 => "the last hour".into(),
        s if s >= 60 && s % 60 == 0 => format!("the last {} minutes", s / 60),
        1 => "the last second".into(),
        s => format!("the last {s} seconds"),
    }
}

/// Whether the hub has seen no call on the edge at all: no calls in the
/// window and no last call. The label then says "no traffic".
pub fn is_quiet(t: &EdgeTrafficView) -> bool {
    t.calls == 0 && t.last.is_none()
}

/// The label's counts: `12/min` or `12/min · 1 failed`; `None` when the
/// edge is quiet ([`is_quiet`]).
pub fn traffic_text(t: &EdgeTrafficView) -> Option<String> {
    if is_quiet(t) {
        return None;
    }
    let mut s = format!(
        "{}{}",
        format_number(f64::from(t.calls)),
        window_suffix(t.window_secs)
    );
    if t.failures > 0 {
        s.push_str(&format!(
            " · {} failed",
            format_number(f64::from(t.failures))
        ));
    }
    Some(s)
}

/// The label's line in at most `cells` characters (its label's box, see
/// `graph::placement`): [`traffic_text`] when it fits, else the calls
/// alone (`12/min`: the line's colour still says some failed, and the
/// label's name and the drawer say how many); "no traffic" for a quiet
/// edge.
pub fn traffic_text_within(t: &EdgeTrafficView, cells: usize) -> String {
    let Some(full) = traffic_text(t) else {
        return "no traffic".into();
    };
    if text_cells(&full) <= cells || t.failures == 0 {
        return full;
    }
    format!(
        "{}{}",
        format_number(f64::from(t.calls)),
        window_suffix(t.window_secs)
    )
}

/// How an observed edge is drawn, from its traffic: calls got answers, or
/// every call in the window was refused or failed (greyed, the last
/// call's reason code in its label).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObservedState {
    /// Some call in the window got an answer.
    Answered,
    /// Every call in the window ended not connected; the last one's
    /// reason code.
    Refused(Option<ReasonCode>),
}

impl ObservedState {
    /// Of an observed edge's traffic (a quiet one is answered: nothing
    /// was refused).
    pub fn of(t: &EdgeTrafficView) -> Self {
        if t.calls > 0 && t.failures >= t.calls {
            ObservedState::Refused(t.last.as_ref().and_then(|l| l.reason))
        } else {
            ObservedState::Answered
        }
    }

    /// The wire spelling: `data-state` and CSS classes.
    pub fn word(self) -> &'static str {
        match self {
            ObservedState::Answered => "answered",
            ObservedState::Refused(_) => "refused",
        }
    }

    /// What the label adds after the capability: the reason code of a
    /// refused edge (`not connected` if the hub named none).
    pub fn badge(self) -> Option<&'static str> {
        match self {
            ObservedState::Answered => None,
            ObservedState::Refused(r) => Some(r.map_or("not connected", ReasonCode::as_str)),
        }
    }
}

/// Calls a minute over the view's window.
fn per_minute(t: &EdgeTrafficView) -> f64 {
    f64::from(t.calls) * 60.0 / f64::from(t.window_secs.max(1))
}

/// An observed edge's line width (world pixels): 1.5 for a call a
/// minute, thicker as the rate grows, at most 4.
pub fn observed_weight(t: &EdgeTrafficView) -> f64 {
    (1.0 + 0.5 * (1.0 + per_minute(t)).log2()).min(4.0)
}

/// Seconds one dash of an observed edge takes to run along it: about 2 s
/// at a call a minute, faster as the rate grows, never under 0.4 s.
pub fn observed_pace(t: &EdgeTrafficView) -> f64 {
    (3.0 / (1.0 + per_minute(t)).sqrt()).clamp(0.4, 3.0)
}

/// `2026-01-02T10:11:12.345Z` → `10:11:12`: the canvas is about now; the
/// full time is in the title.
pub fn clock(at: &str) -> String {
    at.split_once('T')
        .map(|(_, t)| t.chars().take(8).collect())
        .unwrap_or_else(|| at.to_string())
}

/// The last call in a sentence: `last call connected in 12 ms at
/// 10:11:12` or `last call not connected: PEER_UNREACHABLE, 3 ms at …`.
pub fn last_call_text(last: &LastCallView) -> String {
    let mut s = format!("last call {}", outcome_label(last.outcome));
    if let Some(r) = last.reason {
        s.push_str(&format!(": {r}"));
    }
    s.push_str(&format!(
        ", {} ms at {}",
        format_number(last.duration_ms as f64),
        clock(&last.at)
    ));
    s
}

/// The traffic in a sentence, appended to the label's accessible name:
/// `no traffic`, or `12 calls in the last minute, 1 failed, last call …`.
pub fn traffic_spoken(t: &EdgeTrafficView) -> String {
    if is_quiet(t) {
        return "no traffic".into();
    }
    let calls = if t.calls == 1 { "call" } else { "calls" };
    let mut s = format!(
        "{} {calls} in {}",
        format_number(f64::from(t.calls)),
        window_spoken(t.window_secs)
    );
    if t.failures > 0 {
        s.push_str(&format!(
            ", {} failed",
            format_number(f64::from(t.failures))
        ));
    }
    if let Some(last) = &t.last {
        s.push_str(", ");
        s.push_str(&last_call_text(last));
    }
    s
}

/// A success rate (0..=1) as a percentage with at most one decimal:
/// `100%`, `97.5%`, `0%`.
pub fn percent(rate: f64) -> String {
    let p = (rate.clamp(0.0, 1.0) * 1000.0).round() / 10.0;
    format!("{}%", format_number(p))
}

/// `12 ms`; `—` when the hub has no figure.
pub fn millis(ms: Option<u64>) -> String {
    ms.map_or_else(
        || "—".to_string(),
        |ms| format!("{} ms", format_number(ms as f64)),
    )
}

/// An exchange's one-line summary: time, method, HTTP status, outcome
/// (with its reason code) and duration.
pub fn exchange_summary(x: &ExchangeView) -> String {
    let mut outcome = outcome_label(x.outcome).to_string();
    if let Some(r) = x.reason {
        outcome.push_str(&format!(" · {r}"));
    }
    format!(
        "{} · {} · {} · {} · {}",
        clock(&x.at),
        x.method,
        x.http_status,
        outcome,
        millis(Some(x.duration_ms))
    )
}

/// A payload as text: pretty-printed JSON, shown in a text node (never
/// parsed as HTML by anything).
pub fn pretty_json(v: &serde_json::Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}

/// Whether a payload holds peer free text the redaction layer marked as
/// untrusted: an object of exactly `text` (a string) and `from`.
pub fn has_untrusted(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Object(m) => {
            let marked = m.len() == 2
                && m.get("text").is_some_and(serde_json::Value::is_string)
                && m.get("from").is_some_and(serde_json::Value::is_string);
            marked || m.values().any(has_untrusted)
        }
        serde_json::Value::Array(a) => a.iter().any(has_untrusted),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn traffic(calls: u32, failures: u32, last: Option<LastCallView>) -> EdgeTrafficView {
        EdgeTrafficView {
            edge: "a->b:c".into(),
            window_secs: 60,
            calls,
            failures,
            last,
        }
    }

    fn failed_last() -> LastCallView {
        LastCallView {
            at: "2026-01-02T10:11:12.345Z".into(),
            outcome: TrafficOutcome::NotConnected,
            reason: Some(ReasonCode::PeerUnreachable),
            duration_ms: 3,
        }
    }

    #[test]
    fn a_line_short_of_room_keeps_its_calls() {
        let t = traffic(12, 1, Some(failed_last()));
        assert_eq!(traffic_text_within(&t, 40), "12/min · 1 failed");
        assert_eq!(traffic_text_within(&t, 10), "12/min");
        assert_eq!(traffic_text_within(&traffic(0, 0, None), 10), "no traffic");
    }

    #[test]
    fn labels_say_what_the_hub_counted() {
        assert_eq!(traffic_text(&traffic(0, 0, None)), None);
        assert_eq!(traffic_spoken(&traffic(0, 0, None)), "no traffic");
        assert_eq!(
            traffic_text(&traffic(12, 0, None)).as_deref(),
            Some("12/min")
        );
        assert_eq!(
            traffic_text(&traffic(12, 1, Some(failed_last()))).as_deref(),
            Some("12/min · 1 failed")
        );
        // Calls long ago: nothing in the window, but a last call.
        assert_eq!(
            traffic_text(&traffic(0, 0, Some(failed_last()))).as_deref(),
            Some("0/min")
        );
        assert_eq!(
            traffic_spoken(&traffic(1, 1, Some(failed_last()))),
            "1 call in the last minute, 1 failed, last call not connected: \
             PEER_UNREACHABLE, 3 ms at 10:11:12"
        );
        let mut t = traffic(1234, 0, None);
        t.window_secs = 300;
        assert_eq!(traffic_text(&t).as_deref(), Some("1,234 in 5 min"));
        t.window_secs = 30;
        assert_eq!(traffic_text(&t).as_deref(), Some("1,234 in 30 s"));
        assert_eq!(window_suffix(3600), "/h");
    }

    #[test]
    fn observed_edges_grey_when_every_call_was_refused_and_speed_up_with_the_rate() {
        let refused = LastCallView {
            reason: Some(ReasonCode::NotPermitted),
            ..failed_last()
        };
        let t = traffic(2, 2, Some(refused));
        let st = ObservedState::of(&t);
        assert_eq!(st, ObservedState::Refused(Some(ReasonCode::NotPermitted)));
        assert_eq!((st.word(), st.badge()), ("refused", Some("NOT_PERMITTED")));
        // One answer in the window: not greyed.
        let some = traffic(3, 2, Some(failed_last()));
        assert_eq!(ObservedState::of(&some), ObservedState::Answered);
        assert_eq!(ObservedState::of(&some).badge(), None);
        assert_eq!(ObservedState::Refused(None).badge(), Some("not connected"));
        // Busier: thicker and faster, within bounds.
        let (one, many) = (traffic(1, 0, None), traffic(600, 0, None));
        assert!((observed_weight(&one) - 1.5).abs() < 1e-9);
        assert!(observed_weight(&many) > observed_weight(&one));
        assert!(observed_weight(&many) <= 4.0);
        assert!(observed_pace(&many) < observed_pace(&one));
        assert!((0.4..=3.0).contains(&observed_pace(&many)));
        assert!((0.4..=3.0).contains(&observed_pace(&traffic(0, 0, None))));
    }

    #[test]
    fn outcomes_and_numbers() {
        assert!(outcome_ok(TrafficOutcome::Replayed));
        assert!(!outcome_ok(TrafficOutcome::NotConnected));
        assert_eq!(outcome_word(TrafficOutcome::NotConnected), "not_connected");
        assert_eq!(percent(1.0), "100%");
        assert_eq!(percent(0.975), "97.5%");
        assert_eq!(percent(2.0 / 3.0), "66.7%");
        assert_eq!(percent(0.0), "0%");
        assert_eq!(millis(None), "—");
        assert_eq!(millis(Some(1500)), "1,500 ms");
        assert_eq!(clock("not a time"), "not a time");
    }

    #[test]
    fn payloads_are_text_and_untrusted_text_is_found() {
        let v = serde_json::json!({"subject": {"text": "<b>hi</b>", "from": "helpdesk"}, "n": 1});
        assert!(has_untrusted(&v));
        assert!(pretty_json(&v).contains("\"<b>hi</b>\""));
        assert!(!has_untrusted(
            &serde_json::json!({"text": "x", "from": "y", "z": 1})
        ));
        assert!(has_untrusted(
            &serde_json::json!([{"text": "x", "from": "y"}])
        ));
    }

    #[test]
    fn an_exchange_reads_in_one_line() {
        let x = ExchangeView {
            at: "2026-01-02T10:11:12.345Z".into(),
            method: "SendMessage".into(),
            version: "1.0".into(),
            request_id: "r1".into(),
            traceparent: "00-abc-def-01".into(),
            caller: "buyercorp".into(),
            provider: "vendorcorp".into(),
            capability: "orders.query".into(),
            http_status: 502,
            outcome: TrafficOutcome::NotConnected,
            reason: Some(ReasonCode::PeerUnreachable),
            duration_ms: 4,
            task_id: None,
            task_state: None,
            request: None,
            response: None,
            payload_note: Some("no answer".into()),
        };
        assert_eq!(
            exchange_summary(&x),
            "10:11:12 · SendMessage · 502 · not connected · PEER_UNREACHABLE · 4 ms"
        );
    }
}
