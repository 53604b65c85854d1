//! The tracing setup the hub and every peer share, and DESIGN.md §6's
//! "OpenTelemetry traces whose trace id is the envelope's".
//!
//! [`init`] installs the log lines both binaries print (`tracing_subscriber`
//! `fmt` under an `EnvFilter`, `RUST_LOG` or the binary's default) and,
//! only when `OTEL_EXPORTER_OTLP_ENDPOINT` is set, an OpenTelemetry layer
//! exporting spans over OTLP/HTTP (protobuf) with a batch span processor,
//! resource `service.name` = the binary's name (`wall-street-hub`,
//! `peer-<system>`). Without the variable there is no exporter and no
//! layer, and every span constructor here answers [`Span::none`]: the
//! spans cost one atomic load, and the log lines are the same as ever.
//!
//! The spans are few and named here, so that what leaves a process is
//! decided in one place (ids, capability names, outcomes and reason
//! codes; never a token, an input or an answer):
//!
//! | span | where | kind |
//! |---|---|---|
//! | `gateway.call` | the hub, one per gateway call (`Gateway::handle`, `Gateway::call_in`) | server |
//! | `gateway.forward` | the hub's leg to the provider | client |
//! | `gateway.mcp` | the hub's MCP door (`tools/call`) | server |
//! | `peer.execute` | a peer, one per call it answers | server |
//! | `peer.call` | a peer, one per call it makes through the hub | client |
//!
//! One trace id throughout: a span that receives a call is parented on the
//! envelope's W3C `traceparent` ([`parent_on`], [`continue_trace`]), so
//! its trace id *is* the envelope's, and the traceparent sent on names the
//! sending span ([`next_hop`], [`traceparent_of`]): the hub's forward span
//! is the responder's parent, the caller's span the hub's. The trace id a
//! hop sends is the envelope's either way; only the parent span id comes
//! from OpenTelemetry when it is on.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use http::{HeaderMap, HeaderValue};
use opentelemetry::trace::{
    SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState, TracerProvider as _,
};
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use tracing::field::Empty;
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

use crate::envelope::{TraceParent, TRACEPARENT_HEADER};
use crate::reason::CallResult;
use crate::text::clip;

/// The standard variable that turns the exporter on (its base URL:
/// spans go to `<it>/v1/traces`).
pub const ENDPOINT_ENV: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";

/// The tracing target of every span below: the OpenTelemetry layer sees
/// these spans and nothing else (no log event, no library's span), and the
/// log lines never show them.
pub const TARGET: &str = "wall_street::trace";

/// How long a shutdown waits for the last spans to leave.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);

static ENABLED: AtomicBool = AtomicBool::new(false);

