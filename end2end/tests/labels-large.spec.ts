// Edge labels on a large graph (app/src/canvas/graph/placement.rs): the
// canvas benchmark's 501 nodes and 1,000 edges (end2end/bench/large-graph.mjs,
// the same generator the bench uses), on a hub of this spec's own (port
// WS_LARGE_PORT, default 3310; a temporary directory; its own UI user), not
// the demo stack. After fit-to-view, at 50, 100 and 200 %, and at 100 %
// panned to a second spot: no two drawn labels overlap (each label with its
// traffic line under it), none lies under the toolbar or the minimap, and
// every drawn label shows its capability whole or cut ("…"), its full id in
// its `title`.
import { test, expect, type BrowserContext, type Page } from "@playwright/test";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { REPO, Box, boxOf, overlap, watchErrors, zoomTo, nextFrames } from "./support";
// Plain ESM JavaScript shared with the bench (no type declarations).
// @ts-ignore
import * as largeGraph from "../bench/large-graph.mjs";

type Started = { hub: unknown; base: string; username: string; password: string; topo: { nodes: number; edges: number }; log: string };
const graph = largeGraph as {
  startHub(o: { hubBin: string; site: string; port: number; dir: string; cwd: string; username: string }): Promise<Started>;
  stopHub(hub: unknown): Promise<void>;
  login(request: unknown, base: string, username: string, password: string): Promise<unknown>;
};

// A copy of the build can be checked instead (WS_LARGE_HUB, WS_LARGE_SITE),
// as the bench measures one (WS_BENCH_HUB, WS_BENCH_SITE).
const HUB_BIN = process.env.WS_LARGE_HUB ?? path.join(process.env.CARGO_TARGET_DIR ?? path.join(REPO, "target"), "release", "hub");
const SITE = process.env.WS_LARGE_SITE ?? path.join(REPO, "target", "site");
const PORT = Number(process.env.WS_LARGE_PORT ?? 3310);
const BASE = `http://127.0.0.1:${PORT}`;

/** One label as the page draws it, with its traffic line. */
type Seen = {
  /** The edge's id (from the label's test id). */
  edge: string;
  /** `data-label`: whole, short or none. */
  label: string | null;
  title: string | null;
  /** The label's own text (an observed label's reason code left out). */
  text: string;
  /** Styled to show: not `display: none`, not `visibility: hidden`. */
  shown: boolean;
  /** Not drawn by the placement (`unplaced`, clipped to nothing). */
  unplaced: boolean;
  /** Hidden under a control (`under-control`). */
  covered: boolean;
  box: Box;
  /** Its traffic line's box, when that is shown. */
  line: Box | null;
};

/** Every edge label on the canvas (established and observed) and every
 * traffic line that is shown. */
async function labels(page: Page): Promise<{ seen: Seen[]; lines: { edge: string; box: Box }[] }> {
  return page.evaluate(() => {
    const box = (el: Element) => {
      const r = el.getBoundingClientRect();
      return { x: r.x, y: r.y, w: r.width, h: r.height };
    };
    const shown = (el: Element) => {
      const s = getComputedStyle(el);
      const r = el.getBoundingClientRect();
      return s.display !== "none" && s.visibility !== "hidden" && r.width > 0 && r.height > 0;
    };
    const lines = [...document.querySelectorAll(".edge-traffic")]
      .filter(shown)
      .map((el) => ({ edge: (el.getAttribute("data-testid") ?? "").replace(/^traffic-/, ""), box: box(el) }));
    const seen = [...document.querySelectorAll(".label-layer .edge-label, .label-layer .observed-label")].map((el) => {
      const edge = (el.getAttribute("data-testid") ?? "").replace(/^(edge|observed)-/, "");
      const text = [...el.childNodes]
        .filter((n) => n.nodeType === Node.TEXT_NODE)
        .map((n) => n.textContent ?? "")
        .join("")
        .trim();
      const line = document.querySelector(`[data-testid="traffic-${CSS.escape(edge)}"]`);
      return {
        edge,
        label: el.getAttribute("data-label"),
        title: el.getAttribute("title"),
        text,
        shown: shown(el),
        unplaced: el.classList.contains("unplaced"),
        covered: el.classList.contains("under-control"),
        box: box(el),
        line: line && shown(line) ? box(line) : null,
      };
    });
    return { seen, lines };
  });
}


