//! Observed edges (DESIGN.md §2): calls between two nodes that crossed the
//! hub in the last window, drawn apart from the operator's established
//! edges: a thin dashed arc over the cards (`crate::canvas::graph`'s
//! `observed_route`) whose dashes run faster and whose line is heavier as
//! the last minute's rate grows, with a label (the capability) and the
//! same traffic line an established edge has. An edge whose every call in
//! the window was refused is greyed and its label names the reason code.
//! Which edges are drawn is `crate::canvas::observed`'s; when the hub
//! stops naming one (its window emptied), it is gone.
//!
//! Clicking the line or the label opens its drawer (`drawer`), with its
//! metrics and envelope inspector.
//!
//! The arcs are routed, and their labels placed, together
//! ([`observed_arcs`]) at the committed positions, after the established
//! edges' labels and around them; a label shows its capability whole or
//! cut, or is not drawn, like an established edge's (`components::edge`).
//! Mid-drag, the dragged root's arcs follow its card and their labels
//! keep their spots on them; the drop places them again.

use std::collections::HashMap;
use std::sync::Arc;

use leptos::ev::PointerEvent;
use leptos::prelude::*;

use super::edge::{edge_state, label_transform, placed_class, EdgeState, LinePlace, TrafficLine};
use crate::canvas::graph::{
    lanes, observed_route, LabelText, ObservedEdge, ObservedGeom, Placed, Point, Rect,
};
use crate::canvas::health::Health;
use crate::canvas::interaction::SceneCtx;
use crate::canvas::labels::kind_label;
use crate::canvas::observed::drawable;
use crate::canvas::state::{CanvasCtx, Selection};
use crate::canvas::traffic::{self, ObservedState};
use crate::dto::EdgeView;

/// One observed edge as the scene draws it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DrawnObserved {
    /// The edge (its status left to its ends' health).
    pub edge: EdgeView,
    /// Its lane among the observed edges between the same two roots.
    pub lane: usize,
}

/// The observed edges the scene draws, with their lanes (tracked: the hub's
/// observed edges change with traffic events).
pub(crate) fn drawn_observed(ctx: CanvasCtx, scene: &SceneCtx) -> Memo<Vec<DrawnObserved>> {
    let scene = scene.clone();
    Memo::new(move |_| {
        let edges = ctx.traffic.observed.with(|set| drawable(set, &scene.view));
        let model = scene.model.clone();
        let lanes = lanes(&edges, |id| model.root_of(id));
        edges
            .into_iter()
            .zip(lanes)
            .map(|(edge, lane)| DrawnObserved { edge, lane })
            .collect()
    })
}

/// The arcs of the scene's observed edges at the committed positions, by
/// edge id, their labels placed clear of every block and of the
/// established edges' labels. Placed again when the observed edges, their
/// lanes or a refused label's reason code change, or on a drop; a traffic
/// event that only changes counts places nothing.
pub(crate) fn observed_arcs(
    ctx: CanvasCtx,
    scene: &SceneCtx,
    drawn: Memo<Vec<DrawnObserved>>,
) -> Memo<Arc<HashMap<String, ObservedGeom>>> {
    // What each label adds after its capability (its width counts).
    let badges = Memo::new(move |_| {
        drawn.with(|d| {
            d.iter()
                .map(|o| {
                    ctx.traffic.cell(&o.edge.id).with(|t| {
                        t.view()
                            .map_or(ObservedState::Answered, ObservedState::of)
                            .badge()
                    })
                })
                .collect::<Vec<_>>()
        })
    });
    let (model, positions, boxes) = (scene.model.clone(), scene.positions, scene.label_boxes);
    Memo::new(move |_| {
        let badges = badges.get();
        drawn.with(|d| {
            let edges: Vec<ObservedEdge<'_>> = d
                .iter()
                .zip(badges.iter().copied())
                .map(|(o, badge)| ObservedEdge {
                    edge: &o.edge,
                    lane: o.lane,
                    badge,
                })
                .collect();
            let taken: Vec<Rect> = boxes.with(|b| b.iter().flatten().copied().collect());
            let arcs = positions.with(|p| model.observed_routes(p, &edges, &taken));
            Arc::new(
                d.iter()
                    .zip(arcs)
                    .filter_map(|(o, g)| Some((o.edge.id.clone(), g?)))
                    .collect(),
            )
        })
    })
}