/// Whether spans are exported (the OpenTelemetry layer is installed).
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Whether the environment asks for export: [`ENDPOINT_ENV`] set and not
/// empty, `OTEL_SDK_DISABLED` not `true`. (A binary may look up its
/// service name only then.)
pub fn requested() -> bool {
    std::env::var(ENDPOINT_ENV).is_ok_and(|v| !v.trim().is_empty())
        && !std::env::var("OTEL_SDK_DISABLED").is_ok_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

/// The log lines a binary prints.
#[derive(Debug, Clone, Copy)]
pub struct Logs {
    /// The filter when `RUST_LOG` is unset (`"info"`).
    pub default_filter: &'static str,
    /// Print to stderr instead of stdout.
    pub stderr: bool,
}

/// Installs the global subscriber: the log lines always, the OTLP
/// exporter when [`ENDPOINT_ENV`] is set (and `OTEL_SDK_DISABLED` is not
/// `true`). Keep the guard until the process ends: [`Telemetry::shutdown`]
/// (or dropping it) flushes the spans still queued.
pub fn init(service_name: &str, logs: Logs) -> Telemetry {
    let env_filter =
        || EnvFilter::try_from_default_env().unwrap_or_else(|_| logs.default_filter.into());
    if !requested() {
        // Exactly the subscriber the binaries installed before.
        let fmt = tracing_subscriber::fmt().with_env_filter(env_filter());
        if logs.stderr {
            fmt.with_writer(std::io::stderr).init();
        } else {
            fmt.init();
        }
        return Telemetry { provider: None };
    }
    let provider = match tracer_provider(service_name) {
        Ok(p) => Some(p),
        Err(e) => {
            eprintln!("{service_name}: OpenTelemetry export is off: {e}");
            None
        }
    };
    let otel = provider.as_ref().map(|p| {
        tracing_opentelemetry::layer()
            .with_tracer(p.tracer("wall-street"))
            // The attributes are the span's own fields: no thread, source
            // location, target or busy/idle timings.
            .with_threads(false)
            .with_location(false)
            .with_target(false)
            .with_tracked_inactivity(false)
            .with_filter(Targets::new().with_target(TARGET, tracing::Level::INFO))
    });
    // The log lines keep their own filter, and never show the spans above.
    let quiet_spans = format!("{TARGET}=off").parse().expect("a static directive");
    let fmt = tracing_subscriber::fmt::layer();
    let registry = tracing_subscriber::registry().with(otel);
    if logs.stderr {
        registry
            .with(
                fmt.with_writer(std::io::stderr)
                    .with_filter(env_filter().add_directive(quiet_spans)),
            )
            .init();
    } else {
        registry
            .with(fmt.with_filter(env_filter().add_directive(quiet_spans)))
            .init();
    }
    ENABLED.store(provider.is_some(), Ordering::Relaxed);
    Telemetry { provider }
}

/// The SDK's provider: OTLP/HTTP protobuf to [`ENDPOINT_ENV`] (the
/// exporter reads it, and the other `OTEL_EXPORTER_OTLP_*` variables),
/// a batch span processor (`OTEL_BSP_*`), this service's name.
fn tracer_provider(service_name: &str) -> Result<SdkTracerProvider, String> {
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .build()
        .map_err(|e| e.to_string())?;
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(
            Resource::builder()
                .with_service_name(service_name.to_string())
                .build(),
        )
        .build())
}

/// Flushes the queued spans when shut down or dropped.
#[must_use = "dropping the guard at once would end the export"]
pub struct Telemetry {
    provider: Option<SdkTracerProvider>,
}

impl Telemetry {
    /// Sends what is queued and stops the exporter (at most a few
    /// seconds). Call it before the process exits; spans made after it
    /// are dropped.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if let Some(provider) = self.provider.take() {
            ENABLED.store(false, Ordering::Relaxed);
            if let Err(e) = provider.shutdown_with_timeout(SHUTDOWN_TIMEOUT) {
                eprintln!("OpenTelemetry: the last spans may be lost: {e}");
            }
        }
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        self.stop();
    }
}

/// An attribute value from a caller's words (a claimed system id, a
/// capability name): clipped like the audit trail clips them.
fn attr(v: &str) -> String {
    clip(v, 64)
}

/// The hub's span of one gateway call: `caller` asking `provider` for
/// `capability`. Parent it with [`continue_trace`] or [`parent_on`]; the
/// request id, outcome and reason are recorded by [`record_result`].
pub fn gateway_span(caller: &str, provider: &str, capability: &str) -> Span {
    if !enabled() {
        return Span::none();
    }
    tracing::info_span!(
        target: TARGET,
        "gateway.call",
        otel.kind = "server",
        otel.status_code = Empty,
        caller = attr(caller),
        provider = attr(provider),
        capability = attr(capability),
        request_id = Empty,
        outcome = Empty,
        reason = Empty,
    )
}