const fmt = (b: Box) => `{x ${b.x.toFixed(1)}, y ${b.y.toFixed(1)}, w ${b.w.toFixed(1)}, h ${b.h.toFixed(1)}}`;

/** At most `n` problems in full, then how many more. */
function listed(problems: string[], n = 25): string {
  const head = problems.slice(0, n).join("\n");
  return problems.length > n ? `${head}\n… and ${problems.length - n} more` : head;
}


/** Checks the labels as drawn now; `where` names the view in messages.
 * Returns the edges whose labels are drawn on screen, and the counts. */
async function check(page: Page, where: string) {
  const { seen, lines } = await labels(page);
  const area = await boxOf(page, "section.canvas");
  if (!area) throw new Error("no canvas");
  expect(seen.length, `${where}: labels in the page`).toBeGreaterThan(0);

  // Every label, drawn or not: its full id in its title; `unplaced` is
  // exactly the labels the placement left out.
  const wording: string[] = [];
  for (const s of seen) {
    const capability = s.edge.slice(s.edge.lastIndexOf(":") + 1);
    if (!(s.title ?? "").startsWith(`${capability} · `)) wording.push(`${s.edge}: title ${JSON.stringify(s.title)}`);
    if (!["whole", "short", "none"].includes(s.label ?? "")) wording.push(`${s.edge}: data-label ${JSON.stringify(s.label)}`);
    if (s.unplaced !== (s.label === "none")) wording.push(`${s.edge}: data-label ${s.label} but unplaced ${s.unplaced}`);
  }

  // Drawn on screen: shown, placed, not under a control, in the canvas
  // (the label or its traffic line: one may lie past the canvas's edge).
  const onScreen = (s: Seen) => overlap(s.box, area) || (s.line !== null && overlap(s.line, area));
  const drawn = seen.filter((s) => s.shown && !s.unplaced && !s.covered && onScreen(s));
  expect(drawn.length, `${where}: labels drawn on screen`).toBeGreaterThan(0);
  let whole = 0;
  let short = 0;
  for (const s of drawn) {
    const capability = s.edge.slice(s.edge.lastIndexOf(":") + 1);
    if (s.label === "whole") {
      whole++;
      if (s.text !== capability) wording.push(`${s.edge}: whole, but reads ${JSON.stringify(s.text)}`);
    } else if (s.label === "short") {
      short++;
      const prefix = s.text.slice(0, -1);
      if (!s.text.endsWith("…") || !prefix.length || !capability.startsWith(prefix) || prefix.length >= capability.length) {
        wording.push(`${s.edge}: short, but reads ${JSON.stringify(s.text)}`);
      }
    } else wording.push(`${s.edge}: drawn with data-label ${JSON.stringify(s.label)}`);
  }
  expect(wording, `${where}: labels' text and title\n${listed(wording)}`).toEqual([]);

  // Each drawn label with its traffic line; a traffic line shown without
  // its label drawn is one of its own (and wrong: it follows its label).
  const drawnIds = new Set(drawn.map((s) => s.edge));
  const units = drawn.map((s) => ({ edge: s.edge, boxes: s.line ? [s.box, s.line] : [s.box] }));
  const orphans = lines.filter((l) => !drawnIds.has(l.edge) && overlap(l.box, area));
  for (const l of orphans) units.push({ edge: `traffic line of ${l.edge}`, boxes: [l.box] });
  const byEdge = new Map(seen.map((s) => [s.edge, s]));
  expect(
    orphans.map((l) => {
      const s = byEdge.get(l.edge);
      const label = s
        ? `its label ${s.label}, shown ${s.shown}, unplaced ${s.unplaced}, under-control ${s.covered}, ${fmt(s.box)}`
        : "no label";
      return `${l.edge}: line ${fmt(l.box)}; ${label}`;
    }),
    `${where}: traffic lines shown without their label drawn`,
  ).toEqual([]);

  // No two of them overlap (a sweep along x over every box).
  const all = units.flatMap((u, i) => u.boxes.map((b) => ({ unit: i, b })));
  all.sort((p, q) => p.b.x - q.b.x);
  const overlaps: string[] = [];
  for (let i = 0; i < all.length; i++) {
    for (let j = i + 1; j < all.length && all[j].b.x < all[i].b.x + all[i].b.w; j++) {
      const [p, q] = [all[i], all[j]];
      if (p.unit !== q.unit && overlap(p.b, q.b)) {
        overlaps.push(`${units[p.unit].edge} ${fmt(p.b)} overlaps ${units[q.unit].edge} ${fmt(q.b)}`);
      }
    }
  }
  expect(overlaps, `${where}: ${overlaps.length} overlapping pairs of boxes\n${listed(overlaps)}`).toEqual([]);

  // None under the toolbar or the minimap.
  const toolbar = await boxOf(page, ".toolbar");
  const minimap = await boxOf(page, '[data-testid="minimap"]');
  expect(toolbar, "the toolbar").not.toBeNull();
  const under: string[] = [];
  for (const [name, c] of [["toolbar", toolbar], ["minimap", minimap]] as const) {
    if (!c) continue;
    for (const u of units) for (const b of u.boxes) if (overlap(b, c)) under.push(`${u.edge} ${fmt(b)} under the ${name} ${fmt(c)}`);
  }
  expect(under, `${where}: labels under a control\n${listed(under)}`).toEqual([]);

  const counts = {
    inPage: seen.length,
    drawn: drawn.length,
    whole,
    short,
    trafficLines: units.reduce((n, u) => n + u.boxes.length - 1, 0),
    unplaced: seen.filter((s) => s.unplaced).length,
    underControl: seen.filter((s) => s.covered).length,
    minimap: minimap !== null,
  };
  const summary = `${where}: ${JSON.stringify(counts)}`;
  console.log(summary);
  test.info().annotations.push({ type: "labels", description: summary });
  return { drawn: drawnIds, counts };
}

