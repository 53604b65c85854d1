//! Edges: a connection `consumer → provider` for one capability, drawn as
//! an SVG path under the nodes and a labelled button above them.
//!
//! The label is the edge's focusable, clickable handle (a real `<button>`,
//! so keyboard and screen readers get it for free); the path answers
//! clicks too. Both light up together when either is focused or hovered.
//! Delete on a focused label removes the edge. The arrowheads the lines
//! end in are here too.
//!
//! Under each label, its recent traffic (DESIGN.md §6, metrics on the
//! canvas): calls and failures in the hub's window and a dot for the last
//! call's outcome, or "no traffic". It reads the edge's own traffic cell,
//! so a traffic event re-renders only the edges it names. It is drawn
//! beside the label button, not inside it (the button's text stays the
//! capability; its accessible name carries the traffic in words).
//!
//! While one of its ends is dragged, an edge is hidden here and drawn on
//! the drag overlay (`components::drag`).

use leptos::ev::{KeyboardEvent, PointerEvent};
use leptos::prelude::*;

use crate::canvas::commands::edges::remove_edge;
use crate::canvas::css;
use crate::canvas::graph::Point;
use crate::canvas::health::Health;
use crate::canvas::interaction::SceneCtx;
use crate::canvas::labels::kind_label;
use crate::canvas::state::{CanvasCtx, EdgeTraffic, Selection};
use crate::canvas::traffic;
use crate::dto::EdgeView;

/// Per-edge reactive facts both halves of an edge need (an established
/// edge's, an observed edge's).
#[derive(Clone, Copy)]
pub(crate) struct EdgeState {
    /// Its health, from its ends' and its own.
    pub health: Memo<Health>,
    /// Whether it is highlighted or selected.
    pub active: Memo<bool>,
}

pub(crate) fn edge_state(ctx: CanvasCtx, scene: &SceneCtx, edge: &EdgeView) -> EdgeState {
    let health = {
        let (scene, edge) = (scene.clone(), edge.clone());
        Memo::new(move |_| scene.edge_health(&ctx, &edge))
    };
    let active = {
        let (scene, id) = (scene.clone(), edge.id.clone());
        Memo::new(move |_| {
            scene.is_highlighted(&id) || scene.is_selected(Selection::Edge(id.clone()))
        })
    };
    EdgeState { health, active }
}

/// Is one of the edge's ends being dragged? Then the edge is drawn on the
/// drag overlay instead (hidden here, so the graph's big layers are not
/// repainted on every frame of the drag).
fn lifted(scene: &SceneCtx, edge: &EdgeView) -> Memo<bool> {
    let scene = scene.clone();
    let c = scene.model.root_of(&edge.consumer).to_string();
    let p = scene.model.root_of(&edge.provider).to_string();
    Memo::new(move |_| {
        scene.lifted.selected(&Some(c.clone())) || scene.lifted.selected(&Some(p.clone()))
    })
}

fn edge_class(base: &str, edge: &EdgeView, st: EdgeState) -> String {
    let h = st.health.get();
    format!(
        "{base} {} {}{}",
        kind_label(edge.kind),
        h.word(),
        if st.active.get() { " active" } else { "" }
    )
}

/// Longest label drawn in full; longer ids are cut with an ellipsis (the
/// whole id is in the label's accessible name and the drawer). Cut here
/// rather than by CSS: a clipping box per label costs every frame.
const LABEL_MAX_CHARS: usize = 24;

pub(crate) fn short_label(capability: &str) -> String {
    if capability.chars().count() <= LABEL_MAX_CHARS {
        capability.to_string()
    } else {
        capability
            .chars()
            .take(LABEL_MAX_CHARS - 1)
            .chain(['…'])
            .collect()
    }
}

/// The arrowhead of a line of `kind` (a [`kind_label`]) that is not lit
/// or degraded.
pub(crate) fn kind_marker(kind: &str) -> &'static str {
    match kind {
        "consult" => "arrow-consult",
        "task" => "arrow-task",
        _ => "arrow-data-share",
    }
}

fn open(ctx: CanvasCtx, id: &str) {
    ctx.selection.set(Some(Selection::Edge(id.to_string())));
}

