// The server's layered layout, as the canvas draws it against the real
// stack: a system onboarded from the canvas is placed by the layout, its
// block (card and children) clear of every other block, and fit-to-view
// shows every card; a system dragged by hand stays where it was left,
// after a reload and after another system joins (the layout places the
// newcomer around it), while systems nobody dragged may move.
//
// Positions are compared in world pixels (the node group's translate,
// support.ts `rootPosition`). Each test onboards Logistics (the reference
// peer, `peer serve`, started here on a port of its own) and removes it
// again; a position dragged here is put back through the positions API.
import { ChildProcess } from "child_process";
import * as fs from "fs";
import * as path from "path";
import type { Page } from "@playwright/test";
import {
  test,
  expect,
  Api,
  NodePosition,
  STATE,
  TopologyView,
  canvas,
  cardHead,
  credential,
  drag,
  openCanvas,
  rootPosition,
  watchErrors,
  PEER,
  logisticsConfig,
  startLogistics,
  stopPeer,
} from "./support";

/** Not onboarding.spec's 3104: the two never share a process. */
const LISTEN = "127.0.0.1:3105";
const TOPOLOGY = path.join(STATE, "topology.yaml");
const NEWCOMER = "logistics";

/** A card's width and one column's step of the layout
 * (`app/src/canvas/graph/layout.rs`: `ROOT_W`, `ROOT_W + COL_GAP`). */
const ROOT_W = 240;
const COLUMN = 240 + 300;

/** What `GET /api/topology` answers, with the server's layout. */
type LaidOut = TopologyView & { layout?: NodePosition[] };

/** A box on the screen. */
type Box = { x: number; y: number; w: number; h: number };

/** The view with its layout. */
async function laidOut(api: Api): Promise<LaidOut> {
  return (await api.topology()) as LaidOut;
}

/** The root ids of a view: the hub and the systems. */
function roots(view: TopologyView): string[] {
  return view.nodes.filter((n) => n.node_type === "hub" || n.node_type === "system").map((n) => n.id);
}

/** Where the view's layout puts `id`. */
function spot(view: LaidOut, id: string): { x: number; y: number } {
  const p = (view.layout ?? []).find((l) => l.node === id);
  if (!p) throw new Error(`the layout has no place for ${id}: ${JSON.stringify(view.layout)}`);
  return { x: p.x, y: p.y };
}

/** Onboards the server at LISTEN from the canvas's "Add a system" panel,
 * with the agent and the datasource its topology section names
 * (config/peers/logistics.topology.yaml: a card lists neither), so its
 * block is a card with children like the others; closes the panel once
 * the hub has drawn it. */
async function onboardFromCanvas(page: Page) {
  await page.getByTestId("onboard-open").click();
  await page.getByTestId("onboard-url").fill(`http://${LISTEN}`);
  await page.getByTestId("onboard-read").click();
  await expect(page.getByTestId("onboard-system")).toHaveText(NEWCOMER);
  const section = page.getByTestId("onboard-section");
  const proposed = await section.inputValue();
  const edited = proposed.replace(
    /^  node_type: system\n/m,
    "  node_type: system\n" +
      "  agents:\n    - { id: dispatcher, name: Dispatcher }\n" +
      "  datasources:\n    - { id: shipments-db, name: Shipments (CSV) }\n",
  );
  expect(edited).not.toEqual(proposed);
  await section.fill(edited);
  await page.getByTestId("onboard-save").click();
  await expect(page.getByTestId("onboard-token")).toHaveText(/^\s*[0-9a-f]{64}\s*$/);
  await expect(page.getByTestId(`node-${NEWCOMER}`)).toBeVisible();
  await expect(page.getByTestId(`node-${NEWCOMER}/agent/dispatcher`)).toBeVisible();
  await expect(page.getByTestId(`node-${NEWCOMER}/datasource/shipments-db`)).toBeVisible();
  await page.getByTestId("onboard-close").click();
  await expect(page.locator("#onboard-panel")).toHaveCount(0);
}

/** Takes the newcomer out of the topology file again, if it is in
 * (`DELETE /api/systems/{id}` against the file's digest, as its drawer does). */
async function removeNewcomer(api: Api) {
  const view = await api.topology();
  if (!view.nodes.some((n) => n.id === NEWCOMER)) return;
  const res = await api.request.delete(`/api/systems/${NEWCOMER}`, {
    data: { base: view.digest },
    headers: { "X-CSRF-Token": api.csrf },
  });
  expect(res.status(), await res.text()).toBe(200);
}

