//! Tests of the A2A v0.3 ↔ v1.0 bridge: one table of equivalent JSON pairs,
//! each run in both directions; a table of bad inputs with the error each
//! gives; the method-name and version tables; the one-way (lossy) cases;
//! and a sweep that breaks every value of every table case in turn and
//! checks nothing panics and every error names a path.

use super::*;
use serde_json::{json, Value};

/// Which pair of functions a case goes through.
#[derive(Debug, Clone, Copy)]
enum Subject {
    Params(Method),
    Result(Method),
    Event,
    Card,
}

fn to_v1(subject: Subject, value: Value) -> Result<Value, BridgeError> {
    match subject {
        Subject::Params(method) => params_to_v1(method, value),
        Subject::Result(method) => result_to_v1(method, value),
        Subject::Event => event_to_v1(value),
        Subject::Card => card_to_v1(value),
    }
}

fn to_v03(subject: Subject, value: Value) -> Result<Value, BridgeError> {
    match subject {
        Subject::Params(method) => params_to_v03(method, value),
        Subject::Result(method) => result_to_v03(method, value),
        Subject::Event => event_to_v03(value),
        Subject::Card => card_to_v03(value),
    }
}

/// The root every error path of `subject` starts with.
fn root(subject: Subject) -> &'static str {
    match subject {
        Subject::Params(_) => "params",
        Subject::Result(_) => "result",
        Subject::Event => "event",
        Subject::Card => "card",
    }
}

/// One construct in both dialects: each column must translate to the other.
struct Case {
    name: String,
    subject: Subject,
    v03: Value,
    v10: Value,
}

fn case(name: &str, subject: Subject, v03: Value, v10: Value) -> Case {
    Case {
        name: name.to_owned(),
        subject,
        v03,
        v10,
    }
}

// --- fixtures, one per construct --------------------------------------------

fn user_message_v03(parts: Value) -> Value {
    json!({"kind": "message", "messageId": "m1", "role": "user", "parts": parts})
}

fn user_message_v10(parts: Value) -> Value {
    json!({"messageId": "m1", "role": "ROLE_USER", "parts": parts})
}

fn agent_message_v03() -> Value {
    json!({
        "kind": "message", "messageId": "m2", "contextId": "c1", "taskId": "t1",
        "role": "agent", "parts": [{"kind": "data", "data": {"rows": 3}}],
        "metadata": {"latencyMs": 12}
    })
}

fn agent_message_v10() -> Value {
    json!({
        "messageId": "m2", "contextId": "c1", "taskId": "t1",
        "role": "ROLE_AGENT", "parts": [{"data": {"rows": 3}}],
        "metadata": {"latencyMs": 12}
    })
}

fn completed_task_v03() -> Value {
    json!({
        "kind": "task", "id": "t1", "contextId": "c1",
        "status": {
            "state": "completed",
            "message": agent_message_v03(),
            "timestamp": "2025-06-01T12:00:00Z"
        },
        "artifacts": [{
            "artifactId": "a1", "name": "result", "description": "the answer",
            "parts": [
                {"kind": "data", "data": {"total": 624}},
                {"kind": "text", "text": "624 orders"}
            ],
            "metadata": {"schema": "orders/v1"},
            "extensions": ["https://example.com/ext/provenance"]
        }],
        "history": [
            user_message_v03(json!([{"kind": "text", "text": "how many orders?"}])),
            agent_message_v03()
        ],
        "metadata": {"capability": "table_query"}
    })
}

fn completed_task_v10() -> Value {
    json!({
        "id": "t1", "contextId": "c1",
        "status": {
            "state": "TASK_STATE_COMPLETED",
            "message": agent_message_v10(),
            "timestamp": "2025-06-01T12:00:00Z"
        },
        "artifacts": [{
            "artifactId": "a1", "name": "result", "description": "the answer",
            "parts": [{"data": {"total": 624}}, {"text": "624 orders"}],
            "metadata": {"schema": "orders/v1"},
            "extensions": ["https://example.com/ext/provenance"]
        }],
        "history": [
            user_message_v10(json!([{"text": "how many orders?"}])),
            agent_message_v10()
        ],
        "metadata": {"capability": "table_query"}
    })
}

fn minimal_card_v03() -> Value {
    json!({
        "name": "Orders", "description": "Order data of the shop", "version": "1.2.0",
        "url": "http://127.0.0.1:8080/a2a/orders",
        "preferredTransport": "JSONRPC", "protocolVersion": "0.3.0",
        "capabilities": {"streaming": true},
        "defaultInputModes": ["application/json"],
        "defaultOutputModes": ["application/json"],
        "skills": [{
            "id": "table_query", "name": "Table query",
            "description": "Aggregates over the orders table", "tags": ["data"]
        }]
    })
}

fn minimal_card_v10() -> Value {
    json!({
        "name": "Orders", "description": "Order data of the shop", "version": "1.2.0",
        "supportedInterfaces": [{
            "url": "http://127.0.0.1:8080/a2a/orders",
            "protocolBinding": "JSONRPC", "protocolVersion": "0.3.0"
        }],
        "capabilities": {"streaming": true},
        "defaultInputModes": ["application/json"],
        "defaultOutputModes": ["application/json"],
        "skills": [{
            "id": "table_query", "name": "Table query",
            "description": "Aggregates over the orders table", "tags": ["data"]
        }]
    })
}

fn full_card_v03() -> Value {
    json!({
        "name": "Budgets", "description": "Budget consults", "version": "2.0.0",
        "url": "https://hub.example/a2a/budgets",
        "preferredTransport": "JSONRPC", "protocolVersion": "0.3.0",
        "additionalInterfaces": [
            {"url": "https://hub.example/a2a/budgets", "transport": "JSONRPC"},
            {"url": "https://hub.example/rest/budgets", "transport": "HTTP+JSON"}
        ],
        "provider": {"organization": "Wall Street", "url": "https://wallstreet.example"},
        "documentationUrl": "https://wallstreet.example/docs",
        "iconUrl": "https://wallstreet.example/icon.png",
        "capabilities": {
            "streaming": true, "pushNotifications": false,
            "extensions": [{
                "uri": "https://wallstreet.example/ext/envelope", "description": "trace ids",
                "required": true, "params": {"header": "traceparent"}
            }]
        },
        "supportsAuthenticatedExtendedCard": true,
        "securitySchemes": {
            "bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "opaque",
                       "description": "the system's token"},
            "key": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
            "oauth": {"type": "oauth2", "oauth2MetadataUrl": "https://auth.example/.well-known",
                      "flows": {"authorizationCode": {
                          "authorizationUrl": "https://auth.example/authorize",
                          "tokenUrl": "https://auth.example/token",
                          "refreshUrl": "https://auth.example/refresh",
                          "scopes": {"read": "read budgets"}
                      }}},
            "oidc": {"type": "openIdConnect",
                     "openIdConnectUrl": "https://auth.example/.well-known/openid-configuration"},
            "mtls": {"type": "mutualTLS", "description": "client certificate"}
        },
        "security": [{"bearer": []}, {"oauth": ["read"], "mtls": []}],
        "defaultInputModes": ["application/json", "text/plain"],
        "defaultOutputModes": ["application/json"],
        "skills": [{
            "id": "budget_consult", "name": "Budget consult",
            "description": "Answers whether a spend fits the budget", "tags": ["finance", "budget"],
            "examples": ["Can marketing spend 10k in May?"],
            "inputModes": ["application/json"], "outputModes": ["application/json"],
            "security": [{"oauth": ["read"]}]
        }]
    })
}

