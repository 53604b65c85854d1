#!/usr/bin/env node
// Canvas benchmark (DESIGN.md §6, the canvas): a generated
// topology of 500 nodes and 1,000 edges, served by a real hub on its own
// port and database, measured in headless Chromium with the Performance
// API, side by side with React Flow 12 on the same graph in the same sitting
// (the anchor in ../shared/bench/reactflow, React Flow's defaults). Prints
// figures and one table; asserts nothing.
//
//   scripts/bench-canvas [--runs N] [--reactflow DIR | --no-reactflow] [--trace DIR]
//
// --runs N         N rounds, ours then React Flow's in each; the table
//                  shows medians (default 1).
// --reactflow DIR  the React Flow anchor (default ../shared/bench/reactflow
//                  when it exists). It is copied to a cache directory under
//                  the system's temp dir, `npm ci` and `node build.mjs` run
//                  there once per version of the anchor; nothing of it
//                  enters this repository.
// --trace DIR      also record a Chromium performance trace (CDP tracing,
//                  devtools.timeline) of each phase of our canvas into DIR,
//                  with a summary of where the main thread's time went
//                  (end2end/bench/trace-summary.mjs).
//
// Environment: WS_BENCH_PORT (default 3300), CHROMIUM_PATH, WS_BENCH_KEEP=1
// to keep the temporary directory (topology, database, hub log),
// WS_BENCH_HUB and WS_BENCH_SITE to measure a copy of the hub binary and of
// target/site (a build elsewhere on the machine cannot change it mid-run).
//
// The topology (large-graph.mjs, shared with tests/labels-large.spec.ts):
// 100 systems, each with 2 agents and 2 datasources (500 nodes with them,
// plus the hub), each providing one capability (data-share and consult
// alternating) to its 10 successors, and `initial_edges` establishing all
// 1,000 of those connections. No peer runs: every system is degraded
// (PEER_UNREACHABLE), which is what a big, partly broken ecosystem looks
// like, and what the canvas must keep drawing smoothly.
import { chromium } from "@playwright/test";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as zlib from "node:zlib";
import * as crypto from "node:crypto";
import { summarize } from "./trace-summary.mjs";
import { SYSTEMS, startHub, stopHub, login } from "./large-graph.mjs";
import { fileURLToPath } from "node:url";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const TARGET = process.env.CARGO_TARGET_DIR ?? path.join(REPO, "target");
// A copy of the build can be measured instead (WS_BENCH_HUB, WS_BENCH_SITE):
// target/ is shared by every build on the machine, and a build that starts
// mid-run rewrites the site under the benchmark's feet.
const HUB_BIN = process.env.WS_BENCH_HUB ?? path.join(TARGET, "release", "hub");
const SITE = process.env.WS_BENCH_SITE ?? path.join(REPO, "target", "site");
const PORT = Number(process.env.WS_BENCH_PORT ?? 3300);
const BASE = `http://127.0.0.1:${PORT}`;
function stats(deltas) {
  const d = [...deltas].sort((a, b) => a - b);
  const q = (p) => (d.length ? d[Math.min(d.length - 1, Math.floor(p * d.length))] : NaN);
  return {
    frames: d.length,
    p50: q(0.5),
    p95: q(0.95),
    max: d.length ? d[d.length - 1] : NaN,
    over50ms: d.filter((x) => x > 50).length,
  };
}

const fmt = (x) => (Number.isFinite(x) ? `${x.toFixed(1)} ms` : "n/a");
const kib = (n) => `${(n / 1024).toFixed(0)} KiB`;

