//! OpenTelemetry traces (DESIGN.md §6, "OpenTelemetry traces whose trace
//! id is the envelope's"): with `OTEL_EXPORTER_OTLP_ENDPOINT` set, the hub
//! and the peers export their spans over OTLP/HTTP (protobuf), and one
//! peer → hub → peer call is one trace under the caller's trace id, each
//! hop's span the child of the hop before.
//!
//! The collector is this test: an axum receiver on loopback answering
//! `POST /v1/traces`, decoding each body as an `ExportTraceServiceRequest`.

mod common;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::post;
use axum::Router;
use common::{repo, PeerSpec, Stack};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, KeyValue};
use prost::Message;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One exported span, as the receiver got it.
#[derive(Debug, Clone)]
struct Got {
    service: String,
    name: String,
    trace_id: String,
    span_id: String,
    parent_span_id: String,
    /// The span's attributes, string values as they are, others as Debug.
    attributes: BTreeMap<String, String>,
    /// Every attribute value of the span and its resource, for the token
    /// check.
    all_values: Vec<String>,
}

type Spans = Arc<Mutex<Vec<Got>>>;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn text(value: &Option<AnyValue>) -> String {
    match value.as_ref().and_then(|v| v.value.as_ref()) {
        Some(any_value::Value::StringValue(s)) => s.clone(),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    }
}

fn pairs(attributes: &[KeyValue]) -> impl Iterator<Item = (String, String)> + '_ {
    attributes
        .iter()
        .map(|kv| (kv.key.clone(), text(&kv.value)))
}

async fn receive(State(spans): State<Spans>, body: Bytes) -> impl IntoResponse {
    let Ok(request) = ExportTraceServiceRequest::decode(body) else {
        return (StatusCode::BAD_REQUEST, Vec::new()).into_response();
    };
    let mut got = spans.lock().expect("lock");
    for resource_spans in &request.resource_spans {
        let resource: Vec<(String, String)> = resource_spans
            .resource
            .as_ref()
            .map(|r| pairs(&r.attributes).collect())
            .unwrap_or_default();
        let service = resource
            .iter()
            .find(|(k, _)| k == "service.name")
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        for scope in &resource_spans.scope_spans {
            for span in &scope.spans {
                let attributes: BTreeMap<String, String> = pairs(&span.attributes).collect();
                let all_values = resource
                    .iter()
                    .map(|(_, v)| v.clone())
                    .chain(attributes.values().cloned())
                    .chain(
                        span.events
                            .iter()
                            .flat_map(|e| pairs(&e.attributes).map(|(_, v)| v)),
                    )
                    .chain([span.name.clone()])
                    .collect();
                got.push(Got {
                    service: service.clone(),
                    name: span.name.clone(),
                    trace_id: hex(&span.trace_id),
                    span_id: hex(&span.span_id),
                    parent_span_id: hex(&span.parent_span_id),
                    attributes,
                    all_values,
                });
            }
        }
    }
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/x-protobuf")],
        ExportTraceServiceResponse::default().encode_to_vec(),
    )
        .into_response()
}

/// The receiver's base URL (what `OTEL_EXPORTER_OTLP_ENDPOINT` names) and
/// what it got.
async fn collector() -> (String, Spans) {
    let spans = Spans::default();
    let app = Router::new()
        .route("/v1/traces", post(receive))
        .with_state(spans.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind the collector");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}"), spans)
}

