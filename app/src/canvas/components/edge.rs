//! Edges: a connection `consumer → provider` for one capability, drawn as
//! an SVG path under the nodes and a labelled button above them.
//!
//! The label is the edge's focusable, clickable handle (a real `<button>`,
//! so keyboard and screen readers get it for free); the path answers
//! clicks too. Both light up together when either is focused or hovered.
//! Delete on a focused label removes the edge. The arrowheads the lines
//! end in are here too.
//!
//! Where a label sits and how much of its capability it shows is the
//! placement's (`crate::canvas::graph`'s `placement`, run with the
//! routes): whole, cut (its prefix and "…"), or not drawn; the full id is
//! always in its `title` and its accessible name, and `data-label` says
//! which (`whole`, `short`, `none`). A label not drawn stays a button,
//! clipped to nothing (class `unplaced`) until it has keyboard focus, so
//! Tab and screen readers still reach the edge. A label whose box lies
//! under one of the canvas's controls is hidden (`under-control`, see
//! `components::cover`).
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
use crate::canvas::graph::{LabelText, Placed, Point, TRAFFIC_OFFSET};
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

/// The classes a label or its traffic line adds for its placement: not
/// drawn (`unplaced`), under a control (`under-control`).
pub(crate) fn placed_class(class: &mut String, placed: Option<&Placed>, covered: bool) {
    if placed.is_some_and(|p| p.text == LabelText::Hidden) {
        class.push_str(" unplaced");
    }
    if covered {
        class.push_str(" under-control");
    }
}

/// The transform putting a label's centre at `pos` (far away without one).
pub(crate) fn label_transform(pos: Option<Point>) -> String {
    pos.map_or_else(
        || "translate(-9999px, -9999px)".to_string(),
        |p| css::translate(p, " translate(-50%, -50%)"),
    )
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
    /// The label's placement (it stays put while the edge is lifted:
    /// moving it would repaint the big layer it is hidden in).
    placed: Memo<Option<Placed>>,
    /// Whether its box lies under one of the canvas's controls.
    covered: Signal<bool>,
}

impl LabelPlace {
    /// Where the label's traffic line goes.
    pub(crate) fn line(&self) -> LinePlace {
        LinePlace {
            active: self.st.active,
            lifted: self.lifted,
            placed: self.placed,
            covered: self.covered,
        }
    }
}