fn full_card_v10() -> Value {
    json!({
        "name": "Budgets", "description": "Budget consults", "version": "2.0.0",
        "supportedInterfaces": [
            {"url": "https://hub.example/a2a/budgets",
             "protocolBinding": "JSONRPC", "protocolVersion": "0.3.0"},
            {"url": "https://hub.example/rest/budgets",
             "protocolBinding": "HTTP+JSON", "protocolVersion": "0.3.0"}
        ],
        "provider": {"organization": "Wall Street", "url": "https://wallstreet.example"},
        "documentationUrl": "https://wallstreet.example/docs",
        "iconUrl": "https://wallstreet.example/icon.png",
        "capabilities": {
            "streaming": true, "pushNotifications": false,
            "extensions": [{
                "uri": "https://wallstreet.example/ext/envelope", "description": "trace ids",
                "required": true, "params": {"header": "traceparent"}
            }],
            "extendedAgentCard": true
        },
        "securitySchemes": {
            "bearer": {"httpAuthSecurityScheme": {
                "scheme": "bearer", "bearerFormat": "opaque", "description": "the system's token"}},
            "key": {"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"}},
            "oauth": {"oauth2SecurityScheme": {
                "oauth2MetadataUrl": "https://auth.example/.well-known",
                "flows": {"authorizationCode": {
                    "authorizationUrl": "https://auth.example/authorize",
                    "tokenUrl": "https://auth.example/token",
                    "refreshUrl": "https://auth.example/refresh",
                    "scopes": {"read": "read budgets"}
                }}}},
            "oidc": {"openIdConnectSecurityScheme": {
                "openIdConnectUrl": "https://auth.example/.well-known/openid-configuration"}},
            "mtls": {"mtlsSecurityScheme": {"description": "client certificate"}}
        },
        "securityRequirements": [
            {"schemes": {"bearer": {"list": []}}},
            {"schemes": {"oauth": {"list": ["read"]}, "mtls": {"list": []}}}
        ],
        "defaultInputModes": ["application/json", "text/plain"],
        "defaultOutputModes": ["application/json"],
        "skills": [{
            "id": "budget_consult", "name": "Budget consult",
            "description": "Answers whether a spend fits the budget", "tags": ["finance", "budget"],
            "examples": ["Can marketing spend 10k in May?"],
            "inputModes": ["application/json"], "outputModes": ["application/json"],
            "securityRequirements": [{"schemes": {"oauth": {"list": ["read"]}}}]
        }]
    })
}

fn push_config_v03() -> Value {
    json!({
        "url": "https://hooks.example/a2a", "id": "p1", "token": "tok-1",
        "authentication": {"schemes": ["Bearer"], "credentials": "secret"}
    })
}

fn push_config_v10() -> Value {
    json!({
        "url": "https://hooks.example/a2a", "id": "p1", "token": "tok-1",
        "authentication": {"scheme": "Bearer", "credentials": "secret"}
    })
}

/// `push_config_v10` with the task id, as v1.0's flat TaskPushNotificationConfig.
fn task_push_config_v10() -> Value {
    let mut config = push_config_v10();
    if let Some(map) = config.as_object_mut() {
        map.insert("taskId".into(), json!("t1"));
    }
    config
}

// --- the table --------------------------------------------------------------