/** Starts sampling requestAnimationFrame deltas (and long tasks) in the page. */
async function startFrames(page) {
  await page.evaluate(() => {
    const w = window;
    w.__frames = [];
    w.__long = [];
    w.__sampling = true;
    w.__obs?.disconnect();
    try {
      w.__obs = new PerformanceObserver((list) => {
        for (const e of list.getEntries()) w.__long.push(e.duration);
      });
      w.__obs.observe({ type: "longtask" });
    } catch {
      /* no long task API */
    }
    let last = 0;
    const tick = (t) => {
      if (last) w.__frames.push(t - last);
      last = t;
      if (w.__sampling) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
}

async function stopFrames(page) {
  return page.evaluate(() => {
    const w = window;
    w.__sampling = false;
    w.__obs?.disconnect();
    return { frames: w.__frames, long: w.__long };
  });
}

/** A point of the canvas with nothing drawn under it (for panning). */
async function emptyPoint(page) {
  return page.evaluate(() => {
    const vp = document.querySelector(".viewport");
    if (!vp) return null;
    const r = vp.getBoundingClientRect();
    for (let y = r.top + r.height - 10; y > r.top + 10; y -= 23) {
      for (let x = r.left + 10; x < r.right - 220; x += 29) {
        if (document.elementFromPoint(x, y) === vp) return { x, y };
      }
    }
    return null;
  });
}

/** Moves the mouse in `steps` single events, one after the other, each
 * awaited until the page has handled it and painted a frame; returns the
 * mean time per step (input → handled → next frame). */
async function sweep(page, from, dx, dy, steps) {
  await page.mouse.move(from.x, from.y);
  await page.mouse.down();
  const t0 = Date.now();
  for (let i = 1; i <= steps; i++) {
    const t = i / steps;
    // There and back, so the view ends where it started.
    const k = t < 0.5 ? t * 2 : (1 - t) * 2;
    await page.mouse.move(from.x + dx * k, from.y + dy * k);
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r(null))));
  }
  const perStep = (Date.now() - t0) / steps;
  await page.mouse.up();
  return perStep;
}

/** The command line: --runs N, --reactflow DIR, --no-reactflow, --trace DIR. */
function options(argv) {
  const o = { runs: 1, reactflow: path.resolve(REPO, "..", "shared", "bench", "reactflow"), trace: null, anchorAsked: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === "--runs") o.runs = Math.max(1, Number(value()) || 1);
    else if (a === "--reactflow") {
      o.reactflow = path.resolve(value());
      o.anchorAsked = true;
    } else if (a === "--no-reactflow") o.reactflow = null;
    else if (a === "--trace") o.trace = path.resolve(value());
    else throw new Error(`unknown option ${a} (see the header of end2end/bench/canvas-bench.mjs)`);
  }
  if (o.reactflow && !fs.existsSync(path.join(o.reactflow, "run.mjs"))) {
    if (o.anchorAsked) throw new Error(`${o.reactflow} is not the React Flow anchor (no run.mjs)`);
    o.reactflow = null;
  }
  return o;
}

/** A working copy of the React Flow anchor, installed and built: under the
 * temp dir, keyed by the anchor's files (never inside this repository). */
function prepareReactFlow(src) {
  const h = crypto.createHash("sha256");
  const walk = (d) => {
    for (const f of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (["node_modules", "dist", "results.jsonl"].includes(f.name)) continue;
      const p = path.join(d, f.name);
      if (f.isDirectory()) walk(p);
      else h.update(f.name).update(fs.readFileSync(p));
    }
  };
  walk(src);
  const dir = path.join(os.tmpdir(), `ws-bench-reactflow-${h.digest("hex").slice(0, 12)}`);
  if (!fs.existsSync(path.join(dir, "dist", "app.js"))) {
    console.error(`[bench] preparing the React Flow anchor in ${dir} (npm ci, node build.mjs)`);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.cpSync(src, dir, { recursive: true, filter: (p) => !/\/(node_modules|dist)(\/|$)/.test(p) });
    const env = { ...process.env, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: "1" };
    execFileSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: dir, env, stdio: ["ignore", "ignore", "inherit"] });
    execFileSync("node", ["build.mjs"], { cwd: dir, env, stdio: ["ignore", "ignore", "inherit"] });
  }
  return dir;
}