/// Where a traffic line is drawn (just below its label's centre, as wide
/// as its label's box allows), whether it is drawn at all, and whether its
/// edge is lit or lifted: an established edge's ([`LabelPlace::line`]) or
/// an observed edge's.
#[derive(Clone, Copy)]
pub(crate) struct LinePlace {
    pub(crate) active: Memo<bool>,
    pub(crate) lifted: Memo<bool>,
    pub(crate) placed: Memo<Option<Placed>>,
    pub(crate) covered: Signal<bool>,
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
    let placed = {
        let geom = scene.edge_geom.get(index).copied();
        Memo::new(move |prev: Option<&Option<Placed>>| match prev {
            Some(prev) if lifted.get() => prev.clone(),
            _ => geom.and_then(|g| g.with(|g| g.as_ref().map(|g| g.label.clone()))),
        })
    };
    let covered = scene
        .covered
        .get(index)
        .copied()
        .map_or_else(|| Signal::stored(false), Signal::from);
    LabelPlace {
        st,
        lifted,
        placed,
        covered,
    }
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
    let LabelPlace {
        st,
        lifted,
        placed,
        covered,
    } = place;
    let transform = move || label_transform(placed.with(|p| p.as_ref().map(|p| p.centre)));
    let text = Memo::new(move |_| {
        placed.with(|p| p.as_ref().map_or(LabelText::Whole, |p| p.text.clone()))
    });
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
    // The full id always: hovering a cut label reads it whole.
    let title = {
        let capability = edge.capability.clone();
        move || {
            let h = st.health.get();
            if h.is_degraded() {
                format!("{capability} · {kind} · {}", h.badge())
            } else {
                format!("{capability} · {kind}")
            }
        }
    };
    let class = {
        let edge = edge.clone();
        move || {
            let mut c = edge_class("edge-label", &edge, st);
            if lifted.get() {
                c.push_str(" lifted");
            }
            placed.with(|p| placed_class(&mut c, p.as_ref(), covered.get()));
            c
        }
    };
    let shown = {
        let capability = edge.capability.clone();
        move || text.with(|t| t.shown(&capability).to_string())
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
            data-label=move || text.with(LabelText::word)
            style:transform=transform
            on:pointerdown=|ev: PointerEvent| ev.stop_propagation()
            on:click=move |_| open(ctx, &id_click)
            on:keydown=on_key
            on:focus=move |_| ctx.highlight.set(Some(id_focus.clone()))
            on:blur=move |_| ctx.highlight.set(None)
            on:pointerenter=move |_| ctx.highlight.set(Some(id_enter.clone()))
            on:pointerleave=move |_| ctx.highlight.set(None)
        >
            {shown}
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
/// Its text fits the label's box (`traffic::traffic_text_within`): the
/// placement counted the box with the line in it. Not drawn when its
/// label is not, or lies under a control.
///
/// Kept cheap for a thousand edges: one text node (and the dot) per edge,
/// and four reactive reads: the cell (a change re-renders the line, which
/// happens only for the edges an event names), the placement, the lit or
/// lifted state and the controls' cover. Far out there are none (see
/// `crate::canvas::cull`).
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
        placed,
        covered,
    } = place;
    // How many characters the line may take (its label's box).
    let cells =
        Memo::new(move |_| placed.with(|p| p.as_ref().map_or(usize::MAX, |p| p.line_cells)));
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
            placed.with(|p| placed_class(&mut c, p.as_ref(), covered.get()));
            c
        };
        let transform = move || {
            placed.with(|p| {
                p.as_ref().map_or_else(
                    || "translate(-9999px, -9999px)".to_string(),
                    |p| {
                        css::translate(
                            Point {
                                x: p.centre.x,
                                y: p.centre.y + TRAFFIC_OFFSET,
                            },
                            " translate(-50%, 0)",
                        )
                    },
                )
            })
        };
        let text = match &traffic {
            EdgeTraffic::Unknown => None,
            EdgeTraffic::Quiet => Some("no traffic".to_string()),
            EdgeTraffic::Known(t) => Some(traffic::traffic_text_within(t, cells.get())),
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
    use crate::canvas::graph::{PathShape, Spot};
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
            let at = Point { x: 10.0, y: 20.0 };
            let shape = PathShape::Arc {
                start: at,
                control: at,
                end: at,
            };
            let place = LinePlace {
                active: flag,
                lifted: flag,
                placed: Memo::new(move |_| {
                    Some(Placed {
                        line_cells: 40,
                        ..Placed::unplaced(shape, Spot::Curve(0.5))
                    })
                }),
                covered: Signal::stored(false),
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

/// A label as the server renders it: its placed text, its full id.
#[cfg(all(test, feature = "ssr"))]
mod label_tests {
    use super::*;
    use crate::canvas::graph::tests::demo;
    use crate::canvas::interaction::SceneCtx;
    use crate::dto::{edge_id, NodeKind};

    /// BuyerCorp consumes `capability` from VendorCorp, nothing else drawn.
    fn render(capability: &str) -> String {
        // The scene's selectors spawn their futures: give them somewhere to
        // run (already set by another test is fine).
        let _ = any_spawner::Executor::init_futures_executor();
        let mut view = demo();
        view.nodes
            .retain(|n| matches!(n.node_type, NodeKind::Hub | NodeKind::System));
        view.edges
            .retain(|e| e.id == "buyercorp->vendorcorp:orders.query");
        for e in &mut view.edges {
            e.capability = capability.into();
            e.id = edge_id(&e.consumer, &e.provider, capability);
        }
        let owner = Owner::new();
        owner.with(|| {
            let ctx = CanvasCtx::new();
            provide_context(ctx);
            let scene = SceneCtx::new(ctx, view, 0);
            provide_context(scene.clone());
            let Some(edge) = scene.model.edges.first().cloned() else {
                panic!("one edge");
            };
            let place = label_place(ctx, &scene, &edge, 0);
            view! { <EdgeLabel edge place/> }.to_html()
        })
    }

    #[test]
    fn a_label_shows_what_fits_and_keeps_its_full_id_in_its_title() {
        let whole = render("orders.query");
        assert!(whole.contains(r#"data-label="whole""#), "{whole}");
        assert!(
            whole.contains(r#"title="orders.query · data-share""#),
            "{whole}"
        );
        assert!(whole.contains(">orders.query<"), "{whole}");
        let long = "a.capability.identifier.long.enough.to.be.cut.on.this.canvas";
        let cut = render(long);
        assert!(cut.contains(r#"data-label="short""#), "{cut}");
        assert!(
            cut.contains(&format!(r#"title="{long} · data-share""#)),
            "{cut}"
        );
        assert!(cut.contains(&format!("consumes {long} from")), "{cut}");
        let text = cut
            .split("\">")
            .last()
            .and_then(|t| t.split('<').next())
            .unwrap_or_default();
        assert!(text.ends_with('…'), "{text} in {cut}");
        assert!(long.starts_with(text.trim_end_matches('…')), "{text}");
        assert!(!cut.contains("unplaced"), "{cut}");
    }
}