/// The one span named `name` from `service` in `spans`.
fn one<'a>(spans: &'a [Got], service: &str, name: &str) -> &'a Got {
    let found: Vec<&Got> = spans
        .iter()
        .filter(|s| s.service == service && s.name == name)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one {name} span from {service} expected: {spans:#?}"
    );
    found[0]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_trace_id_runs_through_caller_hub_and_responder() {
    let (endpoint, spans) = collector().await;
    let otel_env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        ("OTEL_BSP_SCHEDULE_DELAY", "100"),
    ];
    let stack = Stack::start_with_env(
        vec![PeerSpec::stock("vendorcorp"), PeerSpec::stock("buyercorp")],
        &otel_env,
    )
    .await;

    // A trace of this run's own (a rerun against a long-lived collector
    // could not mix the two up), and the caller's span id.
    let trace_id = uuid::Uuid::new_v4().simple().to_string();
    let root_span = "00f067aa0ba902b7";
    let request_id = format!("otlp-{}", &trace_id[..12]);
    let mut call = Command::new(common::peer_bin());
    call.args(["call", "--config"])
        .arg(stack.peer_config("buyercorp"))
        .args(["--provider", "vendorcorp", "--capability", "orders.query"])
        .args([
            "--input",
            r#"{"aggregate":{"op":"avg","column":"order_value"},"group_by":"region"}"#,
        ])
        .args(["--request-id", &request_id])
        .args(["--traceparent", &format!("00-{trace_id}-{root_span}-01")])
        .envs(stack.tokens.clone())
        .envs(otel_env)
        .current_dir(repo());
    // The caller exports as it exits: the collector must keep answering
    // meanwhile, so the process is waited for off the runtime's threads.
    let out = tokio::task::spawn_blocking(move || call.output())
        .await
        .expect("join")
        .expect("run peer call");
    assert!(
        out.status.success(),
        "peer call failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answer: Value =
        serde_json::from_slice(&out.stdout).expect("peer call prints the hub's JSON");
    assert_eq!(answer["status"], "connected", "{answer}");
    assert_eq!(answer["trace_id"], trace_id.as_str());

    // The four spans of the call, from three processes: bounded wait.
    let wanted = [
        ("peer-buyercorp", "peer.call"),
        ("wall-street-hub", "gateway.call"),
        ("wall-street-hub", "gateway.forward"),
        ("peer-vendorcorp", "peer.execute"),
    ];
    let deadline = Instant::now() + Duration::from_secs(20);
    let got: Vec<Got> = loop {
        let got: Vec<Got> = spans
            .lock()
            .expect("lock")
            .iter()
            .filter(|s| s.trace_id == trace_id)
            .cloned()
            .collect();
        let complete = wanted
            .iter()
            .all(|(svc, name)| got.iter().any(|s| &s.service == svc && &s.name == name));
        if complete {
            break got;
        }
        assert!(
            Instant::now() < deadline,
            "spans of trace {trace_id} still missing after 20 s; got {got:#?}\nhub log:\n{}",
            stack.hub_log()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };

    // Three processes, one trace id: the caller's.
    let services: BTreeSet<&str> = got.iter().map(|s| s.service.as_str()).collect();
    assert_eq!(
        services,
        BTreeSet::from(["peer-buyercorp", "peer-vendorcorp", "wall-street-hub"]),
        "{got:#?}"
    );
    let everything = spans.lock().expect("lock").clone();
    let of_this_call: Vec<&Got> = everything
        .iter()
        .filter(|s| s.attributes.get("request_id") == Some(&request_id))
        .collect();
    assert!(of_this_call.len() >= 4, "{of_this_call:#?}");
    for span in &of_this_call {
        assert_eq!(span.trace_id, trace_id, "every span of the call: {span:#?}");
    }

    // Each hop is the child of the one before it.
    let caller = one(&got, "peer-buyercorp", "peer.call");
    let hub = one(&got, "wall-street-hub", "gateway.call");
    let forward = one(&got, "wall-street-hub", "gateway.forward");
    let responder = one(&got, "peer-vendorcorp", "peer.execute");
    assert_eq!(
        caller.parent_span_id, root_span,
        "the caller continues --traceparent"
    );
    assert_eq!(
        hub.parent_span_id, caller.span_id,
        "the hub's parent is the caller's span"
    );
    assert_eq!(
        forward.parent_span_id, hub.span_id,
        "the forward leg is inside the call"
    );
    assert_eq!(
        responder.parent_span_id, forward.span_id,
        "the responder's parent is the hub's forward span"
    );

    // What the spans say: who, what, how it ended.
    for span in [caller, hub, forward] {
        assert_eq!(span.attributes["caller"], "buyercorp", "{span:#?}");
        assert_eq!(span.attributes["provider"], "vendorcorp", "{span:#?}");
        assert_eq!(span.attributes["capability"], "orders.query", "{span:#?}");
        assert_eq!(span.attributes["outcome"], "connected", "{span:#?}");
    }
    assert_eq!(responder.attributes["caller"], "buyercorp");
    assert_eq!(responder.attributes["capability"], "orders.query");
    assert_eq!(responder.attributes["outcome"], "executed");
    assert_eq!(hub.attributes["request_id"], request_id);

    // No token leaves any process in a span (nor in its resource).
    for token in stack.tokens.values() {
        for span in &everything {
            assert!(
                !span.all_values.iter().any(|v| v.contains(token.as_str())),
                "a token in an exported span: {span:#?}"
            );
        }
    }
}