/** A point of the canvas's lower right quarter (clear of the minimap)
 * with nothing drawn under it: a pan up and left starts there. */
async function emptyPoint(page: Page) {
  return page.evaluate(() => {
    const vp = document.querySelector(".viewport");
    if (!vp) return null;
    const r = vp.getBoundingClientRect();
    for (let y = r.top + r.height / 2; y < r.bottom - 40; y += 17) {
      for (let x = r.left + r.width / 2; x < r.right - 260; x += 19) {
        if (document.elementFromPoint(x, y) === vp) return { x, y };
      }
    }
    return null;
  });
}

/** Fit to view, then the toolbar's steps to `percent`. */
async function fitAndZoom(page: Page, percent: number) {
  await page.getByTestId("fit-view").click();
  await expect(page.getByTestId("zoom-level")).not.toHaveText("100%");
  await zoomTo(page, percent);
  // The labels under a control are found on the frame after a camera
  // change; one more frame draws what that changed.
  await nextFrames(page);
  await nextFrames(page);
}

test.describe.configure({ mode: "serial" });

let dir = "";
let started: Started | null = null;
let context: BrowserContext | null = null;
let page: Page;
let errors: string[] = [];
const drawnAt100 = new Set<string>();

test.beforeAll(async ({ browser }) => {
  test.skip(!fs.existsSync(HUB_BIN) || !fs.existsSync(path.join(SITE, "pkg")), `needs the release build: ${HUB_BIN} and ${SITE}/pkg`);
  test.setTimeout(120_000);
  // Another server on the port would answer in the hub's stead.
  const taken = await fetch(`${BASE}/login`).then(
    () => true,
    () => false,
  );
  if (taken) throw new Error(`${BASE} already answers: free port ${PORT} or set WS_LARGE_PORT`);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-labels-large-"));
  try {
    started = await graph.startHub({ hubBin: HUB_BIN, site: SITE, port: PORT, dir, cwd: REPO, username: "labels" });
  } catch (e) {
    const log = path.join(dir, "hub.log");
    const tail = fs.existsSync(log) ? fs.readFileSync(log, "utf8").split("\n").slice(-30).join("\n") : "";
    throw new Error(`${e}\n${tail}`);
  }
  // Should the worker end before afterAll runs, the hub goes with it.
  const hub = started.hub as { exitCode: number | null; signalCode: string | null; kill(s: string): boolean };
  process.once("exit", () => {
    if (hub.exitCode === null && hub.signalCode === null) hub.kill("SIGKILL");
  });
  expect(started.topo).toMatchObject({ nodes: 501, edges: 1000 });
  // The hub names the site's files as its build baked them in: a hub
  // compiled without scripts/cargo-env's LEPTOS_* (a bare `cargo build` in
  // the shared target dir) asks for files the site does not have, and
  // the canvas never hydrates. Say so rather than time out.
  const html = await (await fetch(`${BASE}/login`)).text();
  const assets = [...html.matchAll(/\/pkg\/([\w.-]+\.(?:wasm|js|css))/g)].map((m) => m[1]);
  expect(assets.length, "the page loads the site's files").toBeGreaterThan(0);
  const missing = assets.filter((f) => !fs.existsSync(path.join(SITE, "pkg", f)));
  expect(missing, `${HUB_BIN} asks for files ${SITE}/pkg lacks: hub and site are from different builds (scripts/build)`).toEqual([]);
  context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  await graph.login(context.request, BASE, started.username, started.password);
  page = await context.newPage();
  errors = watchErrors(page);
  await page.goto(`${BASE}/`);
  await expect(page.getByRole("region", { name: "Ecosystem canvas" })).toHaveAttribute("data-hydrated", "true", { timeout: 60_000 });
  await expect(page.getByTestId("live-status")).toHaveAttribute("data-state", "live", { timeout: 30_000 });
  // The hub's traffic counts read (the traffic lines "no traffic", drawn).
  await expect
    .poll(() => page.locator(".edge-traffic:not([data-state=unknown])").count(), { timeout: 30_000 })
    .toBeGreaterThan(0);
  const served = await (await context.request.get(`${BASE}/api/topology`)).json();
  expect(served.nodes.length, "the hub serves the generated graph").toBe(501);
  expect(served.edges.length, "the hub serves the generated graph").toBe(1000);
});