/** One run of the anchor (React Flow's defaults): its JSON figures. */
function runReactFlow(dir) {
  const out = execFileSync("node", ["run.mjs", ""], { cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], timeout: 600_000 });
  const line = out.split("\n").find((l) => l.startsWith("{"));
  if (!line) throw new Error(`the React Flow anchor printed no figures:\n${out}`);
  const r = JSON.parse(line);
  const v = r.variants[0];
  if (v.errors?.length) console.error(`[bench] React Flow page errors: ${v.errors.join("; ")}`);
  return { ...v, bundle: r.bundle };
}

const round = (x) => (Number.isFinite(x) ? Math.round(x * 10) / 10 : null);

function figures(r) {
  const s = stats(r.frames);
  return {
    frames: s.frames,
    p50: round(s.p50),
    p95: round(s.p95),
    max: round(s.max),
    over50ms: s.over50ms,
    longTasks: r.long.length,
    longTaskMs: round(r.long.reduce((a, b) => a + b, 0)),
    stepMs: round(r.step),
  };
}

/** Records a Chromium trace of `phase` while `body` runs, when asked. */
async function traced(trace, browser, page, phase, body) {
  if (!trace) return body();
  const file = path.join(trace.dir, `${trace.run}-${phase}.json`);
  await browser.startTracing(page, {
    path: file,
    categories: [
      "devtools.timeline",
      "disabled-by-default-devtools.timeline",
      "disabled-by-default-devtools.timeline.frame",
      "blink.user_timing",
      "v8.execute",
      "cc",
      "gpu",
    ],
  });
  try {
    return await body();
  } finally {
    await browser.stopTracing();
    trace.summaries.push(`  trace ${phase} (${file}):\n${summarize(file)}`);
  }
}

/** Clicks the toolbar's zoom buttons until the zoom level reads `pct` %
 * (the steps include 50, 100 and 200). */
async function zoomTo(page, pct) {
  for (let i = 0; i < 12; i++) {
    const now = Number((await page.getByTestId("zoom-level").textContent()).replace("%", ""));
    if (now === pct) return;
    await page.getByTestId(now < pct ? "zoom-in" : "zoom-out").click();
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r(null))));
  }
  throw new Error(`could not zoom to ${pct} %`);
}

/** In the page: the drawn edge labels and traffic lines (a box of their
 * own, visible), the pairs of them that overlap, those under a control,
 * and how many are whole, shortened (their title holds the full text) or
 * shortened without it. */
function labelFigures() {
  const visible = (el) => {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) return null;
    const cs = getComputedStyle(el);
    if (cs.visibility === "hidden" || cs.display === "none") return null;
    return r;
  };
  const canvas = document.querySelector("[aria-label='Ecosystem canvas']").getBoundingClientRect();
  const boxes = [];
  let whole = 0, short = 0, untitled = 0;
  for (const el of document.querySelectorAll(".edge-label, .observed-label, .edge-traffic")) {
    // A label the placement found no room for is clipped to nothing (its
    // full text stays in its title and accessible name): not drawn.
    if (el.classList.contains("unplaced")) continue;
    const r = visible(el);
    if (!r || r.right < canvas.left || r.left > canvas.right || r.bottom < canvas.top || r.top > canvas.bottom) continue;
    boxes.push(r);
    if (el.classList.contains("edge-traffic")) continue;
    const text = el.textContent ?? "";
    if (text.includes("…")) {
      short++;
      const title = el.getAttribute("title") ?? el.getAttribute("aria-label") ?? "";
      if (!title.replace(/…/g, "").length || title.includes("…")) untitled++;
    } else whole++;
  }
  const hit = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  let pairs = 0;
  const sorted = boxes.slice().sort((a, b) => a.left - b.left);
  for (let i = 0; i < sorted.length; i++) {
    for (let j = i + 1; j < sorted.length && sorted[j].left < sorted[i].right; j++) {
      if (hit(sorted[i], sorted[j])) pairs++;
    }
  }
  const controls = [...document.querySelectorAll(".toolbar, .minimap, .drawer")].map(visible).filter(Boolean);
  const under = boxes.filter((b) => controls.some((c) => hit(b, c))).length;
  return { drawn: boxes.length, overlappingPairs: pairs, underAControl: under, whole, short, untitled };
}

