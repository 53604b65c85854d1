//! The minimap: an overview of the whole graph and of the part on screen,
//! shown only once the graph no longer fits the canvas. Pressing it pans
//! the view there.

use leptos::ev::PointerEvent;
use leptos::prelude::*;

use crate::canvas::css;
use crate::canvas::graph::{Point, Rect, ROOT_W};
use crate::canvas::interaction::SceneCtx;
use crate::canvas::state::CanvasCtx;

/// Width of the minimap on screen; its height follows the graph's shape.
const MAP_W: f64 = 200.0;
/// The tallest the minimap is drawn (labels keep clear of that much,
/// `components::cover`).
pub(crate) const MAP_MAX_H: f64 = 150.0;

/// The minimap (browser only: it needs the canvas's size).
#[component]
pub(crate) fn Minimap() -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let scene = expect_context::<SceneCtx>();
    let area = Memo::new(move |_| {
        let size = ctx.viewport.get()?;
        let bounds = ctx.bounds.get()?;
        let camera = ctx.camera.get();
        if !camera.overflows(bounds, size) {
            return None;
        }
        let visible = camera.visible(size);
        let all = bounds.union(visible);
        let pad = 40.0;
        Some((
            Rect {
                x: all.x - pad,
                y: all.y - pad,
                w: all.w + 2.0 * pad,
                h: all.h + 2.0 * pad,
            },
            visible,
        ))
    });
    // Drawn once when it appears; a pan or a drag only moves attributes
    // (recreating a hundred blocks per frame would cost every frame).
    let blocks = {
        let scene = scene.clone();
        move || {
            scene
                .model
                .roots
                .iter()
                .map(|id| {
                    let h = scene.model.block_height(id);
                    let pos = {
                        let (id, positions) = (id.clone(), scene.positions);
                        Memo::new(move |_| {
                            positions.with(|p| p.get(&id).copied().unwrap_or_default())
                        })
                    };
                    view! {
                        <rect
                            class="minimap-node"
                            x=move || css::whole(pos.get().x)
                            y=move || css::whole(pos.get().y)
                            width=format!("{ROOT_W}")
                            height=format!("{h:.0}")
                            rx="8"
                        ></rect>
                    }
                })
                .collect_view()
        }
    };
    let on_down = move |ev: PointerEvent| {
        ev.stop_propagation();
        let (Some((vb, _)), Some(size)) = (area.get_untracked(), ctx.viewport.get_untracked())
        else {
            return;
        };
        let Some(el) = ev
            .current_target()
            .and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(t).ok())
        else {
            return;
        };
        let r = el.get_bounding_client_rect();
        if r.width() <= 0.0 || r.height() <= 0.0 {
            return;
        }
        // preserveAspectRatio="xMidYMid meet": one scale, content centred.
        let s = (r.width() / vb.w).min(r.height() / vb.h);
        let (ox, oy) = ((r.width() - vb.w * s) / 2.0, (r.height() - vb.h * s) / 2.0);
        let p = Point {
            x: vb.x + (f64::from(ev.client_x()) - r.left() - ox) / s,
            y: vb.y + (f64::from(ev.client_y()) - r.top() - oy) / s,
        };
        ctx.camera.update(|c| *c = c.centred_on(p, size));
    };
    let shown = Memo::new(move |_| area.with(Option::is_some));
    let vb = move || area.get().map(|(vb, _)| vb).unwrap_or_default();
    let visible = move || area.get().map(|(_, v)| v).unwrap_or_default();
    view! {
        <Show when=move || shown.get()>
            <svg
                class="minimap"
                data-testid="minimap"
                role="img"
                aria-label="Overview of the whole canvas"
                width=format!("{MAP_W}")
                height=move || {
                    let vb = vb();
                    format!("{:.0}", (MAP_W * vb.h / vb.w.max(1.0)).clamp(40.0, MAP_MAX_H))
                }
                viewBox=move || {
                    let vb = vb();
                    format!("{:.0} {:.0} {:.0} {:.0}", vb.x, vb.y, vb.w, vb.h)
                }
                preserveAspectRatio="xMidYMid meet"
                on:pointerdown=on_down
            >
                {blocks.clone()}
                <rect
                    class="minimap-view"
                    x=move || css::whole(visible().x)
                    y=move || css::whole(visible().y)
                    width=move || css::whole(visible().w)
                    height=move || css::whole(visible().h)
                ></rect>
            </svg>
        </Show>
    }
}