/// The hub's leg to the provider, inside a [`gateway_span`]: the
/// responder's span is its child ([`next_hop`]).
pub fn forward_span(caller: &str, provider: &str, capability: &str, request_id: &str) -> Span {
    if !enabled() {
        return Span::none();
    }
    tracing::info_span!(
        target: TARGET,
        "gateway.forward",
        otel.kind = "client",
        otel.status_code = Empty,
        caller = attr(caller),
        provider = attr(provider),
        capability = attr(capability),
        request_id = attr(request_id),
        outcome = Empty,
        reason = Empty,
    )
}

/// The hub's MCP door: one `tools/call` of `provider`'s data plane.
pub fn mcp_span(caller: &str, provider: &str, tool: &str) -> Span {
    if !enabled() {
        return Span::none();
    }
    tracing::info_span!(
        target: TARGET,
        "gateway.mcp",
        otel.kind = "server",
        otel.status_code = Empty,
        caller = attr(caller),
        provider = attr(provider),
        tool = attr(tool),
        request_id = Empty,
        outcome = Empty,
        reason = Empty,
    )
}

/// A peer answering one call (`provider` is the peer itself); the
/// capability and outcome are recorded when known.
pub fn execute_span(caller: &str, provider: &str) -> Span {
    if !enabled() {
        return Span::none();
    }
    tracing::info_span!(
        target: TARGET,
        "peer.execute",
        otel.kind = "server",
        otel.status_code = Empty,
        caller = attr(caller),
        provider = attr(provider),
        capability = Empty,
        request_id = Empty,
        outcome = Empty,
    )
}

/// A peer calling `provider`'s `capability` through the hub; parent it on
/// the caller's traceparent with [`parent_on`], send [`traceparent_of`].
pub fn call_span(caller: &str, provider: &str, capability: &str, request_id: &str) -> Span {
    if !enabled() {
        return Span::none();
    }
    tracing::info_span!(
        target: TARGET,
        "peer.call",
        otel.kind = "client",
        otel.status_code = Empty,
        caller = attr(caller),
        provider = attr(provider),
        capability = attr(capability),
        request_id = attr(request_id),
        outcome = Empty,
        reason = Empty,
    )
}

/// The OpenTelemetry span context of a traceparent (remote, as received).
fn span_context(trace: &TraceParent) -> Option<SpanContext> {
    let trace_id = TraceId::from_hex(&trace.trace_id).ok()?;
    let span_id = SpanId::from_hex(&trace.span_id).ok()?;
    let cx = SpanContext::new(
        trace_id,
        span_id,
        TraceFlags::new(trace.flags),
        true,
        TraceState::default(),
    );
    cx.is_valid().then_some(cx)
}

/// Makes `span` continue `trace`: a child of the traceparent's span, so
/// its trace id is the envelope's. A span already inside a span of the
/// same trace in this process (a hub agent's call made while the hub
/// serves a call) stays that span's child.
pub fn parent_on(span: &Span, trace: &TraceParent) {
    if span.is_disabled() {
        return;
    }
    let current = opentelemetry::Context::current();
    let same_trace = {
        let here = current.span();
        let here = here.span_context();
        here.is_valid() && here.trace_id().to_string() == trace.trace_id
    };
    if same_trace {
        return;
    }
    if let Some(cx) = span_context(trace) {
        let _ = span.set_parent(opentelemetry::Context::new().with_remote_span_context(cx));
    }
}