/** One run of our canvas in a browser of its own: figures shaped like
 * the anchor's (run.mjs), so the two print side by side. */
async function measureOurs(password, trace) {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run", "--disable-quic"],
  });
  try {
    const context = await browser.newContext({ baseURL: BASE, viewport: { width: 1440, height: 900 } });
    await login(context.request, BASE, "bench", password);
    const served = await (await context.request.get("/api/topology")).json();

    // The view the anchor opens at (React Flow's defaultViewport {48, 64, 1}),
    // kept as this person's own: so both sides start on the same part of the
    // graph. A new person's fitted first view is measured apart (firstView).
    await context.addInitScript(() => localStorage.setItem("wall-street.view.bench", "48.0 64.0 1.0000"));
    const page = await context.newPage();
    const fetched = [];
    page.on("request", (r) => {
      const u = new URL(r.url());
      if (u.pathname.startsWith("/pkg/")) fetched.push({ file: u.pathname.slice(5), at: Date.now() });
    });
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e.message ?? e)));
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(m.text());
    });
    await page.addInitScript(() => {
      const w = window;
      const seen = () => {
        const el = document.querySelector('[aria-label="Ecosystem canvas"]');
        if (el && el.getAttribute("data-hydrated") === "true" && w.__hydratedAt === undefined) {
          w.__hydratedAt = performance.now();
          return true;
        }
        return false;
      };
      new MutationObserver((_, obs) => {
        if (seen()) obs.disconnect();
      }).observe(document, { attributes: true, subtree: true, attributeFilter: ["data-hydrated"] });
    });
    const load = await traced(trace, browser, page, "load", async () => {
      await page.goto("/", { waitUntil: "commit" });
      await page.waitForFunction(() => window.__hydratedAt !== undefined, null, { timeout: 120_000 });
      return page.evaluate(() => {
        const nav = performance.getEntriesByType("navigation")[0];
        const fcp = performance.getEntriesByName("first-contentful-paint")[0];
        const wasm = performance.getEntriesByType("resource").find((r) => r.name.endsWith(".wasm"));
        return {
          htmlBytes: nav?.transferSize ?? 0,
          responseEnd: nav?.responseEnd ?? NaN,
          domContentLoaded: nav?.domContentLoadedEventEnd ?? NaN,
          fcp: fcp?.startTime ?? NaN,
          wasmFetched: wasm?.responseEnd ?? NaN,
          hydrated: window.__hydratedAt,
          domNodes: document.getElementsByTagName("*").length,
          nodes: document.querySelectorAll("[data-testid^='node-']").length,
          edges: document.querySelectorAll("svg.edge-layer g.edge").length,
        };
      });
    });
    // What the first load fetched from /pkg/ (the wasm's main part, its
    // JS, the stylesheet; the parts loaded on first use are not in it).
    const firstLoadFiles = [...new Set(fetched.map((f) => f.file))];
    // Let the first live events land before measuring interaction.
    await page.waitForTimeout(1500);
    const settled = await page.evaluate(() => ({
      domNodes: document.getElementsByTagName("*").length,
      nodes: document.querySelectorAll("[data-testid^='node-']").length,
      edges: document.querySelectorAll("svg.edge-layer g.edge").length,
    }));
    // The drawn cards' capability chips: whole, cut by their row (or
    // inside), and how many capabilities a "+N" chip counts instead.
    const chips = await page.evaluate(() => {
      const out = { whole: 0, cut: 0, counted: 0 };
      for (const row of document.querySelectorAll(".node-card .cap-row")) {
        const r = row.getBoundingClientRect();
        for (const el of row.querySelectorAll(".cap")) {
          const e = el.getBoundingClientRect();
          if (e.right > r.right + 0.5 || el.scrollWidth > el.clientWidth) out.cut++;
          else if (el.classList.contains("more")) out.counted += Number(el.getAttribute("data-hidden") ?? 0);
          else out.whole++;
        }
      }
      return out;
    });

    const start = await emptyPoint(page);
    if (!start) throw new Error("no empty spot to pan from");
    const pan = await traced(trace, browser, page, "pan", async () => {
      await startFrames(page);
      const step = await sweep(page, start, 600, -300, 120);
      return { ...(await stopFrames(page)), step };
    });

    // Drag the first system card that is fully on screen (its 20 edges follow).
    const card = await page.evaluate(() => {
      for (const el of document.querySelectorAll(".node-card[data-node-type=system]")) {
        const r = el.getBoundingClientRect();
        if (r.left > 20 && r.top > 80 && r.right < innerWidth - 420 && r.bottom < innerHeight - 40) {
          return { x: r.left + 40, y: r.top + 14, id: el.getAttribute("data-testid") };
        }
      }
      return null;
    });
    if (!card) throw new Error("no node card on screen to drag");
    const root = card.id.replace(/^node-/, "");
    const edgesOfCard = served.edges.filter((e) => e.consumer === root || e.provider === root).length;
    const drag = await traced(trace, browser, page, "drag", async () => {
      await startFrames(page);
      const step = await sweep(page, card, 300, 200, 120);
      return { ...(await stopFrames(page)), step };
    });

    // Zoom out to see everything (timed as the anchor times it: click →
    // the second frame after it), then pan the whole graph.
    const fit = await traced(trace, browser, page, "fit", async () => {
      const t0 = Date.now();
      await page.getByTestId("fit-view").click();
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(null)))));
      const took = Date.now() - t0;
      const zoom = await page.evaluate(() => {
        const m = new DOMMatrixReadOnly(getComputedStyle(document.querySelector("[data-testid=world]")).transform);
        return m.a;
      });
      return { clickToSecondFrameMs: took, zoomAtSecondFrame: Math.round(zoom * 1000) / 1000 };
    });
    await page.waitForTimeout(1500);
    const fitted = await page.evaluate(() => {
      let onScreen = 0;
      // Cards close up, blocks far out (see app/src/canvas/cull.rs).
      for (const el of document.querySelectorAll(".node-card, .far-block")) {
        const r = el.getBoundingClientRect();
        // Hidden ones (the close-up cards while far out) have no box.
        if (r.width > 0 && r.left >= 0 && r.top >= 0 && r.right <= innerWidth && r.bottom <= innerHeight) onScreen++;
      }
      return {
        cardsOnScreen: onScreen,
        domNodes: document.getElementsByTagName("*").length,
        nodes: document.querySelectorAll("[data-testid^='node-']").length,
        edges: document.querySelectorAll("svg.edge-layer g.edge").length,
      };
    });
    const start2 = (await emptyPoint(page)) ?? start;
    const panAll = await traced(trace, browser, page, "pan-fitted", async () => {
      await startFrames(page);
      const step = await sweep(page, start2, 400, 200, 120);
      return { ...(await stopFrames(page)), step };
    });
    // Edge labels after fit, zoomed to 50 %, 100 % and 200 % around the
    // centre: pairs of drawn labels (and traffic lines) whose boxes
    // overlap, labels under a control (toolbar, minimap), and how they are
    // drawn (whole, shortened with the full text in their title).
    const labels = {};
    for (const pct of [50, 100, 200]) {
      await page.getByTestId("fit-view").click();
      await zoomTo(page, pct);
      await page.waitForTimeout(600);
      labels[pct] = await page.evaluate(labelFigures);
    }
    await context.close();

    // A new person's first view: nothing kept, the graph fitted.
    const fresh = await browser.newContext({ baseURL: BASE, viewport: { width: 1440, height: 900 } });
    await login(fresh.request, BASE, "bench", password);
    const firstPage = await fresh.newPage();
    const t0 = Date.now();
    await firstPage.goto("/", { waitUntil: "commit" });
    await firstPage.waitForSelector("[aria-label='Ecosystem canvas'][data-hydrated=true]", { timeout: 120_000 });
    await firstPage.waitForFunction(() => document.querySelector("[data-testid=zoom-level]")?.textContent !== "100%", null, { timeout: 10_000 }).catch(() => {});
    await firstPage.waitForTimeout(600);
    const firstView = await firstPage.evaluate(() => {
      const canvas = document.querySelector("[aria-label='Ecosystem canvas']").getBoundingClientRect();
      let whole = 0;
      let roots = 0;
      for (const el of document.querySelectorAll(".node-card[data-node-type], .far-block")) {
        const r = el.getBoundingClientRect();
        if (r.width === 0) continue;
        roots++;
        if (r.left >= canvas.left && r.top >= canvas.top && r.right <= canvas.right && r.bottom <= canvas.bottom) whole++;
      }
      return { zoom: document.querySelector("[data-testid=zoom-level]")?.textContent, rootsDrawn: roots, rootsWhollyOnScreen: whole };
    });
    firstView.ms = Date.now() - t0;
    await fresh.close();
    return {
      served: { nodes: served.nodes.length, edges: served.edges.length, rules: served.rules.length },
      load: {
        htmlBytes: load.htmlBytes,
        responseEndMs: round(load.responseEnd),
        fcpMs: round(load.fcp),
        domContentLoadedMs: round(load.domContentLoaded),
        wasmFetchedMs: round(load.wasmFetched),
        firstInteractiveMs: round(load.hydrated),
      },
      drawn: { atInteractive: { nodes: load.nodes, edges: load.edges, domElements: load.domNodes }, settled, fitted, chips },
      panAt100: figures(pan),
      dragNode: { node: root, edges: edgesOfCard, ...figures(drag) },
      fit,
      panFitted: figures(panAll),
      labels,
      firstView,
      firstLoadFiles,
      errors,
    };
  } finally {
    await browser.close();
  }
}

