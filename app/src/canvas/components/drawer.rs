//! The side drawer: everything the registry says about one node or edge.
//!
//! Non-modal: the canvas stays usable while it is open; Escape or the close
//! button closes it and gives focus back to what it describes.
//!
//! An edge's drawer shows its metrics and envelope inspector, a system's
//! its metrics over every edge it is part of (DESIGN.md §6, metrics on the
//! canvas): both kept fresh by the traffic events naming those edges. An
//! observed edge's drawer (traffic without an established edge) shows the
//! same metrics and inspector, but no query or consult form: those call
//! along an established edge.

use leptos::prelude::*;

use super::audit::AuditSection;
use super::contract::ContractPanel;
use super::inspector::InspectorSection;
use super::interpret::InterpretSection;
use super::membership::{CredentialSection, MembershipSection};
use super::metrics::MetricsSection;
use super::panels::{ConsultPanel, QueryPanel};
use crate::canvas::commands;
use crate::canvas::commands::edges::{open_chooser, remove_edge};
use crate::canvas::commands::traffic::Refresher;
use crate::canvas::health::Health;
use crate::canvas::interaction::SceneCtx;
use crate::canvas::labels::{kind_label, node_kind_label};
use crate::canvas::observed;
use crate::canvas::state::{CanvasCtx, Selection};
use crate::dto::{
    CapabilityKind, CapabilityRef, EdgeView, InspectorView, MetricsView, NodeKind, NodeView,
};
use crate::parts::Prefetch;
use crate::routes;

/// What a drawer describes: the selection, resolved against the drawn
/// scene.
pub(crate) enum Subject {
    Node(NodeView),
    Edge(EdgeView),
    Observed(EdgeView),
}

/// The drawer of the current selection (nothing when none). Its body is a
/// part of the bundle loaded on first use ([`drawer_part`]).
#[component]
pub(crate) fn Drawer() -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let scene = expect_context::<SceneCtx>();
    move || {
        let subject = match ctx.selection.get()? {
            Selection::Node(id) => Subject::Node(scene.model.nodes.get(&id).cloned()?),
            Selection::Edge(id) => match scene.model.edges.iter().find(|e| e.id == id) {
                Some(edge) => Subject::Edge(edge.clone()),
                // Untracked: the observed edges change with every traffic
                // event, and the open drawer must not be rebuilt by them.
                None => Subject::Observed(
                    ctx.traffic
                        .observed
                        .with_untracked(|set| observed::drawable(set, &scene.view))
                        .into_iter()
                        .find(|e| e.id == id)?,
                ),
            },
        };
        Some(Suspend::new(async move { drawer_part(subject).await }))
    }
}

/// Starts fetching the drawer's part ([`crate::parts`]): the pointer is
/// over the map, or the keyboard's focus in it.
pub(crate) fn prefetch_drawer() {
    static DRAWER: Prefetch = Prefetch::new();
    DRAWER.once(|| {
        let _ = lazy_preload!(drawer_part);
    });
}

/// The drawer's body: loaded with the first drawer opened (or sooner,
/// [`prefetch_drawer`]).
#[lazy]
pub(crate) fn drawer_part(subject: Subject) -> AnyView {
    match subject {
        Subject::Node(node) => view! { <NodeDrawer node/> }.into_any(),
        Subject::Edge(edge) => view! { <EdgeDrawer edge/> }.into_any(),
        Subject::Observed(edge) => view! { <ObservedDrawer edge/> }.into_any(),
    }
}

/// The frame every drawer shares: heading, close button, body.
#[component]
fn DrawerFrame(eyebrow: String, title: String, children: Children) -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    view! {
        <aside
            class="drawer"
            data-testid="drawer"
            role="dialog"
            aria-modal="false"
            aria-labelledby="drawer-title"
        >
            <header class="drawer-head">
                <div>
                    <p class="eyebrow">{eyebrow}</p>
                    <h2 id="drawer-title">{title}</h2>
                </div>
                <button
                    type="button"
                    class="drawer-close"
                    data-testid="drawer-close"
                    aria-label="Close details"
                    on:click=move |_| commands::drawer::close(ctx)
                >
                    "×"
                </button>
            </header>
            <div class="drawer-body">{children()}</div>
        </aside>
    }
}

