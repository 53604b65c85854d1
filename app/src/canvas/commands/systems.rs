//! Changing the exchange itself: the hub reads a would-be member's card
//! and proposes its section, the operator saves it (the one answer that
//! carries the new system's token), removes a system, or lets a system
//! call a rule's capability or stops it. Every change is an edit of the
//! hub's topology file made against the version the operator saw; the
//! hub's reload redraws every open canvas.

use crate::api::{self, ApiFailure, Method};
use crate::canvas::state::CanvasCtx;
use crate::dto::{
    AddSystemRequest, CredentialIssued, DiscoverRequest, OnboardingProposal, RuleConsumerRequest,
    SystemAdded, TopologyBase,
};
use crate::routes;

/// The answer a change expected, or a local failure when none came.
fn answered<T>(answer: Result<Option<T>, ApiFailure>) -> Result<T, ApiFailure> {
    answer?.ok_or_else(|| ApiFailure::local("the hub answered without a body"))
}

/// Asks the hub to read the card at `base_url`.
pub(crate) async fn discover(base_url: String) -> Result<OnboardingProposal, ApiFailure> {
    let req = DiscoverRequest { base_url };
    answered(api::send_json(Method::Post, routes::SYSTEMS_DISCOVER, Some(&req)).await)
}

/// Saves the section the operator edited; the canvas redraws.
pub(crate) async fn add(
    ctx: CanvasCtx,
    base: String,
    section: String,
) -> Result<SystemAdded, ApiFailure> {
    let req = AddSystemRequest { base, section };
    let added = answered(api::send_json(Method::Post, routes::SYSTEMS, Some(&req)).await)?;
    ctx.refetch();
    Ok(added)
}

/// Removes system `id` from the exchange; the canvas redraws.
pub(crate) async fn remove(ctx: CanvasCtx, id: String, base: String) -> Result<(), ApiFailure> {
    let req = TopologyBase { base };
    answered::<TopologyBase>(
        api::send_json(Method::Delete, &routes::system(&id), Some(&req)).await,
    )?;
    ctx.refetch();
    Ok(())
}

/// Lets `req.consumer` call a rule's capability, or stops it.
pub(crate) async fn set_consumer(
    ctx: CanvasCtx,
    req: RuleConsumerRequest,
) -> Result<(), ApiFailure> {
    answered::<TopologyBase>(
        api::send_json(Method::Put, routes::RULE_CONSUMERS, Some(&req)).await,
    )?;
    ctx.refetch();
    Ok(())
}

/// Has the hub make a new credential for system `id` (an admin's); the
/// answer is the one place it is shown.
pub(crate) async fn rotate_credential(id: String) -> Result<CredentialIssued, ApiFailure> {
    answered(api::send_json::<(), _>(Method::Post, &routes::system_credential(&id), None).await)
}
