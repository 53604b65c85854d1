//! A2A's gRPC binding crossed the way an attacker would (NOTES.md, "The
//! A2A surface", gRPC): with the generated client of the official
//! `a2a.proto` (`a2a-pb`'s), over HTTP/2 in the clear, against a real hub
//! and real peers. A forged caller claim in the metadata, a tenant naming
//! a provider the caller has no rule for, a tenant naming nobody, no
//! provider at all: each is refused with its reason code in the status
//! details, and the provider's own trail shows that none of them reached
//! it, while a granted call does.

mod common;

use a2a_pb::proto::a2a_service_client::A2aServiceClient;
use a2a_pb::proto::SendMessageRequest;
use common::Stack;
use serde_json::json;
use tonic::transport::Channel;
use tonic::Code;
use tonic_types::{ErrorDetail, StatusExt};

async fn client(stack: &Stack) -> A2aServiceClient<Channel> {
    A2aServiceClient::connect(format!("http://127.0.0.1:{}", stack.hub_port))
        .await
        .expect("an HTTP/2 connection to the hub")
}

/// A count of VendorCorp's orders as a gRPC request: `tenant` names the
/// provider, `metadata` is what the caller sends.
fn count_orders(
    tenant: &str,
    metadata: &[(&'static str, String)],
) -> tonic::Request<SendMessageRequest> {
    let typed: a2a::SendMessageRequest = serde_json::from_value(json!({
        "message": {
            "messageId": common::a2a::unique(),
            "role": "ROLE_USER",
            "parts": [{"data": {"capability": "orders.query",
                                "input": {"aggregate": {"op": "count"}}}}],
        }
    }))
    .expect("a SendMessageRequest");
    let mut proto = a2a_pb::pbconv::to_proto_send_message_request(&typed);
    proto.tenant = tenant.to_string();
    let mut request = tonic::Request::new(proto);
    for (name, value) in metadata {
        request
            .metadata_mut()
            .insert(*name, value.parse().expect("ASCII metadata"));
    }
    request
}

/// The status's first `ErrorInfo` reason (the reason code's).
fn reason(status: &tonic::Status) -> String {
    status
        .get_error_details_vec()
        .into_iter()
        .find_map(|d| match d {
            ErrorDetail::ErrorInfo(i) => Some(i.reason),
            _ => None,
        })
        .unwrap_or_default()
}

/// A call the hub must refuse: what it is, its tenant, the metadata its
/// caller sends, the gRPC code and the reason code it must get.
struct Refusal(
    &'static str,
    &'static str,
    Vec<(&'static str, String)>,
    Code,
    &'static str,
);

/// How many calls VendorCorp's own trail has recorded.
async fn vendor_trail(stack: &Stack) -> i64 {
    let pool = common::peer_pool(&stack.peer_db("vendorcorp")).await;
    let n = sqlx::query_scalar("SELECT COUNT(*) FROM audit_trail")
        .fetch_one(&pool)
        .await
        .expect("VendorCorp's trail");
    pool.close().await;
    n
}

#[tokio::test]
async fn forged_claims_and_tenants_are_refused_and_never_reach_the_provider() {
    let stack = Stack::demo().await;
    let mut grpc = client(&stack).await;
    let bearer = |id: &str| format!("Bearer {}", stack.token(id));
    let before = vendor_trail(&stack).await;

    // Each refusal: who calls (its metadata), which tenant, and what the
    // hub must answer.
    let refusals: [Refusal; 4] = [
        Refusal(
            "BuyerCorp's token claiming to be Helpdesk: the claim is what the auth chain checks",
            "vendorcorp",
            vec![
                ("authorization", bearer("buyercorp")),
                ("x-caller-system", "helpdesk".into()),
            ],
            Code::Unauthenticated,
            "AUTH_REJECTED",
        ),
        Refusal(
            "Helpdesk's own token, VendorCorp as its tenant: no rule",
            "vendorcorp",
            vec![("authorization", bearer("helpdesk"))],
            Code::PermissionDenied,
            "NOT_PERMITTED",
        ),
        Refusal(
            "a tenant that is no provider",
            "nobody",
            vec![("authorization", bearer("buyercorp"))],
            Code::NotFound,
            "UNKNOWN_PEER",
        ),
        Refusal(
            "a call that names no provider",
            "",
            vec![("authorization", bearer("buyercorp"))],
            Code::InvalidArgument,
            "INVALID_PARAMS",
        ),
    ];
    for Refusal(what, tenant, metadata, code, why) in &refusals {
        let status = grpc
            .send_message(count_orders(tenant, metadata))
            .await
            .expect_err(what);
        assert_eq!(status.code(), *code, "{what}: {status:?}");
        assert_eq!(reason(&status), *why, "{what}: {status:?}");
        // No answer carries a token.
        let seen = format!("{status:?}");
        for id in ["buyercorp", "helpdesk", "vendorcorp"] {
            assert!(
                !seen.contains(&stack.token(id)),
                "{what}: {id}'s token in {seen}"
            );
        }
    }
    // None of them reached VendorCorp.
    assert_eq!(vendor_trail(&stack).await, before);

    // The granted call does reach it: the count above could have moved.
    let granted = grpc
        .send_message(count_orders(
            "vendorcorp",
            &[("authorization", bearer("buyercorp"))],
        ))
        .await
        .expect("BuyerCorp may count VendorCorp's orders");
    assert!(granted.metadata().get("x-request-id").is_some());
    assert_eq!(vendor_trail(&stack).await, before + 1);
}