/// Status, reason, detail and since of a node or edge.
#[component]
fn HealthSection(health: Memo<Health>) -> impl IntoView {
    let row = move |label: &'static str, value: Option<String>| {
        value.map(|v| view! { <dt>{label}</dt><dd>{v}</dd> })
    };
    view! {
        <section class="drawer-section" aria-label="Health">
            <h3>"Health"</h3>
            {move || {
                let h = health.get();
                view! {
                    <dl>
                        <dt>"Status"</dt>
                        <dd>
                            <span class=format!("status-badge {}", h.word())>{h.word()}</span>
                        </dd>
                        {row("Reason", h.reason.map(|r| r.as_str().to_string()))}
                        {row("Detail", h.detail.clone())}
                        {row("Since", h.since.clone())}
                    </dl>
                }
            }}
        </section>
    }
}

/// A list of capabilities with their kinds.
fn capability_list(title: &'static str, caps: Vec<CapabilityRef>) -> impl IntoView {
    view! {
        <section class="drawer-section">
            <h3>{title}</h3>
            {if caps.is_empty() {
                view! { <p class="muted">"None."</p> }.into_any()
            } else {
                view! {
                    <ul class="cap-list">
                        {caps
                            .into_iter()
                            .map(|c| {
                                let kind = kind_label(c.kind);
                                view! {
                                    <li>
                                        <code>{c.id}</code>
                                        <span class=format!("kind-chip {kind}")>{kind}</span>
                                    </li>
                                }
                            })
                            .collect_view()}
                    </ul>
                }
                    .into_any()
            }}
        </section>
    }
}

/// The agents or datasources of a system.
fn member_list(title: &'static str, members: Vec<NodeView>) -> impl IntoView {
    view! {
        <section class="drawer-section">
            <h3>{title}</h3>
            {if members.is_empty() {
                view! { <p class="muted">"None."</p> }.into_any()
            } else {
                view! {
                    <ul class="member-list">
                        {members
                            .into_iter()
                            .map(|m| {
                                view! {
                                    <li>
                                        <strong>{m.name}</strong>
                                        {(!m.description.is_empty())
                                            .then(|| view! { <span class="muted">{m.description}</span> })}
                                    </li>
                                }
                            })
                            .collect_view()}
                    </ul>
                }
                    .into_any()
            }}
        </section>
    }
}