/// The arc of an observed edge: its committed arc, or, while one of its
/// cards is dragged, an arc following that card with the label at its
/// committed spot.
fn arc(
    scene: &SceneCtx,
    drawn: &DrawnObserved,
    arcs: Memo<Arc<HashMap<String, ObservedGeom>>>,
) -> Memo<Option<ObservedGeom>> {
    let (positions, drag) = (scene.positions, scene.drag);
    let from = scene.model.root_of(&drawn.edge.consumer).to_string();
    let to = scene.model.root_of(&drawn.edge.provider).to_string();
    let (id, lane) = (drawn.edge.id.clone(), drawn.lane);
    let model = scene.model.clone();
    Memo::new(move |_| {
        let committed = arcs.with(|m| m.get(&id).cloned())?;
        let live = drag.with(|d| {
            d.as_ref()
                .filter(|d| d.root == from || d.root == to)
                .map(|d| (d.root.clone(), d.at))
        });
        let Some((dragged, at)) = live else {
            return Some(committed);
        };
        let pos = |root: &str| -> Option<Point> {
            if root == dragged {
                Some(at)
            } else {
                positions.with(|p| p.get(root).copied())
            }
        };
        let (a, b) = (pos(&from)?, pos(&to)?);
        // The other roots' blocks, which the arc's apex keeps off.
        let blocks: Vec<Rect> = positions.with(|p| {
            p.iter()
                .filter(|(root, _)| **root != from && **root != to)
                .filter_map(|(root, pos)| Some(model.block_rect(model.index_of(root)?, *pos)))
                .collect()
        });
        Some(observed_route(a, b, lane, &blocks).following(&committed.label))
    })
}

/// What the line and the label both read: the edge's health, whether it
/// is lit, and its look from its traffic.
#[derive(Clone, Copy)]
struct Facts {
    health: Memo<Health>,
    active: Memo<bool>,
    state: Memo<ObservedState>,
}

fn facts(ctx: CanvasCtx, scene: &SceneCtx, edge: &EdgeView) -> Facts {
    let EdgeState { health, active } = edge_state(ctx, scene, edge);
    let cell = ctx.traffic.cell(&edge.id);
    let state = Memo::new(move |_| {
        cell.with(|t| t.view().map_or(ObservedState::Answered, ObservedState::of))
    });
    Facts {
        health,
        active,
        state,
    }
}

fn class(base: &str, edge: &EdgeView, f: Facts) -> String {
    format!(
        "{base} {} {} {}{}",
        kind_label(edge.kind),
        f.state.get().word(),
        f.health.get().word(),
        if f.active.get() { " active" } else { "" }
    )
}

fn open(ctx: CanvasCtx, id: &str) {
    ctx.selection.set(Some(Selection::Edge(id.to_string())));
}

/// The arcs of the observed edges (inside the edge layer's SVG).
#[component]
pub(crate) fn ObservedPaths(
    /// The scene's observed edges ([`drawn_observed`]).
    edges: Memo<Vec<DrawnObserved>>,
    /// Their arcs ([`observed_arcs`]).
    arcs: Memo<Arc<HashMap<String, ObservedGeom>>>,
) -> impl IntoView {
    view! {
        <For
            each=move || edges.get()
            key=|d| (d.edge.id.clone(), d.lane)
            children=move |drawn| view! { <ObservedPath drawn arcs/> }
        />
    }
}

#[component]
fn ObservedPath(
    drawn: DrawnObserved,
    arcs: Memo<Arc<HashMap<String, ObservedGeom>>>,
) -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let scene = expect_context::<SceneCtx>();
    let f = facts(ctx, &scene, &drawn.edge);
    let geom = arc(&scene, &drawn, arcs);
    let d = move || {
        geom.with(|g| g.as_ref().map(|g| g.path.clone()))
            .unwrap_or_else(|| std::sync::Arc::from(""))
    };
    let cell = ctx.traffic.cell(&drawn.edge.id);
    // The dashes run faster, and the line is heavier, with the rate.
    let style = move || {
        cell.with(|t| {
            t.view().map_or_else(String::new, |v| {
                format!(
                    "stroke-width: {:.2}px; animation-duration: {:.2}s",
                    traffic::observed_weight(v),
                    traffic::observed_pace(v)
                )
            })
        })
    };
    let marker = move || {
        let id = if f.active.get() {
            "arrow-active"
        } else if f.health.get().is_degraded() || matches!(f.state.get(), ObservedState::Refused(_))
        {
            "arrow-degraded"
        } else {
            "arrow-observed"
        };
        format!("url(#{id})")
    };
    let edge = drawn.edge.clone();
    let class = move || class("observed-edge", &edge, f);
    let id = drawn.edge.id.clone();
    let (id_click, id_enter) = (id.clone(), id.clone());
    view! {
        <g
            class=class
            data-observed-id=id
            data-state=move || f.state.get().word()
            on:pointerdown=|ev: PointerEvent| ev.stop_propagation()
            on:click=move |_| open(ctx, &id_click)
            on:pointerenter=move |_| ctx.highlight.set(Some(id_enter.clone()))
            on:pointerleave=move |_| ctx.highlight.set(None)
        >
            <path class="observed-hit" d=d></path>
            <path class="observed-line" d=d marker-end=marker style=style></path>
        </g>
    }
}

