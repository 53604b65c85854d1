//! Where the canvas gets its topology: one server function, whose body
//! reads a source the hub provides as Leptos context.
//!
//! The page is rendered on the server with the topology already in it (the
//! function runs in-process during rendering) and the browser calls the
//! same function over HTTP to refetch. The app crate never sees the hub's
//! registry: the hub hands it a [`TopologySource`] and that is the whole
//! coupling.

use leptos::prelude::*;

use crate::dto::TopologyView;

/// What the hub provides so the canvas can be rendered: the current view
/// of the registry, already reduced to what a browser may see.
#[cfg(feature = "ssr")]
pub trait TopologySource: Send + Sync + 'static {
    /// The topology as `GET /api/topology` would answer it right now to a
    /// person of `scope` (a member-scoped person sees its part only).
    fn topology_view(&self, scope: &crate::access::Scope) -> TopologyView;
}

/// The context value the hub provides (`provide_context`) both to page
/// rendering and to the server-function handler.
#[cfg(feature = "ssr")]
pub type SharedTopologySource = std::sync::Arc<dyn TopologySource>;

/// A fixed topology: lets tests (and a hub without a registry yet) render
/// the canvas.
#[cfg(feature = "ssr")]
#[derive(Debug, Clone)]
pub struct StaticTopology(pub TopologyView);

#[cfg(feature = "ssr")]
impl TopologySource for StaticTopology {
    fn topology_view(&self, _scope: &crate::access::Scope) -> TopologyView {
        self.0.clone()
    }
}

/// The topology the canvas draws. The browser posts to
/// [`crate::routes::TOPOLOGY_FN`]: under [`crate::routes::FN_PREFIX`], so it can never
/// collide with the hub's own `/api` routes, and behind the session guard.
/// The attribute needs literals; a test checks they spell the route.
#[server(prefix = "/api/fn", endpoint = "topology")]
pub async fn get_topology() -> Result<TopologyView, ServerFnError> {
    let source = use_context::<SharedTopologySource>().ok_or_else(|| {
        ServerFnError::new("the hub did not provide its topology source to the canvas")
    })?;
    // The hub's session guard puts the person's scope on every request it
    // lets through; without one there is nobody to show anything to.
    let scope = use_context::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<crate::access::Scope>().cloned())
        .ok_or_else(|| ServerFnError::new("no person's scope on this request"))?;
    Ok(source.topology_view(&scope))
}

#[cfg(test)]
mod tests {
    use leptos::server_fn::ServerFn;

    use super::GetTopology;
    use crate::routes;

    #[test]
    fn the_server_function_is_at_its_route() {
        assert_eq!(<GetTopology as ServerFn>::PATH, routes::TOPOLOGY_FN);
        assert_eq!(
            routes::TOPOLOGY_FN,
            format!("{}/topology", routes::FN_PREFIX)
        );
    }
}