/// What a node is: system, agent, datasource or the hub.
#[component]
fn NodeDrawer(node: NodeView) -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let scene = expect_context::<SceneCtx>();
    let root = scene.model.root_of(&node.id).to_string();
    let health = {
        let scene = scene.clone();
        let root = root.clone();
        Memo::new(move |_| scene.system_health(&ctx, &root).0)
    };
    let kind = node_kind_label(node.node_type);
    let card_state = node.card_signature.as_str();
    let members = |kind: NodeKind| -> Vec<NodeView> {
        scene
            .model
            .children
            .get(&node.id)
            .map(|ids| {
                ids.iter()
                    .filter_map(|id| scene.model.nodes.get(id))
                    .filter(|n| n.node_type == kind)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    };
    let body = match node.node_type {
        NodeKind::System => view! {
            <section class="drawer-section" aria-label="Agent card">
                <h3>"Agent card"</h3>
                <dl>
                    <dt>"Signature"</dt>
                    <dd data-testid="card-signature" data-state=card_state>
                        {node.card_signature.word()}
                    </dd>
                </dl>
            </section>
            {capability_list("Provides", node.provides.clone())}
            {capability_list("Consumes", node.consumes.clone())}
            {member_list("Agents", members(NodeKind::Agent))}
            {member_list("Datasources", members(NodeKind::Datasource))}
            {
                let (id, may_edit, may_rotate) = (
                    node.id.clone(),
                    crate::session::can(crate::routes::ApiRoute::RemoveSystem),
                    crate::session::can(crate::routes::ApiRoute::RotateCredential),
                );
                let id2 = id.clone();
                view! {
                    {move || may_edit.get().then(|| view! { <MembershipSection system=id.clone()/> })}
                    {move || may_rotate.get().then(|| view! { <CredentialSection system=id2.clone()/> })}
                }
            }
        }
        .into_any(),
        NodeKind::Agent | NodeKind::Datasource => view! {
            <section class="drawer-section">
                <h3>"Part of"</h3>
                <p>{scene.name(&root)}</p>
            </section>
        }
        .into_any(),
        NodeKind::Hub => view! {
            <section class="drawer-section">
                <p class="muted">
                    "The exchange itself: it enforces the connection rules on every call and is never probed."
                </p>
            </section>
        }
        .into_any(),
    };
    let description = (!node.description.is_empty())
        .then(|| view! { <p class="drawer-description">{node.description.clone()}</p> });
    let connect = matches!(node.node_type, NodeKind::System | NodeKind::Hub).then(|| {
        let (scene, id) = (scene.clone(), node.id.clone());
        view! {
            <div class="drawer-actions">
                <button
                    type="button"
                    data-testid="drawer-connect"
                    aria-keyshortcuts="c"
                    on:click=move |_| open_chooser(ctx, &scene, &id)
                >
                    "Connect…"
                </button>
            </div>
        }
    });
    // Offered only with a model tier: otherwise not in the page at all.
    let interpret = {
        let id = node.id.clone();
        let offered = Memo::new(move |_| ctx.agents.offered.with(|a| a.interpreter));
        move || {
            offered
                .get()
                .then(|| view! { <InterpretSection node=id.clone()/> })
        }
    };
    // A system's (and the hub's) metrics over every edge it is part of.
    let metrics = matches!(node.node_type, NodeKind::System | NodeKind::Hub).then(|| {
        let loader = Refresher::<MetricsView>::new(routes::node_metrics(&node.id));
        let edges = scene
            .model
            .edges
            .iter()
            .filter(|e| {
                scene.model.root_of(&e.consumer) == root || scene.model.root_of(&e.provider) == root
            })
            .map(|e| e.id.clone())
            .collect();
        loader.follow(ctx, edges);
        view! { <MetricsSection loader scope="this system"/> }
    });
    view! {
        <DrawerFrame eyebrow=kind.to_string() title=node.name.clone()>
            {description}
            {connect}
            <HealthSection health/>
            {metrics}
            {interpret}
            {body}
            <AuditSection system=root.clone()/>
        </DrawerFrame>
    }
    .into_any()
}

/// What a connection is, its query or consult, its data contracts, and
/// its removal.
#[component]
fn EdgeDrawer(edge: EdgeView) -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let scene = expect_context::<SceneCtx>();
    let health = {
        let (scene, edge) = (scene.clone(), edge.clone());
        Memo::new(move |_| scene.edge_health(&ctx, &edge))
    };
    let kind = kind_label(edge.kind);
    let capability = scene.view.capability(&edge.capability).cloned();
    let panel = match edge.kind {
        CapabilityKind::DataShare => view! {
            <QueryPanel edge=edge.clone()/>
            <ContractPanel edge=edge.clone()/>
        }
        .into_any(),
        CapabilityKind::Consult => view! { <ConsultPanel edge=edge.clone()/> }.into_any(),
        CapabilityKind::Negotiation => view! { <ContractPanel edge=edge.clone()/> }.into_any(),
        // A task is started by its consumer (A2A), not from the drawer:
        // its drawer shows what crossed the edge (metrics, inspector).
        CapabilityKind::Task => ().into_any(),
    };
    let metrics = Refresher::<MetricsView>::new(routes::edge_metrics(&edge.id));
    metrics.follow(ctx, vec![edge.id.clone()]);
    let inspector = Refresher::<InspectorView>::new(routes::edge_inspector(&edge.id));
    inspector.follow(ctx, vec![edge.id.clone()]);
    let remove = {
        let (scene, edge) = (scene.clone(), edge.clone());
        move |_| remove_edge(ctx, &scene, &edge)
    };
    view! {
        <DrawerFrame eyebrow=format!("{kind} connection") title=edge.capability.clone()>
            <section class="drawer-section">
                <dl>
                    <dt>"Consumer"</dt>
                    <dd>{scene.name(&edge.consumer)}</dd>
                    <dt>"Provider"</dt>
                    <dd>{scene.name(&edge.provider)}</dd>
                    <dt>"Kind"</dt>
                    <dd>
                        <span class=format!("kind-chip {kind}")>{kind}</span>
                    </dd>
                    {capability
                        .as_ref()
                        .map(|c| view! { <dt>"Deadline"</dt><dd>{format!("{} ms", c.deadline_ms)}</dd> })}
                </dl>
                {capability
                    .filter(|c| !c.description.is_empty())
                    .map(|c| view! { <p class="drawer-description">{c.description}</p> })}
            </section>
            <HealthSection health/>
            {panel}
            <MetricsSection loader=metrics scope="this connection"/>
            <InspectorSection loader=inspector/>
            <div class="drawer-actions danger">
                <button
                    type="button"
                    class="danger"
                    data-testid="edge-remove"
                    aria-keyshortcuts="Delete"
                    on:click=remove
                >
                    "Remove connection"
                </button>
            </div>
        </DrawerFrame>
    }
}