/// The line of an edge.
#[component]
pub(crate) fn EdgePath(
    edge: EdgeView,
    /// Its place in the scene's edge list (and geometry).
    index: usize,
) -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let scene = expect_context::<SceneCtx>();
    let st = edge_state(ctx, &scene, &edge);
    let lifted = lifted(&scene, &edge);
    // While lifted, the hidden line keeps its place: moving it would still
    // repaint the big layer it is hidden in.
    let geom = {
        let geom = scene.edge_geom.get(index).copied();
        Memo::new(
            move |prev: Option<&Option<std::sync::Arc<str>>>| match prev {
                Some(prev) if lifted.get() => prev.clone(),
                _ => geom.and_then(|g| g.with(|g| g.as_ref().map(|g| g.path.clone()))),
            },
        )
    };
    let d = move || geom.get().unwrap_or_else(|| std::sync::Arc::from(""));
    let marker = {
        let kind = kind_label(edge.kind);
        move || {
            let id = if st.active.get() {
                "arrow-active"
            } else if st.health.get().is_degraded() {
                "arrow-degraded"
            } else {
                kind_marker(kind)
            };
            format!("url(#{id})")
        }
    };
    let class = {
        let edge = edge.clone();
        move || {
            let mut c = edge_class("edge", &edge, st);
            if lifted.get() {
                c.push_str(" lifted");
            }
            c
        }
    };
    let id = edge.id.clone();
    let (id_enter, id_click) = (id.clone(), id.clone());
    view! {
        <g
            class=class
            data-edge-id=id
            on:pointerdown=|ev: PointerEvent| ev.stop_propagation()
            on:click=move |_| open(ctx, &id_click)
            on:pointerenter=move |_| ctx.highlight.set(Some(id_enter.clone()))
            on:pointerleave=move |_| ctx.highlight.set(None)
        >
            <path class="edge-hit" d=d></path>
            <path class="edge-line" d=d marker-end=marker></path>
        </g>
    }
}

/// Where an edge's label is and how it is drawn: shared by the label and
/// its traffic line, made once per edge by the scene
/// ([`label_place`]).
#[derive(Clone, Copy)]
pub(crate) struct LabelPlace {
    st: EdgeState,
    lifted: Memo<bool>,
    /// The label's centre (it stays put while the edge is lifted: moving
    /// it would repaint the big layer it is hidden in).
    pos: Memo<Option<Point>>,
}

impl LabelPlace {
    /// Where the label's traffic line goes.
    pub(crate) fn line(&self) -> LinePlace {
        LinePlace {
            active: self.st.active,
            lifted: self.lifted,
            pos: self.pos,
        }
    }
}

/// Where a traffic line is drawn (just below its label's centre `pos`),
/// and whether its edge is lit or lifted: an established edge's
/// ([`LabelPlace::line`]) or an observed edge's.
#[derive(Clone, Copy)]
pub(crate) struct LinePlace {
    pub(crate) active: Memo<bool>,
    pub(crate) lifted: Memo<bool>,
    pub(crate) pos: Memo<Option<Point>>,
}

/// The [`LabelPlace`] of `edge`, number `index` in the scene's edge list.
pub(crate) fn label_place(
    ctx: CanvasCtx,
    scene: &SceneCtx,
    edge: &EdgeView,
    index: usize,
) -> LabelPlace {
    let st = edge_state(ctx, scene, edge);
    let lifted = lifted(scene, edge);
    let pos = {
        let geom = scene.edge_geom.get(index).copied();
        Memo::new(move |prev: Option<&Option<Point>>| match prev {
            Some(prev) if lifted.get() => *prev,
            _ => geom.and_then(|g| g.with(|g| g.as_ref().map(|g| g.label))),
        })
    };
    LabelPlace { st, lifted, pos }
}

