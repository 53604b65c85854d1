#!/usr/bin/env node
// Canvas benchmark: a generated topology of 500 nodes and 1,000 edges,
// served by a real hub on its own port and database, measured in headless
// Chromium with the Performance API. Prints figures; asserts nothing.
//
//   node end2end/bench/canvas-bench.mjs        (scripts/bench-canvas)
//
// Environment: WS_BENCH_PORT (default 3300), CHROMIUM_PATH, WS_BENCH_KEEP=1
// to keep the temporary directory (topology, database, hub log).
//
// The topology: 100 systems, each with 2 agents and 2 datasources (500
// nodes with them, plus the hub), each providing one capability (data-share
// and consult alternating) to its 10 successors, and `initial_edges`
// establishing all 1,000 of those connections. No peer runs: every system
// is degraded (PEER_UNREACHABLE), which is what a big, partly broken
// ecosystem looks like, and what the canvas must keep drawing smoothly.
import { chromium } from "@playwright/test";
import { spawn, execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as zlib from "node:zlib";
import * as crypto from "node:crypto";
import { fileURLToPath } from "node:url";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const TARGET = process.env.CARGO_TARGET_DIR ?? path.join(REPO, "target");
const HUB_BIN = path.join(TARGET, "release", "hub");
const SITE = path.join(REPO, "target", "site");
const PORT = Number(process.env.WS_BENCH_PORT ?? 3300);
const BASE = `http://127.0.0.1:${PORT}`;
const SYSTEMS = 100;
const FANOUT = 10;

const pad = (n) => String(n).padStart(3, "0");
const sysId = (i) => `sys${pad(i)}`;
const capId = (i) => `cap${pad(i)}.${i % 2 === 0 ? "query" : "consult"}`;

/** The topology file, and the token env vars it names. */
function topology() {
  const env = {};
  const lines = [
    "version: 1",
    "hub:",
    "  id: hub",
    "  default_deadline_ms: 1000",
    "  probe_interval_ms: 1000",
    "  probe_timeout_ms: 300",
    "  auth:",
    "    mtls: false",
    "systems:",
  ];
  for (let i = 0; i < SYSTEMS; i++) {
    const id = sysId(i);
    const tokenEnv = `WS_TOKEN_BENCH_${id.toUpperCase()}`;
    env[tokenEnv] = crypto.randomBytes(16).toString("hex");
    const consumes = [];
    for (let k = 1; k <= FANOUT; k++) consumes.push(capId((i - k + SYSTEMS) % SYSTEMS));
    lines.push(
      `  - id: ${id}`,
      `    name: System ${pad(i)}`,
      `    node_type: system`,
      // A port nothing listens on: the system is degraded, not slow.
      `    base_url: http://127.0.0.1:${39000 + i}`,
      `    token_env: ${tokenEnv}`,
      `    ip_allowlist: [127.0.0.1/32]`,
      `    provides: [${capId(i)}]`,
      `    consumes: [${consumes.join(", ")}]`,
      `    agents:`,
      `      - { id: a1, name: Agent one, description: Generated. }`,
      `      - { id: a2, name: Agent two, description: Generated. }`,
      `    datasources:`,
      `      - { id: d1, name: Store one, description: Generated. }`,
      `      - { id: d2, name: Store two, description: Generated. }`,
    );
  }
  lines.push("capabilities:");
  for (let i = 0; i < SYSTEMS; i++) {
    lines.push(
      `  - id: ${capId(i)}`,
      `    kind: ${i % 2 === 0 ? "data-share" : "consult"}`,
      `    description: Generated capability ${i}.`,
      `    deadline_ms: 1000`,
      `    response_schema: { type: object }`,
    );
  }
  lines.push("rules:");
  const edges = [];
  for (let i = 0; i < SYSTEMS; i++) {
    const consumers = [];
    for (let k = 1; k <= FANOUT; k++) {
      const c = sysId((i + k) % SYSTEMS);
      consumers.push(c);
      edges.push({ consumer: c, provider: sysId(i), capability: capId(i) });
    }
    lines.push(`  - capability: ${capId(i)}`, `    provider: ${sysId(i)}`, `    consumers: [${consumers.join(", ")}, hub]`);
  }
  lines.push("initial_edges:");
  for (const e of edges) {
    lines.push(`  - { consumer: ${e.consumer}, provider: ${e.provider}, capability: ${e.capability} }`);
  }
  return { text: lines.join("\n") + "\n", env, edges: edges.length, nodes: SYSTEMS * 5 + 1 };
}

async function waitFor(url, ms, hub) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (hub.exitCode !== null) throw new Error(`the hub exited (${hub.exitCode}); see its log`);
    try {
      const res = await fetch(url, { redirect: "manual" });
      if (res.status < 500) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not answer within ${ms} ms`);
}

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

async function main() {
  for (const f of [HUB_BIN, path.join(SITE, "pkg")]) {
    if (!fs.existsSync(f)) throw new Error(`${f} is missing: run scripts/build first`);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-bench-"));
  const topo = topology();
  const topoFile = path.join(dir, "topology.yaml");
  fs.writeFileSync(topoFile, topo.text);
  const password = crypto.randomBytes(12).toString("hex");
  const hash = execFileSync(HUB_BIN, ["hash-password"], { input: `${password}\n`, encoding: "utf8" }).trim();
  const usersFile = path.join(dir, "ui-users.yaml");
  fs.writeFileSync(usersFile, `users:\n  - username: bench\n    password_hash: "${hash}"\n`);

  const log = fs.openSync(path.join(dir, "hub.log"), "w");
  const hub = spawn(
    HUB_BIN,
    ["serve", "--topology", topoFile, "--database", path.join(dir, "hub.db"), "--ui-users", usersFile],
    {
      cwd: REPO,
      stdio: ["ignore", log, log],
      env: {
        ...process.env,
        ...topo.env,
        LEPTOS_OUTPUT_NAME: "wall-street",
        LEPTOS_SITE_ROOT: SITE,
        LEPTOS_SITE_PKG_DIR: "pkg",
        LEPTOS_SITE_ADDR: `127.0.0.1:${PORT}`,
        LEPTOS_RELOAD_PORT: String(PORT + 1),
        LEPTOS_ENV: "PROD",
      },
    },
  );
  let browser;
  try {
    await waitFor(`${BASE}/login`, 60_000, hub);
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run", "--disable-quic"],
    });
    const context = await browser.newContext({ baseURL: BASE, viewport: { width: 1440, height: 900 } });
    const login = await context.request.post("/api/login", { data: { username: "bench", password } });
    if (login.status() !== 200) throw new Error(`login refused: ${login.status()} ${await login.text()}`);
    const served = await (await context.request.get("/api/topology")).json();

    const page = await context.newPage();
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
    await page.goto("/", { waitUntil: "commit" });
    await page.waitForFunction(() => window.__hydratedAt !== undefined, null, { timeout: 120_000 });
    const load = await page.evaluate(() => {
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
    // Let the first live events land before measuring interaction.
    await page.waitForTimeout(1500);

    const start = await emptyPoint(page);
    if (!start) throw new Error("no empty spot to pan from");
    await startFrames(page);
    const panStep = await sweep(page, start, 600, -300, 120);
    const pan = { ...(await stopFrames(page)), step: panStep };

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
    await startFrames(page);
    const dragStep = await sweep(page, card, 300, 200, 120);
    const dragNode = { ...(await stopFrames(page)), step: dragStep };

    // Zoom out to see everything, then pan the whole graph.
    const fitStart = Date.now();
    await page.getByTestId("fit-view").click();
    await page.evaluate(
      () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(null)))),
    );
    const fitTook = Date.now() - fitStart;
    await page.waitForTimeout(1500);
    const start2 = (await emptyPoint(page)) ?? start;
    await startFrames(page);
    const panAllStep = await sweep(page, start2, 400, 200, 120);
    const panAll = { ...(await stopFrames(page)), step: panAllStep };

    const wasmFile = fs.readdirSync(path.join(SITE, "pkg")).find((f) => f.endsWith(".wasm"));
    const wasm = fs.readFileSync(path.join(SITE, "pkg", wasmFile));
    const jsFile = fs.readdirSync(path.join(SITE, "pkg")).find((f) => f.endsWith(".js"));
    const js = jsFile ? fs.readFileSync(path.join(SITE, "pkg", jsFile)) : Buffer.alloc(0);

    const out = [];
    out.push(`Canvas benchmark — ${topo.nodes} nodes (${SYSTEMS} systems × 4 agents/datasources + hub), ${topo.edges} edges`);
    out.push(`  served: ${served.nodes.length} nodes, ${served.edges.length} edges, ${served.rules.length} rules; drawn: ${load.nodes} nodes, ${load.edges} edges, ${load.domNodes} DOM elements`);
    out.push(`  HTML (SSR, with the graph): ${kib(load.htmlBytes)} transferred, response end ${fmt(load.responseEnd)}`);
    out.push(`  first contentful paint:     ${fmt(load.fcp)}`);
    out.push(`  DOMContentLoaded:           ${fmt(load.domContentLoaded)}`);
    out.push(`  wasm fetched:               ${fmt(load.wasmFetched)}`);
    out.push(`  first interactive (hydrated): ${fmt(load.hydrated)}   (navigation start → data-hydrated=true)`);
    for (const [name, r] of [
      ["panning (100% zoom)", pan],
      [`dragging a node (${card.id})`, dragNode],
      ["panning (fit to view, all drawn)", panAll],
    ]) {
      const s = stats(r.frames);
      const longSum = r.long.reduce((a, b) => a + b, 0);
      out.push(
        `  frames while ${name}: ${s.frames} frames, p50 ${fmt(s.p50)}, p95 ${fmt(s.p95)}, max ${fmt(s.max)}, >50 ms: ${s.over50ms}; long tasks: ${r.long.length} (${fmt(longSum)}); mouse step → next frame: ${fmt(r.step)} mean`,
      );
    }
    out.push(`  fit to view (all 501 nodes on screen): ${fmt(fitTook)} from click to the second frame after it`);
    out.push(`  wasm ${wasmFile}: ${kib(wasm.length)} raw, ${kib(zlib.gzipSync(wasm, { level: 9 }).length)} gzip`);
    if (jsFile) out.push(`  js   ${jsFile}: ${kib(js.length)} raw, ${kib(zlib.gzipSync(js, { level: 9 }).length)} gzip`);
    console.log(out.join("\n"));
  } finally {
    await browser?.close();
    hub.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 300));
    if (hub.exitCode === null) hub.kill("SIGKILL");
    if (process.env.WS_BENCH_KEEP) console.log(`kept ${dir}`);
    else fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(`benchmark failed: ${e.stack ?? e}`);
  process.exit(1);
});