test.afterAll(async () => {
  try {
    await context?.close();
  } finally {
    await graph.stopHub(started?.hub);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }
});

for (const percent of [50, 100, 200]) {
  test(`on 1,000 edges, labels lie apart, clear of the controls, whole or cut, at ${percent}% after fit`, async () => {
    await fitAndZoom(page, percent);
    const { drawn } = await check(page, `${percent}% after fit`);
    if (percent === 100) for (const id of drawn) drawnAt100.add(id);
    expect(errors, errors.join("\n")).toEqual([]);
  });
}

test("on 1,000 edges, labels lie apart at 100% panned to another part of the graph", async () => {
  await fitAndZoom(page, 100);
  const before = await page.getByTestId("world").evaluate((el) => getComputedStyle(el).transform);
  const from = await emptyPoint(page);
  if (!from) throw new Error("no empty spot of the canvas to pan from");
  // Drag the world up and left by half a screen, staying in the canvas:
  // what lay below and to the right of the fitted centre comes into view.
  await page.mouse.move(from.x, from.y);
  await page.mouse.down();
  await page.mouse.move(from.x - 200, from.y - 120, { steps: 5 });
  await page.mouse.move(from.x - 640, from.y - 380, { steps: 10 });
  await page.mouse.up();
  await nextFrames(page);
  await nextFrames(page);
  await expect(page.getByTestId("zoom-level")).toHaveText("100%");
  const after = await page.getByTestId("world").evaluate((el) => getComputedStyle(el).transform);
  expect(after, "the pan moved the world").not.toBe(before);
  const { drawn } = await check(page, "100% panned");
  const fresh = [...drawn].filter((id) => !drawnAt100.has(id));
  expect(fresh.length, "labels not on screen before the pan").toBeGreaterThan(0);
  expect(errors, errors.join("\n")).toEqual([]);
});