/** Every root's block on the screen: its card and its children together
 * (`parts`: how many elements that took). */
async function blocks(page: Page, ids: string[]): Promise<Record<string, Box & { parts: number }>> {
  return page.evaluate((ids) => {
    const out: Record<string, { x: number; y: number; w: number; h: number; parts: number }> = {};
    for (const id of ids) {
      const parts = [
        document.querySelector(`[data-testid="node-${CSS.escape(id)}"]`),
        ...Array.from(document.querySelectorAll(`[data-testid^="node-${CSS.escape(id)}/"]`)),
      ].filter((el): el is Element => el !== null);
      if (parts.length === 0) continue;
      const rects = parts.map((el) => el.getBoundingClientRect());
      const x = Math.min(...rects.map((r) => r.left));
      const y = Math.min(...rects.map((r) => r.top));
      out[id] = {
        x,
        y,
        w: Math.max(...rects.map((r) => r.right)) - x,
        h: Math.max(...rects.map((r) => r.bottom)) - y,
        parts: parts.length,
      };
    }
    return out;
  }, ids);
}

/** Do two boxes share more than an edge (half a pixel of rounding left)? */
function overlap(a: Box, b: Box): boolean {
  const e = 0.5;
  return a.x + e < b.x + b.w && b.x + e < a.x + a.w && a.y + e < b.y + b.h && b.y + e < a.y + a.h;
}

/** Asserts that `id`'s block overlaps no other root's block. */
async function expectClear(page: Page, view: TopologyView, id: string) {
  const ids = roots(view);
  const drawn = await blocks(page, ids);
  expect(Object.keys(drawn).sort()).toEqual([...ids].sort());
  // A block is its card and every child the view hangs under it.
  for (const root of ids) {
    const children = view.nodes.filter((n) => n.system === root && n.node_type !== "system" && n.node_type !== "hub");
    expect(drawn[root].parts, root).toBe(1 + children.length);
  }
  expect(drawn[id].parts).toBeGreaterThan(1);
  for (const other of ids.filter((o) => o !== id)) {
    expect(overlap(drawn[id], drawn[other]), `${id} ${JSON.stringify(drawn[id])} overlaps ${other} ${JSON.stringify(drawn[other])}`).toBe(false);
  }
}

/** Asserts that every root is drawn where the view's layout puts it. */
async function expectDrawnAsLaidOut(page: Page, view: LaidOut) {
  for (const id of roots(view)) {
    expect(await rootPosition(page, id), id).toEqual(spot(view, id));
  }
}

test.beforeAll(() => {
  test.skip(!STATE || !fs.existsSync(PEER) || !fs.existsSync(TOPOLOGY), `needs the stack of scripts/test and ${PEER}`);
});

test("a system onboarded from the canvas is placed by the layout, clear of every other block, and fit shows every card", async ({ page, api }) => {
  test.setTimeout(60_000);
  const errors = watchErrors(page);
  const fileBefore = fs.readFileSync(TOPOLOGY, "utf8");
  const peer = await startLogistics(logisticsConfig(LISTEN, "logistics-layout"), LISTEN, "not-a-member-yet");
  try {
    await openCanvas(page);
    await expect(page.getByTestId(`node-${NEWCOMER}`)).toHaveCount(0);
    await onboardFromCanvas(page);

    // The hub lays it out with the rest: the canvas draws it (and every
    // other root) where the server's layout says, its block apart.
    const view = await laidOut(api);
    expect(roots(view)).toContain(NEWCOMER);
    expect((view.layout ?? []).map((l) => l.node).sort()).toEqual(roots(view).sort());
    await expectDrawnAsLaidOut(page, view);
    await expectClear(page, view, NEWCOMER);

    // Fit to view: every card whole on the screen, the newcomer's too.
    await page.getByTestId("fit-view").click();
    for (const id of roots(view)) {
      await expect(page.getByTestId(`node-${id}`), id).toBeInViewport({ ratio: 0.99 });
    }

    // A reload draws the same.
    await page.reload();
    await expect(canvas(page)).toHaveAttribute("data-hydrated", "true");
    await expectDrawnAsLaidOut(page, view);

    // Removed from its drawer, the file is as it was.
    await page.getByTestId(`node-${NEWCOMER}`).click();
    await page.getByTestId("remove-system").click();
    await page.getByTestId("remove-system-confirm").click();
    await expect(page.getByTestId(`node-${NEWCOMER}`)).toHaveCount(0);
    expect(fs.readFileSync(TOPOLOGY, "utf8")).toBe(fileBefore);
    expect(errors, errors.join("\n")).toEqual([]);
  } finally {
    await removeNewcomer(api);
    await stopPeer(peer);
  }
});

