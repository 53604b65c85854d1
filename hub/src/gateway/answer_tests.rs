//! The quick reading of a provider's message against the A2A types: what
//! it passes through is what the typed reading reads, and what it cannot
//! vouch for it leaves to the typed reading.

use super::*;
use serde_json::json;

/// The JSON-RPC answer carrying `result`.
fn rpc(result: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": "r1", "result": result})).expect("json")
}

/// The typed reading alone: what the hub did before answers passed
/// through.
fn typed(body: &[u8]) -> Option<(SendMessageResponse, Result<Value, String>)> {
    let response = read_success(body)?;
    let result = wire::parse_answer(&response).map_err(|e| e.to_string());
    Some((response, result))
}

#[test]
fn a_message_passes_through_as_its_provider_wrote_it() {
    // Spacing, member order and number forms as a provider may write
    // them: the caller gets these bytes, not a re-serialisation.
    let message_text = r#"{"role":"ROLE_AGENT", "messageId":"m-1",
        "contextId":"ctx-9",
        "parts":[{"text":"here"},{"data":{"rows":[{"region":"EU","avg":12.50}]},"mediaType":"application/json"}]}"#;
    let body = format!(r#"{{"jsonrpc":"2.0","id":"r1","result":{{"message": {message_text}}}}}"#);
    let reply = interpret_answer("vendorcorp", http::StatusCode::OK, body.as_bytes(), false)
        .unwrap_or_else(|f| panic!("{}", f.nc.detail));
    assert_eq!(
        reply.result,
        json!({"rows": [{"region": "EU", "avg": 12.5}]})
    );
    let ProviderReply::Passed(passed) = &reply.response else {
        panic!("a plain message is passed through: {:?}", reply.response);
    };
    assert_eq!(passed.message.get(), message_text);
    assert_eq!(reply.response.context_id(), Some("ctx-9"));
    assert_eq!(
        serde_json::to_string(&reply.response).expect("written"),
        format!(r#"{{"message":{message_text}}}"#)
    );
    // Read as types, it is the message the typed reading makes, and as a
    // tree the one the typed reading writes.
    let (expected, _) = typed(body.as_bytes()).expect("typed");
    assert_eq!(
        reply.response.clone().into_typed().expect("typed"),
        expected
    );
    assert_eq!(
        reply.response.to_value().expect("a tree"),
        serde_json::to_value(&expected).expect("a tree")
    );
}

#[test]
fn what_the_types_would_drop_is_read_by_the_types() {
    // A member a2a::Message does not have, a part member a2a::Part does
    // not keep, a part whose text hides its data: the typed reading
    // writes these back without what it drops, so they are not passed.
    for result in [
        json!({"message": {"messageId": "m", "role": "ROLE_AGENT", "x-vendor": 1, "parts": [{"data": {"a": 1}}]}}),
        json!({"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"data": {"a": 1}, "note": "x"}]}}),
        json!({"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "t", "data": {"a": 1}}, {"data": {"b": 2}}]}}),
    ] {
        let reply = interpret_answer("p", http::StatusCode::OK, &rpc(result.clone()), false)
            .unwrap_or_else(|f| panic!("{result}: {}", f.nc.detail));
        assert!(
            matches!(reply.response, ProviderReply::Typed(_)),
            "{result}"
        );
    }
    // Around the message, the hub writes the result's one member itself:
    // what else a provider put there does not reach the caller.
    let body = rpc(
        json!({"kind": "message", "message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"data": {"a": 1}}]}}),
    );
    let reply = interpret_answer("p", http::StatusCode::OK, &body, false)
        .unwrap_or_else(|f| panic!("{}", f.nc.detail));
    assert!(matches!(reply.response, ProviderReply::Passed(_)));
    let written = serde_json::to_value(&reply.response).expect("written");
    assert_eq!(written.as_object().map(|o| o.len()), Some(1), "{written}");
}

#[test]
fn the_quick_reading_agrees_with_the_typed_one_or_leaves_it_the_answer() {
    let message =
        |parts: Value| json!({"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": parts}});
    let cases = [
        message(json!([{"data": {"a": 1}}])),
        message(json!([{"text": "t"}, {"data": {"a": 1}}, {"data": {"b": 2}}])),
        message(json!([{"text": "t", "data": {"a": 1}}, {"data": {"b": 2}}])),
        message(json!([{"text": 7, "data": {"a": 1}}])),
        message(json!([{"url": "https://x.example/f"}, {"data": null}])),
        message(json!([{"url": "https://x.example/f", "data": {"a": 1}}])),
        message(json!([{"raw": "aGk="}, {"data": {"a": 1}}])),
        message(json!([{"raw": "not base64!", "data": {"a": 1}}])),
        message(
            json!([{"data": {"a": 1}, "metadata": {"k": 1}, "filename": "f", "mediaType": "application/json"}]),
        ),
        message(json!([{"data": {"a": 1}, "metadata": null}])),
        message(json!([{"data": {"a": 1}, "metadata": {}}])),
        message(json!([{"data": {"a": 1}, "filename": 3}])),
        message(json!([{"metadata": {"k": 1}}])),
        message(json!([{"text": "only text"}])),
        message(json!([])),
        message(json!("not a list")),
        message(json!([7])),
        json!({"message": {"messageId": "m", "role": "ROLE_ROBOT", "parts": [{"data": {}}]}}),
        json!({"message": {"messageId": "m", "role": "", "parts": [{"data": {}}]}}),
        json!({"message": {"role": "ROLE_AGENT", "parts": [{"data": {}}]}}),
        json!({"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"data": {}}], "metadata": [1]}}),
        json!({"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"data": {}}], "metadata": {"k": [1]}}}),
        json!({"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"data": {}}], "contextId": 5}}),
        json!({"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"data": {}}], "contextId": null}}),
        json!({"message": {"messageId": "m", "role": "ROLE_UNSPECIFIED", "parts": [{"data": {}}], "metadata": {}}}),
        json!({"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"data": {}}],
            "taskId": "t", "extensions": ["x"], "referenceTaskIds": ["t0"]}}),
        json!({"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"data": {}}]}, "task": null}),
        json!({"message": null}),
        json!({"task": {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}}),
        json!({}),
        json!("a string"),
    ];
    let mut passed_any = 0;
    for case in cases {
        let body = rpc(case.clone());
        let quick = read_message(&body);
        let typed = typed(&body);
        match (quick, typed) {
            (None, _) => {} // the typed reading reads it
            (Some(_), None) => panic!("passed through what the A2A types refuse: {case}"),
            (Some((passed, data)), Some((response, result))) => {
                passed_any += 1;
                let SendMessageResponse::Message(m) = &response else {
                    panic!("passed a task through: {case}");
                };
                assert_eq!(data, result.ok(), "{case}");
                assert_eq!(passed.context_id, m.context_id, "{case}");
                let reply = ProviderReply::Passed(passed);
                assert_eq!(
                    reply.to_value().expect("a tree"),
                    serde_json::to_value(&response).expect("a tree"),
                    "what passes is what the types write: {case}"
                );
                assert_eq!(reply.into_typed().expect("types"), response, "{case}");
            }
        }
    }
    assert!(passed_any >= 8, "the quick reading took {passed_any} cases");
    // An error answer, or no result, is never passed through.
    for body in [
        serde_json::to_vec(
            &json!({"jsonrpc": "2.0", "id": "r1", "error": {"code": -32602, "message": "no"}}),
        ),
        serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": "r1", "result": null})),
        Ok(b"not json".to_vec()),
    ] {
        assert!(read_message(&body.expect("json")).is_none());
    }
}

#[test]
fn a_message_without_a_data_part_is_refused_as_before() {
    let body = rpc(
        json!({"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "no data"}]}}),
    );
    let Err(failure) = interpret_answer("vendorcorp", http::StatusCode::OK, &body, false) else {
        panic!("a message without data is no capability result");
    };
    assert_eq!(
        failure.nc.detail,
        "vendorcorp's answer: the answer carries no data part with a result"
    );
    assert_eq!(failure.blame, Blame::Provider);
}

#[test]
fn a_task_is_read_into_types() {
    let body = rpc(json!({"task": {"id": "t-1", "contextId": "c-1",
        "status": {"state": "TASK_STATE_WORKING"}}}));
    let reply = interpret_answer("helpdesk", http::StatusCode::OK, &body, true)
        .unwrap_or_else(|f| panic!("{}", f.nc.detail));
    assert_eq!(reply.result, Value::Null);
    assert_eq!(reply.response.task().map(|t| t.id.as_str()), Some("t-1"));
    assert_eq!(reply.response.context_id(), Some("c-1"));
}
