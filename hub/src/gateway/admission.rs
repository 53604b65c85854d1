//! The door every call passes before anything is forwarded (steps 1 to 4
//! of the [pipeline](super)): an unreadable request, the A2A version, the
//! auth chain for callers from outside, the registry's route, the input
//! contract, and the edge's quota.
//!
//! [`Admission`] owns exactly what those checks read: the auth chain, the
//! member issuers' keys (a bearer JWT is checked against them, and a
//! refused credential is classified as a stranger's or a member's), and
//! the quota counters. It forwards nothing and writes no record; a refusal
//! here is a [`Done`] or a [`NotConnected`] the pipeline finishes like any
//! other outcome.

use std::sync::Arc;

use axum::http::HeaderMap;
use serde_json::Value;

use super::call::{Call, Done, Input};
use super::strangers::{Front, Stranger};
use crate::auth::{AuthChain, AuthContext, Target};
use crate::contract::SchemaViolation;
use crate::identity::Identity;
use crate::net::listen::Peer;
use crate::quotas::{Edge, Quotas};
use crate::registry::model::System;
use crate::registry::Route;
use exchange::envelope::Envelope;
use exchange::reason::{NotConnected, ReasonCode};
use exchange::text::clip;

/// How a call reached the pipeline.
pub(super) enum Door<'a> {
    /// From outside, by `front`: the auth chain runs on these.
    Outside {
        peer: &'a Peer,
        headers: &'a HeaderMap,
        front: Front,
    },
    /// The hub's own callers, in-process.
    Hub,
}

/// The checks before a call is forwarded, and what they read.
pub(super) struct Admission {
    auth: AuthChain,
    /// The member issuers' keys, for bearer JWTs.
    identity: Arc<Identity>,
    /// The counters of limited edges; `None` admits every call uncounted.
    quotas: Option<Quotas>,
}

impl Admission {
    /// The standard auth chain over `identity`, counting limited edges in
    /// `quotas` when given.
    pub(super) fn new(identity: Arc<Identity>, quotas: Option<Quotas>) -> Self {
        Self {
            auth: AuthChain::standard(),
            identity,
            quotas,
        }
    }

    /// An unreadable request is refused first, then the version, the auth
    /// chain (callers from outside), and a request without a valid input.
    /// A call from outside refused here whose credential names no system
    /// is marked a stranger's.
    // The error is the refusal the caller gets, on a path that ends the
    // call: boxing it would only move it.
    #[allow(clippy::result_large_err)]
    pub(super) fn admit(&self, call: &Call, door: &Door<'_>, input: Input) -> Result<Value, Done> {
        let admitted = self.checks(call, door, input);
        if let (
            Err(_),
            Door::Outside {
                peer,
                headers,
                front,
            },
        ) = (&admitted, door)
        {
            if let Err(credential) = crate::auth::presented(headers, &call.registry, &self.identity)
            {
                let _ = call.stranger.set(Stranger {
                    front: *front,
                    credential,
                    from: peer.addr.map(|a| a.ip()),
                });
            }
        }
        admitted
    }

    /// [`Admission::admit`]'s checks, in order.
    #[allow(clippy::result_large_err)]
    fn checks(&self, call: &Call, door: &Door<'_>, input: Input) -> Result<Value, Done> {
        let input = match input {
            Input::Unreadable { status, why } => return Err(Done::refused(status, why)),
            Input::Invalid { status, why } => Err(Done::refused(status, why)),
            Input::Parsed(input) => Ok(input),
        };
        if !call.envelope.version_supported() {
            return Err(Done::fail(version_unsupported(&call.envelope)));
        }
        if let Door::Outside { peer, headers, .. } = door {
            self.auth
                .check(&AuthContext {
                    caller: &call.caller,
                    peer,
                    headers,
                    registry: &call.registry,
                    identity: &self.identity,
                    target: Some(Target {
                        provider: &call.provider,
                        capability: &call.capability,
                    }),
                })
                .map_err(Done::fail)?;
        }
        input
    }