const median = (xs) => {
  const d = xs.filter((x) => typeof x === "number" && Number.isFinite(x)).sort((a, b) => a - b);
  if (!d.length) return NaN;
  const m = Math.floor(d.length / 2);
  return d.length % 2 ? d[m] : (d[m - 1] + d[m]) / 2;
};

/** The side-by-side table (medians over the runs). */
function table(ours, theirs, bundle) {
  const at = (runs, f) => median(runs.map(f));
  const n = (x) => (Number.isFinite(x) ? x.toLocaleString("en-US", { maximumFractionDigits: 1 }) : "—");
  const ms = (...xs) => xs.map(n).join(" / ") + " ms";
  const cell = (runs, render) => (runs.length ? render(runs) : "—");
  const rows = [
    ["first interactive", (r) => ms(at(r, (x) => x.load.firstInteractiveMs))],
    ["pan at 100 %: p95 / mouse step → frame", (r) => ms(at(r, (x) => x.panAt100.p95), at(r, (x) => x.panAt100.stepMs))],
    [
      "drag a system with 20 edges: p95 / max / step",
      (r) => ms(at(r, (x) => x.dragNode.p95), at(r, (x) => x.dragNode.max), at(r, (x) => x.dragNode.stepMs)),
    ],
    ["pan after fit: p95 / step", (r) => ms(at(r, (x) => x.panFitted.p95), at(r, (x) => x.panFitted.stepMs))],
    ["fit-to-view click → second frame", (r) => ms(at(r, (x) => x.fit.clickToSecondFrameMs))],
    [
      "labels after fit at 50 / 100 / 200 %: overlapping pairs",
      (r) => [50, 100, 200].map((p) => n(at(r, (x) => x.labels?.[p]?.overlappingPairs))).join(" / "),
    ],
    [
      "labels after fit at 50 / 100 / 200 %: under a control",
      (r) => [50, 100, 200].map((p) => n(at(r, (x) => x.labels?.[p]?.underAControl))).join(" / "),
    ],
  ];
  const lines = [];
  const runs = Math.max(ours.length, theirs.length);
  lines.push(`| figure${runs > 1 ? ` (median of ${runs})` : ""} | Wall Street | React Flow |`);
  lines.push("|---|---|---|");
  for (const [name, render] of rows) lines.push(`| ${name} | ${cell(ours, render)} | ${cell(theirs, render)} |`);
  lines.push(`| SSR HTML | ${n(median(ours.map((x) => x.load.htmlBytes)) / 1024)} KiB | — |`);
  const rf = theirs[0]?.bundle;
  lines.push(
    `| first load, gzip (wasm + JS + CSS) | ${kib(bundle.firstGz)}: wasm ${kib(bundle.wasmGz)} + js ${kib(bundle.jsGz)} + css ${kib(bundle.cssGz)} | ${rf ? `${kib(rf["app.js"].gzip + rf["app.css"].gzip)}: js ${kib(rf["app.js"].gzip)} + css ${kib(rf["app.css"].gzip)}` : "—"} |`,
  );
  return lines.join("\n");
}