/// The label of an edge: its capability, as a button opening its drawer.
#[component]
pub(crate) fn EdgeLabel(
    edge: EdgeView,
    /// Where it is drawn ([`label_place`]).
    place: LabelPlace,
) -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let scene = expect_context::<SceneCtx>();
    let LabelPlace { st, lifted, pos } = place;
    let transform = move || {
        pos.get().map_or_else(
            || "translate(-9999px, -9999px)".to_string(),
            |p| css::translate(p, " translate(-50%, -50%)"),
        )
    };
    let cell = ctx.traffic.cell(&edge.id);
    let consumer = scene.name(&edge.consumer);
    let provider = scene.name(&edge.provider);
    let kind = kind_label(edge.kind);
    let label = {
        let capability = edge.capability.clone();
        let cell = cell.clone();
        move || {
            let h = st.health.get();
            let mut s = format!("{consumer} consumes {capability} from {provider}, {kind}");
            if h.is_degraded() {
                s.push_str(", ");
                s.push_str(&h.spoken());
            }
            match &*cell.read() {
                EdgeTraffic::Unknown => {}
                EdgeTraffic::Quiet => s.push_str(", no traffic"),
                EdgeTraffic::Known(t) => {
                    s.push_str(", ");
                    s.push_str(&traffic::traffic_spoken(t));
                }
            }
            s
        }
    };
    let title = move || {
        let h = st.health.get();
        if h.is_degraded() {
            format!("{kind} · {}", h.badge())
        } else {
            kind.to_string()
        }
    };
    let class = {
        let edge = edge.clone();
        move || {
            let mut c = edge_class("edge-label", &edge, st);
            if lifted.get() {
                c.push_str(" lifted");
            }
            c
        }
    };
    let id = edge.id.clone();
    let (id_click, id_focus, id_enter) = (id.clone(), id.clone(), id.clone());
    let on_key = {
        let (scene, edge) = (scene.clone(), edge.clone());
        move |ev: KeyboardEvent| {
            if ev.key() == "Delete" {
                ev.prevent_default();
                remove_edge(ctx, &scene, &edge);
            }
        }
    };
    view! {
        <button
            type="button"
            class=class
            data-testid=format!("edge-{id}")
            aria-label=label
            aria-keyshortcuts="Delete"
            title=title
            style:transform=transform
            on:pointerdown=|ev: PointerEvent| ev.stop_propagation()
            on:click=move |_| open(ctx, &id_click)
            on:keydown=on_key
            on:focus=move |_| ctx.highlight.set(Some(id_focus.clone()))
            on:blur=move |_| ctx.highlight.set(None)
            on:pointerenter=move |_| ctx.highlight.set(Some(id_enter.clone()))
            on:pointerleave=move |_| ctx.highlight.set(None)
        >
            {short_label(&edge.capability)}
        </button>
    }
}

/// An edge's recent traffic under its label: `12/min · 1 failed` and a
/// dot for the last call (green answered, red not connected, its reason in
/// the title), or `no traffic`; nothing until the hub's counts are read.
/// The numbers are in `data-*` attributes too (`data-state`, `data-calls`,
/// `data-failures`, `data-window-secs`, `data-last-outcome`,
/// `data-last-reason`, `data-last-at`), for tests and styles.
///
/// Kept cheap for a thousand edges: one text node (and the dot) per edge,
/// and three reactive reads: the cell (a change re-renders the line, which
/// happens only for the edges an event names), the position and the lit
/// or lifted state. Far out there are none (see `crate::canvas::cull`).
#[component]
pub(crate) fn TrafficLine(
    /// The edge id.
    edge: String,
    /// Where its label is drawn: the line sits just below it.
    place: LinePlace,
) -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let cell = ctx.traffic.cell(&edge);
    let LinePlace {
        active,
        lifted,
        pos,
    } = place;
    // Erased: the line's full type nested in the scene's overflows the
    // compiler's query depth when the wasm is built.
    let line = move || {
        let traffic = cell.get();
        let view = traffic.view();
        let state = match &traffic {
            EdgeTraffic::Unknown => "unknown",
            EdgeTraffic::Known(t) if !traffic::is_quiet(t) => "seen",
            _ => "quiet",
        };
        let known = !matches!(traffic, EdgeTraffic::Unknown);
        let calls = known.then(|| view.map_or(0, |v| v.calls).to_string());
        let failures = known.then(|| view.map_or(0, |v| v.failures).to_string());
        let window = view.map(|v| v.window_secs.to_string());
        let last = view.and_then(|v| v.last.clone());
        let base = if view.is_some_and(|v| v.failures > 0) {
            "edge-traffic failing"
        } else {
            "edge-traffic"
        };
        let class = move || {
            let mut c = String::from(base);
            if active.get() {
                c.push_str(" active");
            }
            if lifted.get() {
                c.push_str(" lifted");
            }
            c
        };
        let transform = move || {
            pos.get().map_or_else(
                || "translate(-9999px, -9999px)".to_string(),
                |p| {
                    css::translate(
                        Point {
                            x: p.x,
                            y: p.y + TRAFFIC_OFFSET,
                        },
                        " translate(-50%, 0)",
                    )
                },
            )
        };
        let text = match &traffic {
            EdgeTraffic::Unknown => None,
            EdgeTraffic::Quiet => Some("no traffic".to_string()),
            EdgeTraffic::Known(t) => {
                Some(traffic::traffic_text(t).unwrap_or_else(|| "no traffic".into()))
            }
        };
        let dot = last.as_ref().map(|l| {
            let ok = traffic::outcome_ok(l.outcome);
            view! {
                <span
                    class=if ok { "traffic-dot ok" } else { "traffic-dot failed" }
                    data-testid="traffic-dot"
                    title=traffic::last_call_text(l)
                ></span>
            }
        });
        let id_click = edge.clone();
        view! {
            <span
                class=class
                data-testid=format!("traffic-{edge}")
                data-state=state
                data-calls=calls
                data-failures=failures
                data-window-secs=window
                data-last-outcome=last.as_ref().map(|l| traffic::outcome_word(l.outcome))
                data-last-reason=last.as_ref().and_then(|l| l.reason).map(|r| r.as_str())
                data-last-at=last.as_ref().map(|l| l.at.clone())
                aria-hidden="true"
                style:transform=transform
                on:pointerdown=|ev: PointerEvent| ev.stop_propagation()
                on:click=move |_| open(ctx, &id_click)
            >
                {dot}
                {text}
            </span>
        }
    };
    line.into_any()
}