    /// The door for a request that is not a capability call (a task
    /// operation, an MCP request, a message the hub answers itself), come
    /// in by `front`: version and auth chain as for a call.
    pub(super) fn outside(
        &self,
        call: &Call,
        peer: &Peer,
        headers: &HeaderMap,
        front: Front,
    ) -> Result<(), NotConnected> {
        let door = Door::Outside {
            peer,
            headers,
            front,
        };
        match self.admit(call, &door, Input::Parsed(Value::Null)) {
            Ok(_) => Ok(()),
            Err(done) => Err(done
                .result
                .err()
                .unwrap_or_else(|| NotConnected::new(ReasonCode::PeerError, "refused"))),
        }
    }

    /// The auth chain alone, for a request that is not a call (a
    /// provider's extended card): the same layers, the same refusals.
    pub(super) fn authenticate(&self, cx: &AuthContext<'_>) -> Result<(), NotConnected> {
        self.auth.check(cx)
    }

    /// The registry's route for `call` (`UNKNOWN_PEER`, `NOT_PERMITTED`),
    /// and the hub's half of the grant: an input outside the capability's
    /// input schema (a column nobody granted) never leaves the hub.
    pub(super) fn route<'a>(
        &self,
        call: &'a Call,
        input: &Value,
    ) -> Result<Route<'a>, NotConnected> {
        let route = call
            .registry
            .route(&call.caller, &call.provider, &call.capability)?;
        if let Some(v) = route.contract.and_then(|c| c.check_input(input).err()) {
            return Err(outside_contract(&call.capability, &v));
        }
        Ok(route)
    }

    /// The registry's route to the provider's data plane for an MCP
    /// request, after version and auth chain, and the input schema of the
    /// data-share it serves (a listing has no input): the provider and
    /// the call's deadline.
    pub(super) fn plane<'a>(
        &self,
        call: &'a Call,
        peer: &Peer,
        headers: &HeaderMap,
        input: &Value,
    ) -> Result<(&'a System, u64), NotConnected> {
        self.outside(call, peer, headers, Front::Mcp)?;
        let (route, plane) = call.registry.plane_route(&call.caller, &call.provider)?;
        if !input.is_null() {
            if let Some(v) = route.contract.and_then(|c| c.check_input(input).err()) {
                return Err(outside_contract(&plane.capability, &v));
            }
        }
        Ok((route.system, route.deadline_ms))
    }

    /// The quota of an admitted call (its rule's rate limit and daily
    /// quota, `crate::quotas`): counted, or refused with `NOT_PERMITTED`
    /// and when to retry. A rule without limits asks no store.
    pub(super) async fn within_quota(&self, call: &Call) -> Result<(), NotConnected> {
        let Some(quotas) = &self.quotas else {
            return Ok(());
        };
        let Some(limits) =
            call.registry
                .topology
                .limits(&call.caller, &call.capability, &call.provider)
        else {
            return Ok(());
        };
        let edge = Edge {
            consumer: &call.caller,
            provider: &call.provider,
            capability: &call.capability,
        };
        quotas
            .admit(edge, limits)
            .await
            .map_err(|over| over.refusal(edge))
    }
}

/// The refusal of an input outside `capability`'s input schema.
fn outside_contract(capability: &str, v: &SchemaViolation) -> NotConnected {
    NotConnected::new(
        ReasonCode::NotPermitted,
        format!(
            "{capability}: the input is outside the contract at {}: {}",
            v.pointer, v.problem
        ),
    )
}

/// The refusal of a call whose declared A2A version this build does not
/// speak.
fn version_unsupported(envelope: &Envelope) -> NotConnected {
    NotConnected::new(
        ReasonCode::VersionUnsupported,
        format!(
            "A2A version {} is not supported (supported: {})",
            clip(&envelope.version, 32),
            exchange::envelope::SUPPORTED_VERSIONS.join(", ")
        ),
    )
}