/** Our run's details, as the bench printed them before the table. */
function details(r, i) {
  const out = [];
  out.push(`  run ${i + 1}: served ${r.served.nodes} nodes, ${r.served.edges} edges, ${r.served.rules} rules; drawn at interactive: ${r.drawn.atInteractive.nodes} nodes, ${r.drawn.atInteractive.edges} edges, ${r.drawn.atInteractive.domElements} DOM elements; after fit: ${r.drawn.fitted.nodes} nodes, ${r.drawn.fitted.edges} edges, ${r.drawn.fitted.domNodes} elements, ${r.drawn.fitted.cardsOnScreen} roots (cards or blocks) fully on screen`);
  const c = r.drawn.chips;
  out.push(`    capability chips on the drawn cards: ${c.whole} whole, ${c.counted} counted by a +N chip, ${c.cut} cut`);
  out.push(`    HTML ${kib(r.load.htmlBytes)}, response end ${fmt(r.load.responseEndMs)}, FCP ${fmt(r.load.fcpMs)}, DOMContentLoaded ${fmt(r.load.domContentLoadedMs)}, wasm fetched ${fmt(r.load.wasmFetchedMs)}, first interactive ${fmt(r.load.firstInteractiveMs)}`);
  for (const [name, s] of [
    ["pan (100%)", r.panAt100],
    [`drag ${r.dragNode.node} (${r.dragNode.edges} edges)`, r.dragNode],
    ["pan (fitted)", r.panFitted],
  ]) {
    out.push(`    ${name}: ${s.frames} frames, p50 ${fmt(s.p50)}, p95 ${fmt(s.p95)}, max ${fmt(s.max)}, >50 ms: ${s.over50ms}; long tasks ${s.longTasks} (${fmt(s.longTaskMs)}); step ${fmt(s.stepMs)}`);
  }
  out.push(`    fit: ${fmt(r.fit.clickToSecondFrameMs)} click → second frame, zoom ${r.fit.zoomAtSecondFrame}`);
  for (const [pct, l] of Object.entries(r.labels)) {
    out.push(`    labels at ${pct} % after fit: ${l.drawn} drawn (labels and traffic lines), ${l.overlappingPairs} overlapping pairs, ${l.underAControl} under a control; ${l.whole} whole, ${l.short} shortened (${l.untitled} without their full text)`);
  }
  const v = r.firstView;
  out.push(`    a new person's first view: zoom ${v.zoom}, ${v.rootsWhollyOnScreen} of ${v.rootsDrawn} drawn roots wholly on screen (${fmt(v.ms)} to settle)`);
  out.push(`    first load fetched from /pkg/: ${r.firstLoadFiles.join(", ")}`);
  if (r.errors.length) out.push(`    page errors: ${r.errors.join("; ")}`);
  return out.join("\n");
}