test("a system dragged by hand stays where it was left, after a reload and after another system joins", async ({ page, api }) => {
  test.setTimeout(60_000);
  const errors = watchErrors(page);
  // At 100 % (a screen pixel is a world pixel), on a screen wide enough
  // for one more column.
  await page.setViewportSize({ width: 1600, height: 900 });
  const user = credential().username;
  await page.addInitScript((u) => localStorage.setItem(`wall-street.view.${u}`, "48.0 64.0 1.0000"), user);
  const DRAGGED = "helpdesk";
  const kept = (await api.topology()).positions.find((p) => p.node === DRAGGED);
  let peer: ChildProcess | undefined;
  let home: { x: number; y: number } | undefined;
  try {
    await openCanvas(page);
    await expect(page.getByTestId("zoom-level")).toHaveText("100%");
    const before = await laidOut(api);
    home = await rootPosition(page, DRAGGED);
    expect(home).toEqual(spot(before, DRAGGED));

    // Dragged to the top of the column right of the rightmost: where the
    // layout starts a column for a system with no connection, such as the
    // one joining below, so the layout has to place that one around it.
    const xs = roots(before).map((id) => spot(before, id).x);
    const ys = roots(before).map((id) => spot(before, id).y);
    const target = { x: Math.max(...xs) + COLUMN, y: Math.min(...ys) };
    const from = await cardHead(page, DRAGGED);
    await drag(page, from, { x: from.x + target.x - home.x, y: from.y + target.y - home.y });
    await expect(page.getByTestId("drawer")).toHaveCount(0);
    const left = await rootPosition(page, DRAGGED);
    expect(left).toEqual(target);
    await expect
      .poll(async () => (await api.topology()).positions.find((p) => p.node === DRAGGED))
      .toEqual({ node: DRAGGED, ...left });

    // After a reload: where it was left, and the layout says so too.
    await page.reload();
    await expect(canvas(page)).toHaveAttribute("data-hydrated", "true");
    expect(await rootPosition(page, DRAGGED)).toEqual(left);
    expect(spot(await laidOut(api), DRAGGED)).toEqual(left);

    // Another system joins: the dragged one does not move, on this page
    // or after a reload; the newcomer is laid out clear of it (and of
    // everyone else); the systems nobody dragged are where the layout now
    // puts them, wherever that is.
    peer = await startLogistics(logisticsConfig(LISTEN, "logistics-layout"), LISTEN, "not-a-member-yet");
    await onboardFromCanvas(page);
    const joined = await laidOut(api);
    expect(spot(joined, DRAGGED)).toEqual(left);
    expect(joined.positions.find((p) => p.node === DRAGGED)).toEqual({ node: DRAGGED, ...left });
    expect(await rootPosition(page, DRAGGED)).toEqual(left);
    await expectDrawnAsLaidOut(page, joined);
    await expectClear(page, joined, NEWCOMER);
    await expectClear(page, joined, DRAGGED);
    // It was laid out in the dragged one's column (so keeping clear of it
    // was something the layout had to do, not luck).
    const newcomer = spot(joined, NEWCOMER);
    expect(Math.abs(newcomer.x - left.x), `${NEWCOMER} at ${JSON.stringify(newcomer)}, ${DRAGGED} at ${JSON.stringify(left)}`).toBeLessThan(ROOT_W);

    await page.reload();
    await expect(canvas(page)).toHaveAttribute("data-hydrated", "true");
    expect(await rootPosition(page, DRAGGED)).toEqual(left);
    await expectDrawnAsLaidOut(page, joined);
    await expectClear(page, joined, NEWCOMER);
    expect(errors, errors.join("\n")).toEqual([]);
  } finally {
    await removeNewcomer(api);
    await stopPeer(peer);
    // Put it back for the other tests: where it was kept, else where the
    // layout had it.
    const back = kept ?? (home ? { node: DRAGGED, ...home } : undefined);
    if (back) await api.savePositions([back]);
  }
});