/// How far below its label's centre an edge's traffic line starts (world
/// pixels: about half a label's height, plus a gap).
const TRAFFIC_OFFSET: f64 = 11.0;

/// An arrowhead at the end of edge lines; its colour comes from CSS by id.
#[component]
pub(crate) fn Arrow(id: &'static str) -> impl IntoView {
    view! {
        <marker
            id=id
            class=id
            viewBox="0 0 10 10"
            refX="9"
            refY="5"
            markerWidth="7"
            markerHeight="7"
            orient="auto-start-reverse"
        >
            <path d="M0,0 L10,5 L0,10 z"></path>
        </marker>
    }
}

/// The traffic line as the server and the browser render it.
#[cfg(all(test, feature = "ssr"))]
mod traffic_tests {
    use super::*;
    use crate::dto::{EdgeTrafficView, LastCallView, ReasonCode, TrafficOutcome};

    fn render(traffic: EdgeTraffic) -> String {
        let owner = Owner::new();
        owner.with(|| {
            let ctx = CanvasCtx::new();
            provide_context(ctx);
            let edge = "a->b:c";
            let cell = ctx.traffic.cell(edge);
            cell.set(traffic);
            let flag = Memo::new(|_| false);
            let place = LinePlace {
                active: flag,
                lifted: flag,
                pos: Memo::new(|_| Some(Point { x: 10.0, y: 20.0 })),
            };
            view! { <TrafficLine edge=edge.to_string() place/> }.to_html()
        })
    }

    #[test]
    fn the_line_says_only_what_the_hub_counted() {
        let unknown = render(EdgeTraffic::Unknown);
        assert!(unknown.contains(r#"data-state="unknown""#), "{unknown}");
        assert!(!unknown.contains("data-calls"), "{unknown}");
        let quiet = render(EdgeTraffic::Quiet);
        assert!(quiet.contains(r#"data-calls="0""#), "{quiet}");
        assert!(quiet.contains("no traffic"), "{quiet}");
        let seen = render(EdgeTraffic::Known(EdgeTrafficView {
            edge: "a->b:c".into(),
            window_secs: 60,
            calls: 12,
            failures: 1,
            last: Some(LastCallView {
                at: "2026-01-02T10:11:12Z".into(),
                outcome: TrafficOutcome::NotConnected,
                reason: Some(ReasonCode::Timeout),
                duration_ms: 2000,
            }),
        }));
        for want in [
            r#"data-state="seen""#,
            r#"data-calls="12""#,
            r#"data-failures="1""#,
            r#"data-last-outcome="not_connected""#,
            r#"data-last-reason="TIMEOUT""#,
            "traffic-dot failed",
            "12/min · 1 failed",
            "edge-traffic failing",
        ] {
            assert!(seen.contains(want), "{want} in {seen}");
        }
    }
}