async function main() {
  const opt = options(process.argv.slice(2));
  for (const f of [HUB_BIN, path.join(SITE, "pkg")]) {
    if (!fs.existsSync(f)) throw new Error(`${f} is missing: run scripts/build first`);
  }
  const anchor = opt.reactflow ? prepareReactFlow(opt.reactflow) : null;
  if (opt.trace) fs.mkdirSync(opt.trace, { recursive: true });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-bench-"));
  const ours = [];
  const theirs = [];
  const summaries = [];
  let started = null;
  try {
    started = await startHub({ hubBin: HUB_BIN, site: SITE, port: PORT, dir, cwd: REPO, username: "bench" });
    for (let i = 0; i < opt.runs; i++) {
      const trace = opt.trace ? { dir: opt.trace, run: i + 1, summaries } : null;
      ours.push(await measureOurs(started.password, trace));
      if (anchor) theirs.push(runReactFlow(anchor));
    }
  } finally {
    await stopHub(started?.hub);
    if (process.env.WS_BENCH_KEEP) console.log(`kept ${dir}`);
    else fs.rmSync(dir, { recursive: true, force: true });
  }
  const topo = started.topo;

  // Sizes from the files themselves (gzip -9, what a compressing proxy
  // would send): the first load's (what the first run fetched from /pkg/),
  // and every part loaded on first use.
  const pkg = path.join(SITE, "pkg");
  const gz = (f) => zlib.gzipSync(fs.readFileSync(path.join(pkg, f)), { level: 9 }).length;
  const first = ours[0]?.firstLoadFiles ?? [];
  const sum = (pred) => first.filter(pred).reduce((a, f) => a + gz(f), 0);
  const bundle = {
    wasmGz: sum((f) => f.endsWith(".wasm")),
    jsGz: sum((f) => f.endsWith(".js")),
    cssGz: sum((f) => f.endsWith(".css")),
  };
  bundle.firstGz = bundle.wasmGz + bundle.jsGz + bundle.cssGz;
  const later = fs.readdirSync(pkg).filter((f) => /\.(wasm|js)$/.test(f) && !first.includes(f)).sort();

  const out = [];
  out.push(`Canvas benchmark — ${topo.nodes} nodes (${SYSTEMS} systems × 4 agents/datasources + hub), ${topo.edges} edges, 1440×900, headless Chromium without GPU`);
  out.push(`Wall Street (this build, hub on ${BASE}):`);
  ours.forEach((r, i) => out.push(details(r, i)));
  out.push(`  first load, gzip: ${first.map((f) => `${f} ${kib(gz(f))}`).join(", ")}; ${kib(bundle.firstGz)} in all`);
  out.push(`  on first use, gzip: ${later.map((f) => `${f} ${kib(gz(f))}`).join(", ") || "nothing (one bundle)"}`);
  if (anchor) {
    out.push(`React Flow (${anchor}, defaults):`);
    theirs.forEach((r, i) =>
      out.push(`  run ${i + 1}: first interactive ${fmt(r.load.firstInteractiveMs)}; drag ${r.dragNode.node} (${r.dragNode.edges} edges); fit zoom ${r.fit.zoomAtSecondFrame} at the second frame, fitted frame after ${fmt(r.fit.clickToFittedFrameMs)}`),
    );
  } else {
    out.push("React Flow: not run (no anchor at ../shared/bench/reactflow; --reactflow DIR)");
  }
  if (summaries.length) {
    out.push("Traces (figures of a traced run are slower than untraced ones):");
    out.push(...summaries);
  }
  out.push("");
  // The figures above are printed even if the table cannot be made.
  console.log(out.join("\n"));
  console.log(table(ours, theirs, bundle));
}

main().catch((e) => {
  console.error(`benchmark failed: ${e.stack ?? e}`);
  process.exit(1);
});