/// The labels and traffic lines of the observed edges (inside the label
/// layer).
#[component]
pub(crate) fn ObservedLabels(
    /// The scene's observed edges ([`drawn_observed`]).
    edges: Memo<Vec<DrawnObserved>>,
    /// Their arcs ([`observed_arcs`]).
    arcs: Memo<Arc<HashMap<String, ObservedGeom>>>,
) -> impl IntoView {
    view! {
        <For
            each=move || edges.get()
            key=|d| (d.edge.id.clone(), d.lane)
            children=move |drawn| view! { <ObservedLabel drawn arcs/> }
        />
    }
}

/// An observed edge's label: its capability (and, refused, the reason
/// code) as a button opening its drawer, and its traffic line below.
#[component]
fn ObservedLabel(
    drawn: DrawnObserved,
    arcs: Memo<Arc<HashMap<String, ObservedGeom>>>,
) -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let scene = expect_context::<SceneCtx>();
    let f = facts(ctx, &scene, &drawn.edge);
    let geom = arc(&scene, &drawn, arcs);
    let placed: Memo<Option<Placed>> =
        Memo::new(move |_| geom.with(|g| g.as_ref().map(|g| g.label.clone())));
    let transform = move || label_transform(placed.with(|p| p.as_ref().map(|p| p.centre)));
    let text = Memo::new(move |_| {
        placed.with(|p| p.as_ref().map_or(LabelText::Whole, |p| p.text.clone()))
    });
    let covered = {
        let (id, set) = (drawn.edge.id.clone(), scene.covered_observed);
        Signal::derive(move || set.with(|s| s.contains(&id)))
    };
    let edge = drawn.edge.clone();
    let consumer = scene.name(&edge.consumer);
    let provider = scene.name(&edge.provider);
    let kind = kind_label(edge.kind);
    let cell = ctx.traffic.cell(&edge.id);
    let label = {
        let capability = edge.capability.clone();
        move || {
            let mut s = format!("observed: {consumer} called {capability} of {provider}, {kind}");
            if let Some(b) = f.state.get().badge() {
                s.push_str(", refused: ");
                s.push_str(b);
            }
            if let Some(t) = cell.read().view() {
                s.push_str(", ");
                s.push_str(&traffic::traffic_spoken(t));
            }
            s
        }
    };
    // The full id always: hovering a cut label reads it whole.
    let title = {
        let capability = edge.capability.clone();
        move || match f.state.get().badge() {
            Some(b) => format!("{capability} · observed {kind} traffic · refused: {b}"),
            None => format!("{capability} · observed {kind} traffic"),
        }
    };
    let class = {
        let edge = edge.clone();
        move || {
            let mut c = class("observed-label", &edge, f);
            placed.with(|p| placed_class(&mut c, p.as_ref(), covered.get()));
            c
        }
    };
    let shown = {
        let capability = edge.capability.clone();
        move || text.with(|t| t.shown(&capability).to_string())
    };
    let badge = move || {
        f.state.get().badge().map(|b| {
            view! { <span class="observed-reason" data-testid="observed-reason">{b}</span> }
        })
    };
    let never = Memo::new(|_| false);
    let line = LinePlace {
        active: f.active,
        lifted: never,
        placed,
        covered,
    };
    let id = edge.id.clone();
    let (id_click, id_focus, id_enter) = (id.clone(), id.clone(), id.clone());
    view! {
        <button
            type="button"
            class=class
            data-testid=format!("observed-{id}")
            data-state=move || f.state.get().word()
            aria-label=label
            title=title
            data-label=move || text.with(LabelText::word)
            style:transform=transform
            on:pointerdown=|ev: PointerEvent| ev.stop_propagation()
            on:click=move |_| open(ctx, &id_click)
            on:focus=move |_| ctx.highlight.set(Some(id_focus.clone()))
            on:blur=move |_| ctx.highlight.set(None)
            on:pointerenter=move |_| ctx.highlight.set(Some(id_enter.clone()))
            on:pointerleave=move |_| ctx.highlight.set(None)
        >
            {shown}
            {badge}
        </button>
        <TrafficLine edge=id place=line/>
    }
}
