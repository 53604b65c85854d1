//! What a drawer does: close itself, run an edge's data-share query or ask
//! its consult, and read a node's audit trail, through the hub.
//!
//! Answers land in the page-wide [`CanvasCtx`] (not in the drawer), so a
//! redraw of the canvas never loses a result or one still on its way.

use leptos::prelude::*;

use crate::api::{self, ApiFailure, Method};
use crate::canvas::dom::focus_testid;
use crate::canvas::state::{CanvasCtx, EdgeAnswer, Selection};
use crate::dto::{AskRequest, AuditEntryView, ConsultView, QueryRequest, QueryResultView};
use crate::routes;

/// How many entries a node's drawer asks for.
const AUDIT_LIMIT: usize = 20;

/// The test id of what a selection describes.
fn selection_testid(sel: &Selection) -> String {
    match sel {
        Selection::Node(id) => format!("node-{id}"),
        Selection::Edge(id) => format!("edge-{id}"),
    }
}

/// Closes the drawer and returns focus to its subject.
pub(crate) fn close(ctx: CanvasCtx) {
    if let Some(sel) = ctx.selection.get_untracked() {
        ctx.selection.set(None);
        focus_testid(&selection_testid(&sel));
    }
}

/// Runs `request` on a data-share edge; the answer lands in the context.
pub(crate) fn run_query(ctx: CanvasCtx, edge: String, request: QueryRequest) {
    ctx.running.update(|r| {
        r.insert(edge.clone());
    });
    leptos::task::spawn_local(async move {
        let path = routes::edge_query(&edge);
        let res = api::send_json::<_, QueryResultView>(Method::Post, &path, Some(&request))
            .await
            .and_then(|v| v.ok_or_else(|| ApiFailure::local("the hub sent an empty answer")));
        ctx.answers.try_update(|a| {
            a.insert(edge.clone(), EdgeAnswer::Query(res));
        });
        ctx.running.try_update(|r| {
            r.remove(&edge);
        });
    });
}

/// Asks `question` on a consult edge; the answer lands in the context.
pub(crate) fn run_ask(ctx: CanvasCtx, edge: String, question: String) {
    ctx.running.update(|r| {
        r.insert(edge.clone());
    });
    leptos::task::spawn_local(async move {
        let path = routes::edge_ask(&edge);
        let res =
            api::send_json::<_, ConsultView>(Method::Post, &path, Some(&AskRequest { question }))
                .await
                .and_then(|v| v.ok_or_else(|| ApiFailure::local("the hub sent an empty answer")));
        ctx.answers.try_update(|a| {
            a.insert(edge.clone(), EdgeAnswer::Consult(res));
        });
        ctx.running.try_update(|r| {
            r.remove(&edge);
        });
    });
}

/// The hub's recent audit entries of `system` (browser only).
pub(crate) async fn audit_trail(system: String) -> Result<Vec<AuditEntryView>, ApiFailure> {
    api::get_json::<Vec<AuditEntryView>>(&routes::node_audit(&system, AUDIT_LIMIT)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audit_asks_for_twenty_entries() {
        assert_eq!(
            routes::node_audit("vendorcorp", AUDIT_LIMIT),
            "/api/nodes/vendorcorp/audit?limit=20"
        );
    }
}
