//! Where a call may go: the one decision between a route and a refusal
//! (DESIGN.md §1 rule 2, "the registry decides who may talk to whom").
//!
//! Every door asks here — an A2A message, `/gateway/v1`, an MCP
//! `tools/call`, a task operation, an edge dragged on the canvas — so a
//! call is refused for the same reason with the same words wherever it
//! came in (the words of the topology's own validation of an edge:
//! "no rule lets X consume C from P"):
//!
//! - the provider is not a system of this generation: `UNKNOWN_PEER`;
//! - the capability is not one, or no rule lets the caller use it of
//!   this provider: `NOT_PERMITTED`.
//!
//! The answer borrows from the [`Loaded`] generation it was decided in,
//! so whatever the call reads next (deadline, contract, kind) is of the
//! same generation as the decision.

use super::model::{Capability, DataPlane, System};
use super::Loaded;
use crate::contract::Contract;
use exchange::reason::{NotConnected, ReasonCode};
use exchange::text::clip;

/// A call the registry lets through: to whom, what, and under which
/// terms, all of one generation.
#[derive(Debug, Clone, Copy)]
pub struct Route<'a> {
    /// The provider.
    pub system: &'a System,
    /// The capability called.
    pub capability: &'a Capability,
    /// The capability's deadline as the registry states it.
    pub deadline_ms: u64,
    /// The capability's contract (input and response schemas), if any.
    pub contract: Option<&'a Contract>,
}

impl Loaded {
    /// The provider `id`, or `UNKNOWN_PEER`.
    pub fn provider(&self, id: &str) -> Result<&System, NotConnected> {
        self.topology.system(id).ok_or_else(|| {
            NotConnected::new(
                ReasonCode::UnknownPeer,
                format!("no system `{}` in the registry", clip(id, 64)),
            )
        })
    }

    /// The route of `caller`'s call of `capability` at `provider`, or the
    /// refusal.
    pub fn route(
        &self,
        caller: &str,
        provider: &str,
        capability: &str,
    ) -> Result<Route<'_>, NotConnected> {
        let system = self.provider(provider)?;
        let Some(cap) = self.topology.capability(capability) else {
            return Err(NotConnected::new(
                ReasonCode::NotPermitted,
                format!("no capability `{}` in the registry", clip(capability, 64)),
            ));
        };
        if !self.topology.permits(caller, capability, provider) {
            return Err(NotConnected::new(
                ReasonCode::NotPermitted,
                format!(
                    "no rule lets {} consume {} from {}",
                    clip(caller, 64),
                    clip(capability, 64),
                    clip(provider, 64)
                ),
            ));
        }
        Ok(Route {
            system,
            capability: cap,
            deadline_ms: self.topology.deadline_ms(capability),
            contract: self.contracts.of(capability),
        })
    }

    /// The route of `caller`'s call of `provider`'s MCP data plane (the
    /// data-share the plane serves), or the refusal: a provider without a
    /// plane is `NOT_PERMITTED`.
    pub fn plane_route(
        &self,
        caller: &str,
        provider: &str,
    ) -> Result<(Route<'_>, &DataPlane), NotConnected> {
        let system = self.provider(provider)?;
        let plane = system.data_plane.as_ref().ok_or_else(|| {
            NotConnected::new(
                ReasonCode::NotPermitted,
                format!("{} runs no MCP data plane", clip(provider, 64)),
            )
        })?;
        Ok((self.route(caller, provider, &plane.capability)?, plane))
    }
}

#[cfg(test)]
mod tests {
    use super::super::load::load_str;
    use exchange::reason::ReasonCode;

    const SHIPPED: &str = include_str!("../../../config/topology.yaml");

    #[test]
    fn every_refusal_has_its_reason_and_a_route_its_terms() {
        let loaded = load_str("topology.yaml", SHIPPED).expect("shipped topology loads");
        let route = loaded
            .route("buyercorp", "vendorcorp", "orders.query")
            .expect("the seeded rule");
        assert_eq!(route.system.id, "vendorcorp");
        assert_eq!(route.capability.id, "orders.query");
        assert!(route.contract.is_some());
        assert_eq!(
            route.deadline_ms,
            loaded.topology.deadline_ms("orders.query")
        );
        let refused = |caller: &str, provider: &str, capability: &str| {
            let nc = loaded
                .route(caller, provider, capability)
                .expect_err("refused");
            (nc.reason, nc.detail)
        };
        assert_eq!(
            refused("buyercorp", "nobody", "orders.query"),
            (
                ReasonCode::UnknownPeer,
                "no system `nobody` in the registry".into()
            )
        );
        assert_eq!(
            refused("buyercorp", "vendorcorp", "orders.delete"),
            (
                ReasonCode::NotPermitted,
                "no capability `orders.delete` in the registry".into()
            )
        );
        assert_eq!(
            refused("helpdesk", "vendorcorp", "orders.query"),
            (
                ReasonCode::NotPermitted,
                "no rule lets helpdesk consume orders.query from vendorcorp".into()
            )
        );
        let plane = loaded
            .plane_route("helpdesk", "buyercorp")
            .expect_err("no plane");
        assert_eq!(plane.reason, ReasonCode::NotPermitted);
        assert!(plane.detail.contains("runs no MCP data plane"), "{plane:?}");
    }
}
