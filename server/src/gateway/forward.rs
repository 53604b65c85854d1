//! The provider's leg of a call (DESIGN.md §4, "Peer to peer": "forward
//! with envelope → response schema check"): one A2A `SendMessage` to the
//! provider under the capability's deadline, its answer checked against
//! the response contract, and what the call says about the provider's
//! health fed to the status board (DESIGN.md §2, "degraded").
//!
//! This is the only place the gateway waits on a peer, so it is where the
//! robustness rules of DESIGN.md §1 bite: the deadline bounds everything
//! from the first byte sent to the last byte read, the answer is read up to
//! [`MAX_ANSWER_BODY`] and no further, and no lock is held here.
//!
//! What the bytes that come back *mean* is in the sibling `answer`: that is
//! pure (status and bytes in, result or reason code out) and knows nothing
//! of clients, tokens or deadlines, while this file does the I/O and
//! nothing else.

use serde_json::{json, Value};
use tokio::time::Instant;

use super::answer::{interpret_answer, peer_error, Failure};
use super::Gateway;
use crate::auth::token_for;
use crate::contract::Contract;
use crate::registry::model::System;
use a2a::SendMessageRequest;
use exchange::envelope::{Envelope, CALLER_HEADER};
use exchange::http::{read_limited, transport_failure};
use exchange::reason::{NotConnected, ReasonCode};
use exchange::wire;

/// Largest answer the gateway reads from a provider.
pub const MAX_ANSWER_BODY: usize = 4 * 1024 * 1024;

/// Everything about one forward but the input: to whom, for whom, under
/// which envelope and deadline, checked against which response contract.
pub(super) struct Leg<'a> {
    /// The provider.
    pub(super) system: &'a System,
    /// The calling system (sent on as `X-Caller-System`).
    pub(super) caller: &'a str,
    /// The capability called.
    pub(super) capability: &'a str,
    /// The envelope of the call; its headers go on with a new span.
    pub(super) envelope: &'a Envelope,
    /// When the call gives up.
    pub(super) deadline: Instant,
    /// The same deadline as the registry states it, for the detail.
    pub(super) deadline_ms: u64,
    /// The capability's response contract, if it has one.
    pub(super) contract: Option<&'a Contract>,
}

impl Gateway {
    /// Forwards, then checks the answer against the contract, and feeds
    /// the provider's status on the board.
    pub(super) async fn forward_checked(
        &self,
        leg: &Leg<'_>,
        input: Value,
    ) -> Result<Value, NotConnected> {
        let result = self
            .forward(leg, input)
            .await
            .and_then(|answer| match leg.contract {
                None => Ok(answer),
                Some(c) => c.check(&answer).map(|()| answer).map_err(|v| {
                    Failure::provider(NotConnected::new(
                        ReasonCode::SchemaInvalid,
                        format!("{}: {v}", leg.capability),
                    ))
                }),
            });
        let system = &leg.system.id;
        match result {
            Ok(answer) => {
                self.board.record_call(system, Ok(()));
                Ok(answer)
            }
            Err(failure) => {
                if failure.provider_fault {
                    self.board.record_call(system, Err(failure.nc.clone()));
                }
                Err(failure.nc)
            }
        }
    }

    /// One A2A `SendMessage` to the provider, bounded by the deadline from
    /// the first byte sent to the last byte read.
    async fn forward(&self, leg: &Leg<'_>, input: Value) -> Result<Value, Failure> {
        let Leg {
            system,
            caller,
            capability,
            envelope,
            deadline,
            deadline_ms,
            ..
        } = *leg;
        let id = system.id.as_str();
        let Some(token) = token_for(system) else {
            // The hub's own configuration, not the provider's health.
            return Err(Failure {
                nc: NotConnected::new(
                    ReasonCode::AuthRejected,
                    format!("the hub holds no token for {id}"),
                ),
                provider_fault: false,
            });
        };
        let params = SendMessageRequest {
            message: wire::call_message(capability, input),
            configuration: None,
            metadata: None,
            tenant: None,
        };
        let body = json!({
            "jsonrpc": "2.0",
            "id": envelope.request_id,
            "method": wire::SEND_MESSAGE_METHOD,
            "params": params,
        });
        let url = format!(
            "{}{}",
            system.base_url.trim_end_matches('/'),
            wire::A2A_JSONRPC_PATH
        );
        let mut request = self
            .client
            .post(url)
            .bearer_auth(token)
            .header(CALLER_HEADER, caller)
            .json(&body);
        for (name, value) in envelope.forward_headers() {
            request = request.header(name, value);
        }
        let exchange = async {
            let resp = request.send().await?;
            let status = resp.status();
            let body = read_limited(resp, MAX_ANSWER_BODY).await?;
            Ok::<_, reqwest::Error>((status, body))
        };
        let (status, body) = match tokio::time::timeout_at(deadline, exchange).await {
            Err(_) => {
                return Err(Failure::provider(NotConnected::new(
                    ReasonCode::Timeout,
                    format!("{id} did not answer within {deadline_ms} ms"),
                )))
            }
            Ok(Err(e)) => return Err(Failure::provider(transport_failure(id, &e))),
            Ok(Ok(x)) => x,
        };
        let Some(body) = body else {
            return Err(Failure::provider(peer_error(format!(
                "{id}'s answer is larger than 4 MiB"
            ))));
        };
        interpret_answer(id, status, &body)
    }
}