fn cases() -> Vec<Case> {
    use Subject::{Card, Event, Params, Result as Answer};
    let send = Params(Method::SendMessage);
    let mut cases = vec![
        // Parts, inside the message of a send.
        case(
            "text part",
            send,
            json!({"message": user_message_v03(json!([{"kind": "text", "text": "hello"}]))}),
            json!({"message": user_message_v10(json!([{"text": "hello"}]))}),
        ),
        case(
            "data part with part metadata",
            send,
            json!({"message": user_message_v03(json!([{
                "kind": "data", "data": {"capability": "table_query", "input": {"n": 1}},
                "metadata": {"source": "canvas"}
            }]))}),
            json!({"message": user_message_v10(json!([{
                "data": {"capability": "table_query", "input": {"n": 1}},
                "metadata": {"source": "canvas"}
            }]))}),
        ),
        case(
            "file part with bytes",
            send,
            json!({"message": user_message_v03(json!([{
                "kind": "file",
                "file": {"bytes": "aGVsbG8=", "name": "hello.txt", "mimeType": "text/plain"}
            }]))}),
            json!({"message": user_message_v10(json!([{
                "raw": "aGVsbG8=", "filename": "hello.txt", "mediaType": "text/plain"
            }]))}),
        ),
        case(
            "file part with uri and part metadata",
            send,
            json!({"message": user_message_v03(json!([{
                "kind": "file",
                "file": {"uri": "https://example.com/report.pdf", "mimeType": "application/pdf"},
                "metadata": {"pages": 3}
            }]))}),
            json!({"message": user_message_v10(json!([{
                "url": "https://example.com/report.pdf", "mediaType": "application/pdf",
                "metadata": {"pages": 3}
            }]))}),
        ),
        case(
            "user message with context, task, metadata, extensions, references",
            send,
            json!({
                "message": {
                    "kind": "message", "messageId": "m1", "contextId": "c1", "taskId": "t1",
                    "role": "user", "parts": [{"kind": "text", "text": "and in May?"}],
                    "metadata": {"caller": "orders"},
                    "extensions": ["https://example.com/ext/a"],
                    "referenceTaskIds": ["t0"]
                },
                "metadata": {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
            }),
            json!({
                "message": {
                    "messageId": "m1", "contextId": "c1", "taskId": "t1",
                    "role": "ROLE_USER", "parts": [{"text": "and in May?"}],
                    "metadata": {"caller": "orders"},
                    "extensions": ["https://example.com/ext/a"],
                    "referenceTaskIds": ["t0"]
                },
                "metadata": {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
            }),
        ),
        case(
            "send params, blocking true",
            send,
            json!({
                "message": user_message_v03(json!([{"kind": "text", "text": "hi"}])),
                "configuration": {
                    "acceptedOutputModes": ["application/json"], "historyLength": 5,
                    "blocking": true
                }
            }),
            json!({
                "message": user_message_v10(json!([{"text": "hi"}])),
                "configuration": {
                    "acceptedOutputModes": ["application/json"], "historyLength": 5,
                    "returnImmediately": false
                }
            }),
        ),
        case(
            "send params, blocking false, with a push config",
            send,
            json!({
                "message": user_message_v03(json!([{"kind": "text", "text": "hi"}])),
                "configuration": {"blocking": false, "pushNotificationConfig": push_config_v03()}
            }),
            json!({
                "message": user_message_v10(json!([{"text": "hi"}])),
                "configuration": {
                    "returnImmediately": true, "taskPushNotificationConfig": push_config_v10()
                }
            }),
        ),
        case(
            "streaming send params",
            Params(Method::SendStreamingMessage),
            json!({
                "message": user_message_v03(json!([{"kind": "text", "text": "stream it"}])),
                "configuration": {"acceptedOutputModes": ["text/plain"]},
                "metadata": {"k": "v"}
            }),
            json!({
                "message": user_message_v10(json!([{"text": "stream it"}])),
                "configuration": {"acceptedOutputModes": ["text/plain"]},
                "metadata": {"k": "v"}
            }),
        ),
        case(
            "get params",
            Params(Method::GetTask),
            json!({"id": "t1", "historyLength": 2}),
            json!({"id": "t1", "historyLength": 2}),
        ),
        case(
            "cancel params",
            Params(Method::CancelTask),
            json!({"id": "t1", "metadata": {"reason": "caller gave up"}}),
            json!({"id": "t1", "metadata": {"reason": "caller gave up"}}),
        ),
        case(
            "resubscribe params",
            Params(Method::SubscribeToTask),
            json!({"id": "t1"}),
            json!({"id": "t1"}),
        ),
        case(
            "push config set params",
            Params(Method::CreatePushConfig),
            json!({"taskId": "t1", "pushNotificationConfig": push_config_v03()}),
            task_push_config_v10(),
        ),
        case(
            "push config get params",
            Params(Method::GetPushConfig),
            json!({"id": "t1", "pushNotificationConfigId": "p1"}),
            json!({"taskId": "t1", "id": "p1"}),
        ),
        case(
            "push config list params",
            Params(Method::ListPushConfigs),
            json!({"id": "t1"}),
            json!({"taskId": "t1"}),
        ),
        case(
            "push config delete params",
            Params(Method::DeletePushConfig),
            json!({"id": "t1", "pushNotificationConfigId": "p1"}),
            json!({"taskId": "t1", "id": "p1"}),
        ),
        case(
            "extended card params",
            Params(Method::GetExtendedAgentCard),
            json!({}),
            json!({}),
        ),
        // Results.
        case(
            "send result: agent message",
            Answer(Method::SendMessage),
            agent_message_v03(),
            json!({"message": agent_message_v10()}),
        ),
        case(
            "send result: completed task with artifacts and history",
            Answer(Method::SendMessage),
            completed_task_v03(),
            json!({"task": completed_task_v10()}),
        ),
        case(
            "get result: completed task",
            Answer(Method::GetTask),
            completed_task_v03(),
            completed_task_v10(),
        ),
        case(
            "cancel result: canceled task",
            Answer(Method::CancelTask),
            json!({"kind": "task", "id": "t1", "contextId": "c1", "status": {"state": "canceled"}}),
            json!({"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_CANCELED"}}),
        ),
        case(
            "push config set result",
            Answer(Method::CreatePushConfig),
            json!({"taskId": "t1", "pushNotificationConfig": push_config_v03()}),
            task_push_config_v10(),
        ),
        case(
            "push config get result",
            Answer(Method::GetPushConfig),
            json!({"taskId": "t1", "pushNotificationConfig": {"url": "https://hooks.example/a2a"}}),
            json!({"taskId": "t1", "url": "https://hooks.example/a2a"}),
        ),
        case(
            "push config list result",
            Answer(Method::ListPushConfigs),
            json!([
                {"taskId": "t1", "pushNotificationConfig": {"url": "https://hooks.example/1", "id": "p1"}},
                {"taskId": "t1", "pushNotificationConfig": {"url": "https://hooks.example/2", "id": "p2"}}
            ]),
            json!({"configs": [
                {"taskId": "t1", "url": "https://hooks.example/1", "id": "p1"},
                {"taskId": "t1", "url": "https://hooks.example/2", "id": "p2"}
            ]}),
        ),
        case(
            "push config list result, empty",
            Answer(Method::ListPushConfigs),
            json!([]),
            json!({"configs": []}),
        ),
        case(
            "push config delete result",
            Answer(Method::DeletePushConfig),
            Value::Null,
            Value::Null,
        ),
        case(
            "extended card result",
            Answer(Method::GetExtendedAgentCard),
            minimal_card_v03(),
            minimal_card_v10(),
        ),
        // Streaming events.
        case(
            "status-update event, working",
            Event,
            json!({
                "kind": "status-update", "taskId": "t1", "contextId": "c1",
                "status": {"state": "working", "timestamp": "2025-06-01T12:00:00Z"},
                "final": false
            }),
            json!({"statusUpdate": {
                "taskId": "t1", "contextId": "c1",
                "status": {"state": "TASK_STATE_WORKING", "timestamp": "2025-06-01T12:00:00Z"}
            }}),
        ),
        case(
            "status-update event, completed with a message and metadata",
            Event,
            json!({
                "kind": "status-update", "taskId": "t1", "contextId": "c1",
                "status": {"state": "completed", "message": agent_message_v03()},
                "final": true, "metadata": {"attempt": 1}
            }),
            json!({"statusUpdate": {
                "taskId": "t1", "contextId": "c1",
                "status": {"state": "TASK_STATE_COMPLETED", "message": agent_message_v10()},
                "metadata": {"attempt": 1}
            }}),
        ),
        case(
            "status-update event, input-required ends the stream",
            Event,
            json!({
                "kind": "status-update", "taskId": "t1", "contextId": "c1",
                "status": {"state": "input-required"}, "final": true
            }),
            json!({"statusUpdate": {
                "taskId": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_INPUT_REQUIRED"}
            }}),
        ),
        case(
            "artifact-update event",
            Event,
            json!({
                "kind": "artifact-update", "taskId": "t1", "contextId": "c1",
                "artifact": {"artifactId": "a1", "name": "rows",
                             "parts": [{"kind": "text", "text": "chunk 2"}]},
                "append": true, "lastChunk": false, "metadata": {"chunk": 2}
            }),
            json!({"artifactUpdate": {
                "taskId": "t1", "contextId": "c1",
                "artifact": {"artifactId": "a1", "name": "rows", "parts": [{"text": "chunk 2"}]},
                "append": true, "lastChunk": false, "metadata": {"chunk": 2}
            }}),
        ),
        case(
            "task event",
            Event,
            json!({"kind": "task", "id": "t1", "contextId": "c1", "status": {"state": "submitted"}}),
            json!({"task": {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_SUBMITTED"}}}),
        ),
        case(
            "message event",
            Event,
            agent_message_v03(),
            json!({"message": agent_message_v10()}),
        ),
        case(
            "resubscribe result is an event",
            Answer(Method::SubscribeToTask),
            json!({
                "kind": "status-update", "taskId": "t1", "contextId": "c1",
                "status": {"state": "failed"}, "final": true
            }),
            json!({"statusUpdate": {
                "taskId": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_FAILED"}
            }}),
        ),
        case(
            "streaming send result is an event",
            Answer(Method::SendStreamingMessage),
            json!({"kind": "task", "id": "t1", "contextId": "c1", "status": {"state": "working"}}),
            json!({"task": {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_WORKING"}}}),
        ),
        // Cards.
        case("minimal card", Card, minimal_card_v03(), minimal_card_v10()),
        case(
            "full card: interfaces, provider, extensions, every security scheme",
            Card,
            full_card_v03(),
            full_card_v10(),
        ),
    ];
    // Every task state, both ways.
    for (v03, v10) in [
        ("submitted", "TASK_STATE_SUBMITTED"),
        ("working", "TASK_STATE_WORKING"),
        ("input-required", "TASK_STATE_INPUT_REQUIRED"),
        ("completed", "TASK_STATE_COMPLETED"),
        ("canceled", "TASK_STATE_CANCELED"),
        ("failed", "TASK_STATE_FAILED"),
        ("rejected", "TASK_STATE_REJECTED"),
        ("auth-required", "TASK_STATE_AUTH_REQUIRED"),
        ("unknown", "TASK_STATE_UNSPECIFIED"),
    ] {
        cases.push(case(
            &format!("task state {v03}"),
            Answer(Method::GetTask),
            json!({"kind": "task", "id": "t1", "contextId": "c1", "status": {"state": v03}}),
            json!({"id": "t1", "contextId": "c1", "status": {"state": v10}}),
        ));
    }
    cases
}

#[test]
fn every_case_translates_both_ways() {
    let mut failures = Vec::new();
    for case in cases() {
        match to_v1(case.subject, case.v03.clone()) {
            Ok(got) if got == case.v10 => {}
            Ok(got) => failures.push(format!(
                "{}: v0.3 -> v1.0 gave\n{got:#}\nnot\n{:#}",
                case.name, case.v10
            )),
            Err(error) => failures.push(format!("{}: v0.3 -> v1.0 failed: {error}", case.name)),
        }
        match to_v03(case.subject, case.v10.clone()) {
            Ok(got) if got == case.v03 => {}
            Ok(got) => failures.push(format!(
                "{}: v1.0 -> v0.3 gave\n{got:#}\nnot\n{:#}",
                case.name, case.v03
            )),
            Err(error) => failures.push(format!("{}: v1.0 -> v0.3 failed: {error}", case.name)),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn the_table_covers_every_subject() {
    let cases = cases();
    assert!(cases.len() >= 40, "only {} cases", cases.len());
    for method in Method::ALL {
        if method == Method::ListTasks {
            continue;
        }
        let params = cases
            .iter()
            .any(|c| matches!(c.subject, Subject::Params(m) if m == method));
        let result = cases
            .iter()
            .any(|c| matches!(c.subject, Subject::Result(m) if m == method));
        assert!(
            params || method == Method::SendStreamingMessage,
            "no params case for {method:?}"
        );
        assert!(
            result || method == Method::ListTasks,
            "no result case for {method:?}"
        );
    }
}

// --- bad input ----------------------------------------------------------------

#[test]
fn bad_input_names_its_path() {
    let send = Method::SendMessage;
    let msg = |message: Value| json!({"message": message});
    let table: Vec<(&str, Result<Value, BridgeError>, &str)> = vec![
        (
            "unknown role",
            params_to_v1(
                send,
                msg(json!({"messageId": "m1", "role": "robot", "parts": []})),
            ),
            "params.message.role: unknown role \"robot\"",
        ),
        (
            "v1.0 role spelled the v0.3 way",
            params_to_v03(
                send,
                msg(json!({"messageId": "m1", "role": "user", "parts": []})),
            ),
            "params.message.role: unknown role \"user\"",
        ),
        (
            "role unspecified has no v0.3 form",
            params_to_v03(
                send,
                msg(json!({"messageId": "m1", "role": "ROLE_UNSPECIFIED", "parts": []})),
            ),
            "params.message.role: cannot translate: role ROLE_UNSPECIFIED has no v0.3 \
             equivalent (user or agent)",
        ),
        (
            "missing message id",
            params_to_v1(send, msg(json!({"role": "user", "parts": []}))),
            "params.message.messageId: missing required field",
        ),
        (
            "null is missing",
            params_to_v1(
                send,
                msg(json!({"messageId": null, "role": "user", "parts": []})),
            ),
            "params.message.messageId: missing required field",
        ),
        (
            "missing message",
            params_to_v1(send, json!({"configuration": {}})),
            "params.message: missing required field",
        ),
        (
            "params not an object",
            params_to_v1(Method::GetTask, json!(["t1"])),
            "params: expected an object, found an array",
        ),
        (
            "wrong message kind",
            params_to_v1(
                send,
                msg(json!({"kind": "task", "messageId": "m1", "role": "user", "parts": []})),
            ),
            "params.message.kind: expected \"message\", found \"task\"",
        ),
        (
            "text that is not a string",
            params_to_v1(
                send,
                msg(user_message_v03(json!([{"kind": "text", "text": 5}]))),
            ),
            "params.message.parts[0].text: expected a string, found a number",
        ),
        (
            "unknown part kind",
            params_to_v1(
                send,
                msg(user_message_v03(
                    json!([{"kind": "text", "text": "a"}, {"kind": "video"}]),
                )),
            ),
            "params.message.parts[1].kind: unknown part kind \"video\"",
        ),
        (
            "part without kind or content",
            params_to_v1(send, msg(user_message_v03(json!([{"metadata": {}}])))),
            "params.message.parts[0]: expected exactly one of kind, text, file, data, found 0",
        ),
        (
            "file with bytes and uri",
            params_to_v1(
                send,
                msg(user_message_v03(json!([{
                    "kind": "file", "file": {"bytes": "AA==", "uri": "https://x.example/f"}
                }]))),
            ),
            "params.message.parts[0].file: expected exactly one of bytes, uri, found 2",
        ),
        (
            "file with neither",
            params_to_v1(
                send,
                msg(user_message_v03(
                    json!([{"kind": "file", "file": {"name": "f"}}]),
                )),
            ),
            "params.message.parts[0].file: expected exactly one of bytes, uri, found 0",
        ),
        (
            "v1.0 part with two contents",
            params_to_v03(
                send,
                msg(user_message_v10(json!([{"text": "a", "raw": "AA=="}]))),
            ),
            "params.message.parts[0]: expected exactly one of text, raw, url, data, found 2",
        ),
        (
            "v1.0 data that is not an object",
            result_to_v03(
                send,
                json!({"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"data": [1, 2]}]}}),
            ),
            "result.message.parts[0].data: cannot translate: v0.3 data parts hold a JSON \
             object, this one holds an array",
        ),
        (
            "extension that is not a string",
            params_to_v1(
                send,
                msg(json!({"messageId": "m", "role": "user", "parts": [], "extensions": [1]})),
            ),
            "params.message.extensions[0]: expected a string, found a number",
        ),
        (
            "metadata that is not an object",
            params_to_v1(
                send,
                msg(json!({"messageId": "m", "role": "user", "parts": [], "metadata": "x"})),
            ),
            "params.message.metadata: expected an object, found \"x\"",
        ),
        (
            "history length as a string",
            params_to_v1(
                send,
                json!({
                    "message": user_message_v03(json!([])),
                    "configuration": {"historyLength": "5"}
                }),
            ),
            "params.configuration.historyLength: expected an integer, found \"5\"",
        ),
        (
            "history length as a fraction",
            params_to_v1(Method::GetTask, json!({"id": "t1", "historyLength": 1.5})),
            "params.historyLength: expected an integer, found a number",
        ),
        (
            "blocking as a string",
            params_to_v1(
                send,
                json!({"message": user_message_v03(json!([])), "configuration": {"blocking": "yes"}}),
            ),
            "params.configuration.blocking: expected a boolean, found \"yes\"",
        ),
        (
            "push authentication with two schemes",
            params_to_v1(
                Method::CreatePushConfig,
                json!({"taskId": "t1", "pushNotificationConfig": {
                    "url": "https://hooks.example", "authentication": {"schemes": ["Bearer", "Basic"]}
                }}),
            ),
            "params.pushNotificationConfig.authentication.schemes: cannot translate: v1.0 push \
             authentication names exactly one scheme, this names 2",
        ),
        (
            "push config without url",
            params_to_v03(Method::CreatePushConfig, json!({"taskId": "t1"})),
            "params.url: missing required field",
        ),
        (
            "delete without config id",
            params_to_v1(Method::DeletePushConfig, json!({"id": "t1"})),
            "params.pushNotificationConfigId: missing required field",
        ),
        (
            "list tasks has no v0.3 method",
            params_to_v03(Method::ListTasks, json!({})),
            "method: cannot translate: ListTasks has no v0.3 JSON-RPC method",
        ),
        (
            "list tasks result either",
            result_to_v1(Method::ListTasks, json!({})),
            "method: cannot translate: ListTasks has no v0.3 JSON-RPC method",
        ),
        (
            "extended card params of the wrong type",
            params_to_v1(Method::GetExtendedAgentCard, json!("all")),
            "params: expected an object, found \"all\"",
        ),
        (
            "unknown v0.3 task state",
            result_to_v1(
                Method::GetTask,
                json!({"id": "t1", "contextId": "c1", "status": {"state": "done"}}),
            ),
            "result.status.state: unknown task state \"done\"",
        ),
        (
            "v0.3 task state sent as v1.0",
            result_to_v03(
                Method::GetTask,
                json!({"id": "t1", "contextId": "c1", "status": {"state": "completed"}}),
            ),
            "result.status.state: unknown task state \"completed\"",
        ),
        (
            "task without context",
            result_to_v1(
                Method::GetTask,
                json!({"kind": "task", "id": "t1", "status": {"state": "working"}}),
            ),
            "result.contextId: missing required field",
        ),
        (
            "bad part deep in a history",
            result_to_v1(
                Method::GetTask,
                json!({
                    "id": "t1", "contextId": "c1", "status": {"state": "working"},
                    "history": [
                        user_message_v03(json!([])),
                        user_message_v03(json!([{"kind": "text", "text": "a"}, {"kind": "text"}]))
                    ]
                }),
            ),
            "result.history[1].parts[1].text: missing required field",
        ),
        (
            "send result with both task and message",
            result_to_v03(send, json!({"task": {}, "message": {}})),
            "result: expected exactly one of task, message, found 2",
        ),
        (
            "send result that is an event",
            result_to_v1(
                send,
                json!({"kind": "status-update", "taskId": "t", "contextId": "c", "status": {"state": "working"}, "final": false}),
            ),
            "result.kind: expected \"task\" or \"message\", found \"status-update\"",
        ),
        (
            "v0.3 result nothing can be told from",
            result_to_v1(send, json!({"id": "x"})),
            "result.kind: missing required field",
        ),
        (
            "unknown event kind",
            event_to_v1(json!({"kind": "progress", "taskId": "t1"})),
            "event.kind: unknown kind \"progress\"",
        ),
        (
            "event kind of the wrong type",
            event_to_v1(json!({"kind": 3})),
            "event.kind: expected a string, found a number",
        ),
        (
            "empty v1.0 event",
            event_to_v03(json!({})),
            "event: expected exactly one of task, message, statusUpdate, artifactUpdate, found 0",
        ),
        (
            "status-update final not a boolean",
            event_to_v1(json!({
                "kind": "status-update", "taskId": "t1", "contextId": "c1",
                "status": {"state": "working"}, "final": "no"
            })),
            "event.final: expected a boolean, found \"no\"",
        ),
        (
            "artifact update without artifact id",
            event_to_v03(json!({"artifactUpdate": {
                "taskId": "t1", "contextId": "c1", "artifact": {"parts": []}
            }})),
            "event.artifactUpdate.artifact.artifactId: missing required field",
        ),
        (
            "delete result that is not null",
            result_to_v1(Method::DeletePushConfig, json!({"ok": true})),
            "result: expected null, found an object",
        ),
        (
            "card without url",
            card_to_v1(json!({"name": "n", "version": "1"})),
            "card.url: missing required field",
        ),
        (
            "card without name",
            card_to_v03(json!({"version": "1", "supportedInterfaces": []})),
            "card.name: missing required field",
        ),
        (
            "v1.0 card without interfaces",
            card_to_v03(json!({"name": "n", "version": "1", "supportedInterfaces": []})),
            "card.supportedInterfaces: cannot translate: a v0.3 card needs a url, and this card \
             has no interface",
        ),
        (
            "unknown security scheme type",
            card_to_v1(json!({
                "name": "n", "version": "1", "url": "http://x",
                "securitySchemes": {"corp": {"type": "kerberos"}}
            })),
            "card.securitySchemes.corp.type: unknown security scheme type \"kerberos\"",
        ),
        (
            "scheme name that needs quoting",
            card_to_v1(json!({
                "name": "n", "version": "1", "url": "http://x",
                "securitySchemes": {"my scheme": {"type": "http"}}
            })),
            "card.securitySchemes[\"my scheme\"].scheme: missing required field",
        ),
        (
            "v1.0 scheme union with no variant",
            card_to_v03(json!({
                "name": "n", "version": "1",
                "supportedInterfaces": [{"url": "http://x", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
                "securitySchemes": {"corp": {"kerberos": {}}}
            })),
            "card.securitySchemes.corp: expected exactly one of apiKeySecurityScheme, \
             httpAuthSecurityScheme, oauth2SecurityScheme, openIdConnectSecurityScheme, \
             mtlsSecurityScheme, found 0",
        ),
        (
            "device code flow has no v0.3 form",
            card_to_v03(json!({
                "name": "n", "version": "1",
                "supportedInterfaces": [{"url": "http://x", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
                "securitySchemes": {"o": {"oauth2SecurityScheme": {"flows": {"deviceCode": {
                    "deviceAuthorizationUrl": "https://a/d", "tokenUrl": "https://a/t", "scopes": {}
                }}}}}
            })),
            "card.securitySchemes.o.oauth2SecurityScheme.flows.deviceCode: cannot translate: \
             the deviceCode OAuth flow has no v0.3 form",
        ),
        (
            "oauth2 scheme with no flow",
            card_to_v1(json!({
                "name": "n", "version": "1", "url": "http://x",
                "securitySchemes": {"o": {"type": "oauth2", "flows": {}}}
            })),
            "card.securitySchemes.o.flows: cannot translate: v1.0 needs exactly one OAuth flow, \
             this scheme has none",
        ),
        (
            "scope description not a string",
            card_to_v1(json!({
                "name": "n", "version": "1", "url": "http://x",
                "securitySchemes": {"o": {"type": "oauth2", "flows": {"clientCredentials": {
                    "tokenUrl": "https://a/t", "scopes": {"read": 1}
                }}}}
            })),
            "card.securitySchemes.o.flows.clientCredentials.scopes.read: expected a string, \
             found a number",
        ),
        (
            "security requirement scopes not a list",
            card_to_v1(json!({
                "name": "n", "version": "1", "url": "http://x", "security": [{"bearer": "all"}]
            })),
            "card.security[0].bearer: expected an array of strings, found \"all\"",
        ),
        (
            "wrapped v1.0 requirement without its list",
            card_to_v03(json!({
                "name": "n", "version": "1",
                "supportedInterfaces": [{"url": "http://x", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
                "securityRequirements": [{"schemes": {"bearer": {"items": []}}}]
            })),
            "card.securityRequirements[0].schemes.bearer.list: missing required field",
        ),
        (
            "skill without tags",
            card_to_v1(json!({
                "name": "n", "version": "1", "url": "http://x",
                "skills": [{"id": "s", "name": "S", "description": "d"}]
            })),
            "card.skills[0].tags: missing required field",
        ),
        (
            "long values are cut",
            params_to_v1(
                send,
                msg(json!({"messageId": "m", "role": "r".repeat(100), "parts": []})),
            ),
            "params.message.role: unknown role \
             \"rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr…\"",
        ),
    ];
    let mut failures = Vec::new();
    for (name, got, want) in table {
        match got {
            Err(error) if error.to_string() == want => {
                assert!(
                    want.starts_with(error.path()),
                    "{name}: path {:?}",
                    error.path()
                );
            }
            Err(error) => failures.push(format!("{name}:\n  got  {error}\n  want {want}")),
            Ok(value) => failures.push(format!("{name}: translated to {value}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// --- methods and versions -------------------------------------------------------

#[test]
fn every_method_round_trips_through_its_names() {
    for method in Method::ALL {
        for dialect in [Dialect::V0_3, Dialect::V1_0] {
            match method.name(dialect) {
                Some(name) => assert_eq!(Method::from_name(dialect, name), Some(method), "{name}"),
                None => assert_eq!((method, dialect), (Method::ListTasks, Dialect::V0_3)),
            }
        }
    }
    let v03: Vec<_> = Method::ALL
        .iter()
        .filter_map(|m| m.name(Dialect::V0_3))
        .collect();
    assert_eq!(
        v03,
        [
            "message/send",
            "message/stream",
            "tasks/get",
            "tasks/cancel",
            "tasks/resubscribe",
            "tasks/pushNotificationConfig/set",
            "tasks/pushNotificationConfig/get",
            "tasks/pushNotificationConfig/list",
            "tasks/pushNotificationConfig/delete",
            "agent/getAuthenticatedExtendedCard",
        ]
    );
    let v10: Vec<_> = Method::ALL
        .iter()
        .filter_map(|m| m.name(Dialect::V1_0))
        .collect();
    assert_eq!(
        v10,
        [
            "SendMessage",
            "SendStreamingMessage",
            "GetTask",
            "ListTasks",
            "CancelTask",
            "SubscribeToTask",
            "CreateTaskPushNotificationConfig",
            "GetTaskPushNotificationConfig",
            "ListTaskPushNotificationConfigs",
            "DeleteTaskPushNotificationConfig",
            "GetExtendedAgentCard",
        ]
    );
    // A name belongs to its own dialect only.
    assert_eq!(Method::from_name(Dialect::V1_0, "message/send"), None);
    assert_eq!(Method::from_name(Dialect::V0_3, "SendMessage"), None);
    assert_eq!(Method::from_name(Dialect::V0_3, "tasks/list"), None);
    assert_eq!(Method::from_name(Dialect::V1_0, "sendmessage"), None);
    let streaming: Vec<_> = Method::ALL
        .into_iter()
        .filter(|m| m.is_streaming())
        .collect();
    assert_eq!(
        streaming,
        [Method::SendStreamingMessage, Method::SubscribeToTask]
    );
}

#[test]
fn version_header_values() {
    let table = [
        (None, Some(Dialect::V0_3)),
        (Some(""), Some(Dialect::V0_3)),
        (Some("  "), Some(Dialect::V0_3)),
        (Some("0.3"), Some(Dialect::V0_3)),
        (Some("0.3.0"), Some(Dialect::V0_3)),
        (Some("0.3.7"), Some(Dialect::V0_3)),
        (Some(" 0.3 "), Some(Dialect::V0_3)),
        (Some("1"), Some(Dialect::V1_0)),
        (Some("1.0"), Some(Dialect::V1_0)),
        (Some("1.0.2"), Some(Dialect::V1_0)),
        (Some("1.1"), Some(Dialect::V1_0)),
        (Some("0.2"), None),
        (Some("0.2.5"), None),
        (Some("0.4"), None),
        (Some("0"), None),
        (Some("2.0"), None),
        (Some("1.0.0.0"), None),
        (Some("1."), None),
        (Some(".1"), None),
        (Some("v1.0"), None),
        (Some("1.0-beta"), None),
        (Some("+1"), None),
        (Some("1.99999999999999999999999"), None),
        (Some("latest"), None),
    ];
    // As the envelope reads the header of a request.
    let from_header = |h: Option<&str>| {
        let mut headers = axum::http::HeaderMap::new();
        if let Some(h) = h {
            headers.insert(
                exchange::envelope::VERSION_HEADER,
                axum::http::HeaderValue::from_str(h).expect("header value"),
            );
        }
        exchange::envelope::Envelope::from_headers(&headers).protocol()
    };
    for (header, want) in table {
        assert_eq!(from_header(header), want, "{header:?}");
    }
    for dialect in [Dialect::V0_3, Dialect::V1_0] {
        assert_eq!(from_header(Some(dialect.as_str())), Some(dialect));
    }
    assert_eq!(Dialect::V0_3.as_str(), "0.3");
    assert_eq!(Dialect::V1_0.as_str(), "1.0");
}

#[test]
fn dialect_of_a_card() {
    let iface = |binding: &str, version: &str| json!({"url": "http://x", "protocolBinding": binding, "protocolVersion": version});
    let table = [
        (
            "v1.0 card",
            json!({"supportedInterfaces": [iface("JSONRPC", "1.0")]}),
            Dialect::V1_0,
        ),
        (
            "v1.0 card speaking 0.3",
            json!({"supportedInterfaces": [iface("JSONRPC", "0.3.0")]}),
            Dialect::V0_3,
        ),
        (
            "1.x wins over 0.3 among JSONRPC entries",
            json!({"supportedInterfaces": [iface("JSONRPC", "0.3"), iface("JSONRPC", "1.0")]}),
            Dialect::V1_0,
        ),
        (
            "only the JSONRPC entry counts",
            json!({"supportedInterfaces": [iface("GRPC", "1.0"), iface("jsonrpc", "0.3")]}),
            Dialect::V0_3,
        ),
        (
            "no JSONRPC entry: unclear",
            json!({"supportedInterfaces": [iface("GRPC", "0.3")]}),
            Dialect::V1_0,
        ),
        (
            "v0.3 card",
            json!({"url": "http://x", "protocolVersion": "0.3.0"}),
            Dialect::V0_3,
        ),
        (
            "v0.3 card without version",
            json!({"url": "http://x"}),
            Dialect::V0_3,
        ),
        (
            "v0.2 card shaped like v0.3",
            json!({"url": "http://x", "protocolVersion": "0.2.5"}),
            Dialect::V0_3,
        ),
        (
            "top-level 1.0",
            json!({"protocolVersion": "1.0"}),
            Dialect::V1_0,
        ),
        ("nothing", json!({}), Dialect::V1_0),
        ("not an object", json!([1, 2]), Dialect::V1_0),
        ("null", Value::Null, Dialect::V1_0),
        (
            "translated v0.3 card",
            card_to_v1(minimal_card_v03()).unwrap_or_default(),
            Dialect::V0_3,
        ),
    ];
    for (name, card, want) in table {
        assert_eq!(version_of_card(&card), want, "{name}");
    }
}

// --- one-way translations: defaults, inference, what is lossy ------------------

#[test]
fn v03_objects_without_kind_are_read_by_their_fields() {
    let params = json!({"message": {"messageId": "m1", "role": "user", "parts": [
        {"text": "a"}, {"data": {"x": 1}}, {"file": {"uri": "https://x.example/f"}}
    ]}});
    assert_eq!(
        params_to_v1(Method::SendMessage, params),
        Ok(
            json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [
                {"text": "a"}, {"data": {"x": 1}}, {"url": "https://x.example/f"}
            ]}})
        )
    );
    let task = json!({"id": "t1", "contextId": "c1", "status": {"state": "working"}});
    let wrapped_task =
        json!({"task": {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_WORKING"}}});
    assert_eq!(
        result_to_v1(Method::SendMessage, task.clone()),
        Ok(wrapped_task.clone())
    );
    assert_eq!(event_to_v1(task), Ok(wrapped_task));
    let message = json!({"messageId": "m", "role": "agent", "parts": []});
    assert_eq!(
        result_to_v1(Method::SendMessage, message),
        Ok(json!({"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": []}}))
    );
    let status =
        json!({"taskId": "t1", "contextId": "c1", "status": {"state": "working"}, "final": false});
    assert_eq!(
        event_to_v1(status),
        Ok(
            json!({"statusUpdate": {"taskId": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_WORKING"}}})
        )
    );
    let artifact =
        json!({"taskId": "t1", "contextId": "c1", "artifact": {"artifactId": "a", "parts": []}});
    assert_eq!(
        event_to_v1(artifact),
        Ok(
            json!({"artifactUpdate": {"taskId": "t1", "contextId": "c1", "artifact": {"artifactId": "a", "parts": []}}})
        )
    );
}

#[test]
fn final_is_derived_from_the_state() {
    for (state, is_final) in [
        ("TASK_STATE_SUBMITTED", false),
        ("TASK_STATE_WORKING", false),
        ("TASK_STATE_UNSPECIFIED", false),
        ("TASK_STATE_COMPLETED", true),
        ("TASK_STATE_FAILED", true),
        ("TASK_STATE_CANCELED", true),
        ("TASK_STATE_REJECTED", true),
        ("TASK_STATE_INPUT_REQUIRED", true),
        ("TASK_STATE_AUTH_REQUIRED", true),
    ] {
        let event =
            json!({"statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": state}}});
        let got = event_to_v03(event).unwrap_or_default();
        assert_eq!(got.get("final"), Some(&json!(is_final)), "{state}");
    }
    // A v0.3 `final` on a state that does not end the stream is not kept.
    let early = json!({"kind": "status-update", "taskId": "t", "contextId": "c",
                       "status": {"state": "working"}, "final": true});
    let back = event_to_v1(early)
        .and_then(event_to_v03)
        .unwrap_or_default();
    assert_eq!(back.get("final"), Some(&json!(false)));
}

#[test]
fn fields_only_one_dialect_has_are_dropped() {
    // v1.0 -> v0.3: tenant, text/data part filename and mediaType, push taskId, unknown extras.
    let params = json!({
        "tenant": "acme",
        "message": {
            "messageId": "m1", "role": "ROLE_USER", "extra": 1,
            "parts": [
                {"text": "a", "mediaType": "text/markdown", "filename": "a.md", "extra": 2},
                {"data": {"x": 1}, "mediaType": "application/json"}
            ]
        },
        "configuration": {"taskPushNotificationConfig": {
            "url": "https://hooks.example", "taskId": "t1", "tenant": "acme"
        }}
    });
    assert_eq!(
        params_to_v03(Method::SendMessage, params),
        Ok(json!({
            "message": {"kind": "message", "messageId": "m1", "role": "user", "parts": [
                {"kind": "text", "text": "a"}, {"kind": "data", "data": {"x": 1}}
            ]},
            "configuration": {"pushNotificationConfig": {"url": "https://hooks.example"}}
        }))
    );
    for method in [Method::GetTask, Method::CancelTask, Method::SubscribeToTask] {
        let got = params_to_v03(method, json!({"id": "t1", "tenant": "acme"}));
        assert_eq!(got, Ok(json!({"id": "t1"})), "{method:?}");
    }
    // v0.3 -> v1.0: metadata of tasks/get and tasks/resubscribe.
    for method in [Method::GetTask, Method::SubscribeToTask] {
        let got = params_to_v1(method, json!({"id": "t1", "metadata": {"m": 1}}));
        assert_eq!(got, Ok(json!({"id": "t1"})), "{method:?}");
    }
    // `a2a-lf` reads the send config's push config under its v0.3 name too.
    let config = json!({"message": user_message_v10(json!([])),
                        "configuration": {"pushNotificationConfig": {"url": "https://h"}}});
    assert_eq!(
        params_to_v03(Method::SendMessage, config),
        Ok(json!({"message": user_message_v03(json!([])),
                  "configuration": {"pushNotificationConfig": {"url": "https://h"}}}))
    );
}

#[test]
fn push_config_defaults_and_paging() {
    // The 0.3 SDK names a task's default config after the task.
    assert_eq!(
        params_to_v1(Method::GetPushConfig, json!({"id": "t1", "metadata": {}})),
        Ok(json!({"taskId": "t1", "id": "t1"}))
    );
    assert_eq!(
        params_to_v03(
            Method::ListPushConfigs,
            json!({"taskId": "t1", "pageSize": 10, "pageToken": "x"})
        ),
        Ok(json!({"id": "t1"}))
    );
    assert_eq!(
        result_to_v03(Method::ListPushConfigs, json!({"nextPageToken": "x"})),
        Ok(json!([]))
    );
    // google.protobuf.Empty.
    assert_eq!(
        result_to_v03(Method::DeletePushConfig, json!({})),
        Ok(Value::Null)
    );
    // The extended-card request of v0.3 has no params at all.
    assert_eq!(
        params_to_v1(Method::GetExtendedAgentCard, Value::Null),
        Ok(json!({}))
    );
    assert_eq!(
        params_to_v03(Method::GetExtendedAgentCard, json!({"tenant": "a"})),
        Ok(json!({}))
    );
}

#[test]
fn empty_v10_state_reads_as_unknown() {
    let task = json!({"id": "t1", "contextId": "c1", "status": {"state": ""}});
    let got = result_to_v03(Method::GetTask, task).unwrap_or_default();
    assert_eq!(got.pointer("/status/state"), Some(&json!("unknown")));
}

#[test]
fn card_served_to_v03_callers() {
    // A v1.0 card of the hub: the v0.3 card says 0.3.0 at its url, and loses tenant and signatures.
    let card = json!({
        "name": "Orders", "description": "d", "version": "1",
        "supportedInterfaces": [
            {"url": "http://hub/a2a/orders", "protocolBinding": "JSONRPC", "protocolVersion": "1.0", "tenant": "t"}
        ],
        "capabilities": {},
        "signatures": [{"protected": "e30", "signature": "c2ln"}]
    });
    let v03 = card_to_v03(card);
    assert_eq!(
        v03,
        Ok(json!({
            "name": "Orders", "description": "d", "version": "1",
            "url": "http://hub/a2a/orders", "preferredTransport": "JSONRPC", "protocolVersion": "0.3.0",
            "capabilities": {}, "defaultInputModes": [], "defaultOutputModes": [], "skills": []
        }))
    );
    assert_eq!(version_of_card(&v03.unwrap_or_default()), Dialect::V0_3);

    // The main interface is the JSONRPC one; interfaces of another version than 0.3 are left out.
    let iface = |url: &str, binding: &str, version: &str| json!({"url": url, "protocolBinding": binding, "protocolVersion": version});
    let card = json!({
        "name": "n", "version": "1",
        "supportedInterfaces": [
            iface("http://hub/rest", "HTTP+JSON", "1.0"),
            iface("http://hub/a2a", "JSONRPC", "1.0"),
            iface("grpc.hub:50051", "GRPC", "0.3.1")
        ]
    });
    let v03 = card_to_v03(card).unwrap_or_default();
    assert_eq!(v03.get("url"), Some(&json!("http://hub/a2a")));
    assert_eq!(v03.get("preferredTransport"), Some(&json!("JSONRPC")));
    assert_eq!(v03.get("protocolVersion"), Some(&json!("0.3.0")));
    assert_eq!(
        v03.get("additionalInterfaces"),
        Some(&json!([
            {"url": "http://hub/a2a", "transport": "JSONRPC"},
            {"url": "grpc.hub:50051", "transport": "GRPC"}
        ]))
    );
    // The hub's own shape: JSON-RPC and HTTP+JSON, both 1.0, and the
    // JSON-RPC URL again as 0.3: one entry, the main one, so no list.
    let card = json!({
        "name": "n", "version": "1",
        "supportedInterfaces": [
            iface("http://hub/a2a/p", "JSONRPC", "1.0"),
            iface("http://hub/a2a/p/rest", "HTTP+JSON", "1.0"),
            iface("http://hub/a2a/p", "JSONRPC", "0.3")
        ]
    });
    let v03 = card_to_v03(card).unwrap_or_default();
    assert_eq!(v03.get("url"), Some(&json!("http://hub/a2a/p")));
    assert_eq!(v03.get("additionalInterfaces"), None);
    // No JSONRPC interface: the first one is the main one.
    let card = json!({"name": "n", "version": "1",
                      "supportedInterfaces": [iface("grpc.hub:1", "GRPC", "1.0")]});
    let v03 = card_to_v03(card).unwrap_or_default();
    assert_eq!(v03.get("preferredTransport"), Some(&json!("GRPC")));
}

#[test]
fn card_from_v03_providers() {
    // SDK defaults, the main interface listed alone, stateTransitionHistory, several oauth flows.
    let card = json!({
        "name": "n", "description": "d", "version": "1", "url": "http://p/a2a",
        "additionalInterfaces": [{"url": "http://p/a2a", "transport": "JSONRPC"}],
        "capabilities": {"stateTransitionHistory": true},
        "signatures": [{"protected": "e30", "signature": "c2ln"}],
        "securitySchemes": {"o": {"type": "oauth2", "flows": {
            "password": {"tokenUrl": "https://a/t", "scopes": {}},
            "clientCredentials": {"tokenUrl": "https://a/t2", "scopes": {"x": "y"}}
        }}},
        "defaultInputModes": [], "defaultOutputModes": [], "skills": []
    });
    let v1 = card_to_v1(card);
    assert_eq!(
        v1,
        Ok(json!({
            "name": "n", "description": "d", "version": "1",
            "supportedInterfaces": [{"url": "http://p/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "0.3.0"}],
            "capabilities": {},
            "securitySchemes": {"o": {"oauth2SecurityScheme": {"flows": {
                "clientCredentials": {"tokenUrl": "https://a/t2", "scopes": {"x": "y"}}
            }}}},
            "defaultInputModes": [], "defaultOutputModes": [], "skills": []
        }))
    );
    // Back to v0.3: the lone main interface is not repeated.
    let back = v1.and_then(card_to_v03).unwrap_or_default();
    assert_eq!(back.get("additionalInterfaces"), None);
    assert_eq!(back.get("preferredTransport"), Some(&json!("JSONRPC")));
}

#[test]
fn v10_security_shapes_a2a_lf_reads() {
    let card = json!({
        "name": "n", "version": "1",
        "supportedInterfaces": [{"url": "http://x", "protocolBinding": "JSONRPC", "protocolVersion": "0.3.2"}],
        "securityRequirements": [
            {"bearer": ["a"]},
            {"schemes": {"bearer": {}, "key": ["k"]}}
        ],
        "securitySchemes": {"o": {"oauth2SecurityScheme": {"flows": {"authorizationCode": {
            "authorizationUrl": "https://a/a", "tokenUrl": "https://a/t", "scopes": {}, "pkceRequired": true
        }}}}}
    });
    let v03 = card_to_v03(card).unwrap_or_default();
    assert_eq!(v03.get("protocolVersion"), Some(&json!("0.3.2")));
    assert_eq!(
        v03.get("security"),
        Some(&json!([{"bearer": ["a"]}, {"bearer": [], "key": ["k"]}]))
    );
    assert_eq!(
        v03.pointer("/securitySchemes/o/flows/authorizationCode"),
        Some(&json!({"authorizationUrl": "https://a/a", "tokenUrl": "https://a/t", "scopes": {}}))
    );
}

#[test]
fn lossy_list_matches_the_file_doc() {
    let doc: String = include_str!("mod.rs")
        .lines()
        .filter_map(|line| line.strip_prefix("//!"))
        .collect::<Vec<_>>()
        .join(" ");
    let doc = doc.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(!LOSSY.is_empty());
    for (what, why) in LOSSY {
        assert!(doc.contains(what), "the file doc does not list {what:?}");
        assert!(!why.is_empty());
    }
}

// --- robustness ---------------------------------------------------------------

/// Every path to a value inside `value` (object keys and array indexes).
fn paths(value: &Value, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    out.push(prefix.clone());
    match value {
        Value::Object(map) => {
            for (key, item) in map {
                prefix.push(key.clone());
                paths(item, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                prefix.push(index.to_string());
                paths(item, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

/// `value` with the node at `path` replaced by `with`.
fn replaced(value: &Value, path: &[String], with: &Value) -> Value {
    let mut copy = value.clone();
    let mut node = &mut copy;
    for step in path {
        let next = match node {
            Value::Object(map) => map.get_mut(step),
            Value::Array(items) => step.parse::<usize>().ok().and_then(|i| items.get_mut(i)),
            _ => None,
        };
        match next {
            Some(child) => node = child,
            None => return copy,
        }
    }
    *node = with.clone();
    copy
}

#[test]
fn breaking_any_value_never_panics_and_errors_name_a_path() {
    let junk = [
        Value::Null,
        json!(true),
        json!(-7),
        json!(1.5),
        json!("junk"),
        json!([]),
        json!({}),
        json!([null, {}]),
    ];
    let mut checked = 0;
    for case in cases() {
        for (column, translate) in [
            (
                &case.v03,
                to_v1 as fn(Subject, Value) -> Result<Value, BridgeError>,
            ),
            (&case.v10, to_v03),
        ] {
            let mut all = Vec::new();
            paths(column, &mut Vec::new(), &mut all);
            for path in &all {
                for with in &junk {
                    let broken = replaced(column, path, with);
                    if let Err(error) = translate(case.subject, broken) {
                        let text = error.to_string();
                        assert!(
                            error.path().starts_with(root(case.subject)),
                            "{}: {text}",
                            case.name
                        );
                        assert!(text.starts_with(error.path()), "{text}");
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 5_000, "only {checked} variants");
}

#[test]
fn any_input_to_any_function_never_panics() {
    let inputs = [
        Value::Null,
        json!(0),
        json!("x"),
        json!([[[[]]]]),
        json!({"message": null}),
        json!({"message": {"parts": [1, null, {}, {"kind": 1}, {"file": 2}, {"file": {"bytes": 3}}]}}),
        json!({"task": null, "message": null}),
        json!({"statusUpdate": {"status": "x"}}),
        json!({"artifactUpdate": {"artifact": []}}),
        json!({"kind": "status-update", "status": {"state": {}}}),
        json!({"supportedInterfaces": [null, 1, {"url": 1}], "url": 2}),
        json!({"securitySchemes": {"a": 1, "b": {"type": null}}, "security": [1, {"x": [1]}]}),
        json!({"configuration": {"pushNotificationConfig": {"authentication": {"schemes": []}}}}),
        json!({"id": "t", "historyLength": 18446744073709551615_u64}),
    ];
    for input in &inputs {
        for method in Method::ALL {
            let _ = params_to_v1(method, input.clone());
            let _ = params_to_v03(method, input.clone());
            let _ = result_to_v1(method, input.clone());
            let _ = result_to_v03(method, input.clone());
        }
        let _ = event_to_v1(input.clone());
        let _ = event_to_v03(input.clone());
        let _ = card_to_v1(input.clone());
        let _ = card_to_v03(input.clone());
        let _ = version_of_card(input);
    }
}