/// Makes `span` continue the trace of a call's headers: parented on its
/// `traceparent`; or, when it carries none that parses (W3C: start a new
/// trace), `span` starts the trace and its traceparent is written into
/// `headers`, so the envelope read from them afterwards carries the
/// span's trace id. Does nothing when export is off.
pub fn continue_trace(span: &Span, headers: &mut HeaderMap) {
    if span.is_disabled() {
        return;
    }
    let received = headers
        .get(TRACEPARENT_HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(TraceParent::parse);
    match received {
        Some(trace) => parent_on(span, &trace),
        None => {
            if let Some(tp) = own_traceparent(span) {
                if let Ok(v) = HeaderValue::from_str(&tp.to_header()) {
                    headers.insert(TRACEPARENT_HEADER, v);
                }
            }
        }
    }
}

/// The traceparent naming `span` itself (trace id and span id), when it is
/// exported.
fn own_traceparent(span: &Span) -> Option<TraceParent> {
    if span.is_disabled() {
        return None;
    }
    from_context(&span.context())
}

fn from_context(cx: &opentelemetry::Context) -> Option<TraceParent> {
    let span = cx.span();
    let sc = span.span_context();
    sc.is_valid().then(|| TraceParent {
        trace_id: sc.trace_id().to_string(),
        span_id: sc.span_id().to_string(),
        flags: sc.trace_flags().to_u8(),
    })
}

/// The traceparent to send from `span` for a call continuing `trace`:
/// `trace`'s trace id, `span`'s span id. `None` when export is off or the
/// span is not in that trace (then send what you would have sent).
pub fn traceparent_of(span: &Span, trace: &TraceParent) -> Option<TraceParent> {
    own_traceparent(span).filter(|tp| tp.trace_id == trace.trace_id)
}

/// The traceparent to forward for a call continuing `trace`, from the
/// span being polled (the hub's forward span): same trace id, that span as
/// the parent. `None` when export is off or no span of that trace is
/// current (then `trace.child()`, as always).
pub fn next_hop(trace: &TraceParent) -> Option<TraceParent> {
    if !enabled() {
        return None;
    }
    from_context(&opentelemetry::Context::current()).filter(|tp| tp.trace_id == trace.trace_id)
}

/// Records a call's labelled result on its span: the request id, the
/// outcome and, for `not_connected`, the reason code (and an error
/// status).
pub fn record_result(span: &Span, result: &CallResult) {
    if span.is_disabled() {
        return;
    }
    match result {
        CallResult::Connected {
            request_id,
            replayed,
            ..
        } => {
            span.record("request_id", attr(request_id).as_str());
            span.record("outcome", if *replayed { "replayed" } else { "connected" });
        }
        CallResult::NotConnected {
            request_id, reason, ..
        } => {
            span.record("request_id", attr(request_id).as_str());
            record_refusal(span, reason.as_str());
        }
    }
}

/// Records an outcome that is not a labelled result (a peer's `executed`,
/// a forward's `connected`).
pub fn record_outcome(span: &Span, outcome: &str) {
    if !span.is_disabled() {
        span.record("outcome", outcome);
    }
}

/// Records `not_connected` with its reason code, and an error status.
pub fn record_refusal(span: &Span, reason: &str) {
    if span.is_disabled() {
        return;
    }
    span.record("outcome", "not_connected");
    span.record("reason", reason);
    span.record("otel.status_code", "error");
}

/// Records one more field (declared by the span's constructor: `request_id`,
/// `capability`).
pub fn record(span: &Span, field: &'static str, value: &str) {
    if !span.is_disabled() {
        span.record(field, attr(value).as_str());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_by_default_and_spans_are_free() {
        assert!(!enabled());
        let span = gateway_span("buyercorp", "vendorcorp", "orders.query");
        assert!(span.is_disabled());
        let tp = TraceParent::new_root();
        parent_on(&span, &tp);
        let mut headers = HeaderMap::new();
        continue_trace(&span, &mut headers);
        assert!(headers.is_empty(), "nothing is written when export is off");
        assert_eq!(next_hop(&tp), None);
        assert_eq!(traceparent_of(&span, &tp), None);
    }

    #[test]
    fn a_traceparent_becomes_a_remote_span_context() {
        let tp =
            TraceParent::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").unwrap();
        let cx = span_context(&tp).expect("valid");
        assert_eq!(cx.trace_id().to_string(), tp.trace_id);
        assert_eq!(cx.span_id().to_string(), tp.span_id);
        assert!(cx.is_remote() && cx.is_sampled());
        let back = from_context(&opentelemetry::Context::new().with_remote_span_context(cx));
        assert_eq!(back, Some(tp));
    }
}