/// An observed edge: who called whom for what, its health, metrics and
/// envelope inspector. No query or consult form and no removal: there is
/// no established connection to call along or remove.
#[component]
fn ObservedDrawer(edge: EdgeView) -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let scene = expect_context::<SceneCtx>();
    let health = {
        let (scene, edge) = (scene.clone(), edge.clone());
        Memo::new(move |_| scene.edge_health(&ctx, &edge))
    };
    let kind = kind_label(edge.kind);
    let deadline = scene
        .view
        .capability(&edge.capability)
        .map(|c| c.deadline_ms);
    let metrics = Refresher::<MetricsView>::new(routes::edge_metrics(&edge.id));
    metrics.follow(ctx, vec![edge.id.clone()]);
    let inspector = Refresher::<InspectorView>::new(routes::edge_inspector(&edge.id));
    inspector.follow(ctx, vec![edge.id.clone()]);
    view! {
        <DrawerFrame eyebrow=format!("observed {kind} traffic") title=edge.capability.clone()>
            <section class="drawer-section">
                <dl>
                    <dt>"Consumer"</dt>
                    <dd>{scene.name(&edge.consumer)}</dd>
                    <dt>"Provider"</dt>
                    <dd>{scene.name(&edge.provider)}</dd>
                    <dt>"Kind"</dt>
                    <dd>
                        <span class=format!("kind-chip {kind}")>{kind}</span>
                    </dd>
                    {deadline.map(|ms| view! { <dt>"Deadline"</dt><dd>{format!("{ms} ms")}</dd> })}
                </dl>
                <p class="drawer-description" data-testid="observed-note">
                    "Observed: calls that crossed the hub in the last minute, answered or refused, with no established connection drawn for them. It fades once a minute passes without calls. Queries and questions from this drawer need an established connection."
                </p>
            </section>
            <HealthSection health/>
            <MetricsSection loader=metrics scope="these calls"/>
            <InspectorSection loader=inspector/>
        </DrawerFrame>
    }
}

/// A node's drawer as the server renders it: the interpreter's entry is
/// there only when the hub offers it.
#[cfg(all(test, feature = "ssr"))]
mod render_tests {
    use super::*;
    use crate::dto::{AgentsView, TopologyView};

    fn render(offered: AgentsView) -> String {
        // The scene's selectors spawn their futures: give them somewhere to
        // run (already set by another test is fine).
        let _ = any_spawner::Executor::init_futures_executor();
        let owner = Owner::new();
        owner.with(|| {
            let ctx = CanvasCtx::new();
            ctx.agents.offered.set(offered);
            ctx.selection
                .set(Some(Selection::Node("vendorcorp".into())));
            provide_context(ctx);
            let view = TopologyView {
                hub_id: "hub".into(),
                nodes: vec![
                    NodeView::healthy("hub", "Wall Street hub", NodeKind::Hub, None),
                    NodeView::healthy("vendorcorp", "VendorCorp", NodeKind::System, None),
                ],
                edges: vec![],
                rules: vec![],
                capabilities: vec![],
                reload_error: None,
                positions: vec![],
                layout: vec![],
                digest: String::new(),
            };
            provide_context(SceneCtx::new(ctx, view, 0));
            view! { <Drawer/> }.to_html()
        })
    }

    #[test]
    fn the_interpreter_is_offered_only_with_a_tier() {
        let without = render(AgentsView {
            recommender: true,
            recommender_model: false,
            interpreter: false,
        });
        assert!(without.contains("VendorCorp"), "{without}");
        assert!(!without.contains(r#"data-testid="interpret""#), "{without}");
        let with = render(AgentsView {
            recommender: true,
            recommender_model: true,
            interpreter: true,
        });
        assert!(with.contains(r#"data-testid="interpret""#), "{with}");
    }
}
