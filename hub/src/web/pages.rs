//! The hub's HTTP face: the server-rendered canvas, its server functions
//! and its static assets.
//!
//! The canvas (in `app`) reads the topology through one server function,
//! `app::canvas::get_topology`, whose body asks a
//! [`SharedTopologySource`] found in Leptos context. This module provides
//! that context to page rendering and to the server-function handler alike
//! (`leptos_routes_with_context` registers the server-function routes too,
//! at `/api/fn/...`, with the same context), so the first HTML carries the
//! graph and the browser's refetches see the same view.

use std::sync::Arc;

use app::canvas::{SharedTopologySource, TopologySource};
use app::dto::TopologyView;
use app::{page_routes, shell};
use axum::Router;
use leptos::nonce::Nonce;
use leptos::prelude::*;
use leptos_axum::LeptosRoutes;

use crate::web::bff::BffState;

/// Builds the router that serves the Leptos canvas (SSR + hydration
/// assets) and its server functions, reading the topology from `source`.
pub fn ui_router(leptos_options: LeptosOptions, source: SharedTopologySource) -> Router {
    let routes = page_routes();
    let context = move || {
        provide_context(source.clone());
        // The nonce the response's Content-Security-Policy names
        // (ui_auth::headers), so Leptos's inline scripts carry it.
        if let Some(nonce) = use_context::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Nonce>().cloned())
        {
            provide_context(nonce);
        }
    };
    Router::new()
        .leptos_routes_with_context(&leptos_options, routes, context.clone(), {
            let leptos_options = leptos_options.clone();
            move || shell(leptos_options.clone())
        })
        .fallback(leptos_axum::file_and_error_handler_with_context(
            context, shell,
        ))
        .with_state(leptos_options)
}

/// The live registry, health board and edge store as the canvas's
/// topology source: exactly what `GET /api/topology` answers.
#[derive(Debug, Clone)]
pub struct HubTopology {
    state: BffState,
}

impl HubTopology {
    /// The source to pass to [`ui_router`].
    pub fn shared(state: BffState) -> SharedTopologySource {
        Arc::new(HubTopology { state })
    }
}

impl TopologySource for HubTopology {
    fn topology_view(&self, scope: &app::access::Scope) -> TopologyView {
        self.state.view(scope)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use app::canvas::StaticTopology;
    use app::dto::{CapabilityKind, EdgeView, NodeKind, NodeStatus, NodeView, ReasonCode};
    use app::routes::TOPOLOGY_FN as TOPOLOGY_FN_PATH;
    use axum::body::Body;
    use axum::http::{header, Request, StatusCode};
    use tower::ServiceExt;

    fn node(id: &str, name: &str, kind: NodeKind, system: Option<&str>) -> NodeView {
        NodeView::healthy(id, name, kind, system)
    }

    fn view() -> TopologyView {
        let mut vendor = node("vendorcorp", "VendorCorp", NodeKind::System, None);
        vendor.status = NodeStatus::Degraded;
        vendor.reason = Some(ReasonCode::PeerUnreachable);
        TopologyView {
            hub_id: "hub".into(),
            nodes: vec![
                node("hub", "Wall Street hub", NodeKind::Hub, None),
                vendor,
                node(
                    "vendorcorp/agent/data-steward",
                    "Data steward",
                    NodeKind::Agent,
                    Some("vendorcorp"),
                ),
                node("buyercorp", "BuyerCorp", NodeKind::System, None),
            ],
            edges: vec![EdgeView {
                id: "buyercorp->vendorcorp:orders.query".into(),
                consumer: "buyercorp".into(),
                provider: "vendorcorp".into(),
                capability: "orders.query".into(),
                kind: CapabilityKind::DataShare,
                status: NodeStatus::Degraded,
                reason: Some(ReasonCode::PeerUnreachable),
            }],
            rules: vec![],
            capabilities: vec![],
            reload_error: None,
            positions: Vec::new(),
            layout: Vec::new(),
            digest: String::new(),
        }
    }

    /// The pages, each request carrying an exchange-wide person's scope as
    /// the session guard would put it there.
    fn router(view: TopologyView) -> Router {
        let options = LeptosOptions::builder().output_name("wall-street").build();
        ui_router(options, Arc::new(StaticTopology(view))).layer(axum::middleware::from_fn(
            |mut request: axum::extract::Request, next: axum::middleware::Next| async move {
                request
                    .extensions_mut()
                    .insert(app::access::Scope::Exchange);
                next.run(request).await
            },
        ))
    }

    #[tokio::test]
    async fn the_server_function_answers_nothing_without_a_persons_scope() {
        let options = LeptosOptions::builder().output_name("wall-street").build();
        let req = Request::post(TOPOLOGY_FN_PATH)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Body::empty())
            .unwrap_or_default();
        let res = ui_router(options, Arc::new(StaticTopology(view())))
            .oneshot(req)
            .await;
        let Ok(res) = res;
        assert_ne!(res.status(), StatusCode::OK);
        assert!(!body(res).await.contains("vendorcorp"));
    }

    async fn body(res: axum::response::Response) -> String {
        let bytes = axum::body::to_bytes(res.into_body(), 4 << 20)
            .await
            .unwrap_or_default();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    #[tokio::test]
    async fn the_first_html_already_contains_the_graph() {
        let res = router(view())
            .oneshot(Request::get("/").body(Body::empty()).unwrap_or_default())
            .await;
        let Ok(res) = res;
        assert_eq!(res.status(), StatusCode::OK);
        let html = body(res).await;
        for needle in [
            r#"data-hydrated="false""#,
            r#"data-testid="node-vendorcorp""#,
            r#"data-testid="node-vendorcorp/agent/data-steward""#,
            r#"data-testid="node-buyercorp""#,
            r#"data-testid="edge-buyercorp-&gt;vendorcorp:orders.query""#,
            r#"aria-label="VendorCorp, system, degraded, PEER_UNREACHABLE""#,
            "orders.query",
            ">100%<",
        ] {
            assert!(html.contains(needle), "missing {needle} in {html}");
        }
        assert!(!html.contains("Loading topology"), "{html}");
        assert!(!html.contains(r#"data-testid="empty-state""#));
    }

    #[tokio::test]
    async fn no_systems_shows_the_empty_state() {
        let mut v = view();
        v.nodes.retain(|n| n.node_type == NodeKind::Hub);
        v.edges.clear();
        let res = router(v)
            .oneshot(Request::get("/").body(Body::empty()).unwrap_or_default())
            .await;
        let Ok(res) = res;
        let html = body(res).await;
        assert!(html.contains(r#"data-testid="empty-state""#), "{html}");
        assert!(html.contains("No peers registered — add one to the topology file."));
    }

    #[tokio::test]
    async fn the_server_function_answers_the_topology() {
        let req = Request::post(TOPOLOGY_FN_PATH)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::ACCEPT, "application/json")
            .body(Body::empty())
            .unwrap_or_default();
        let res = router(view()).oneshot(req).await;
        let Ok(res) = res;
        assert_eq!(res.status(), StatusCode::OK);
        let json = body(res).await;
        let got: TopologyView =
            serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"));
        assert_eq!(got, view());
    }
}
