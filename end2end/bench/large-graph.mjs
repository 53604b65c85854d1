// The large graph the canvas benchmark measures (canvas-bench.mjs) and the
// large-graph label spec checks (tests/labels-large.spec.ts): one generator,
// so both see the same 500 nodes and 1,000 edges, and the hub they start on
// it (its own port, database and UI user; a release build and target/site).
// Plain ESM, Node's built-ins only: the bench imports it as a module,
// Playwright's loader requires it from the spec.
//
// The topology: 100 systems, each with 2 agents and 2 datasources (500
// nodes with them, plus the hub), each providing one capability (data-share
// and consult alternating) to its 10 successors, and `initial_edges`
// establishing all 1,000 of those connections. No peer runs: every system
// is degraded (PEER_UNREACHABLE), which is what a big, partly broken
// ecosystem looks like, and what the canvas must keep drawing smoothly.
import { spawn, execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as crypto from "node:crypto";

export const SYSTEMS = 100;
export const FANOUT = 10;

const pad = (n) => String(n).padStart(3, "0");
export const sysId = (i) => `sys${pad(i)}`;
export const capId = (i) => `cap${pad(i)}.${i % 2 === 0 ? "query" : "consult"}`;

/** The topology file, and the token env vars it names. */
export function topology() {
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

/** Waits until `url` answers (below 500), or fails: the hub exited, or
 * `ms` went by. */
export async function waitFor(url, ms, hub) {
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

/**
 * Starts a hub on the large graph, its files in `dir` (topology.yaml,
 * ui-users.yaml, hub.db, hub.log), and waits until it answers.
 *
 * hubBin: the release hub binary; site: a built target/site; port: its
 * LEPTOS_SITE_ADDR port (port + 1 is its reload port); cwd: where it runs;
 * username: the one UI user (an admin), given a random password.
 *
 * Returns { hub (the child process), base (its URL), username, password,
 * topo (what topology() returned), log (the log file's path) }.
 */
export async function startHub({ hubBin, site, port, dir, cwd, username }) {
  const base = `http://127.0.0.1:${port}`;
  const topo = topology();
  const topoFile = path.join(dir, "topology.yaml");
  fs.writeFileSync(topoFile, topo.text);
  const password = crypto.randomBytes(12).toString("hex");
  const hash = execFileSync(hubBin, ["hash-password"], { input: `${password}\n`, encoding: "utf8" }).trim();
  const usersFile = path.join(dir, "ui-users.yaml");
  // An admin, as scripts/stack's operator (every entry names its role).
  fs.writeFileSync(usersFile, `users:\n  - username: ${username}\n    password_hash: "${hash}"\n    role: admin\n`);

  const logFile = path.join(dir, "hub.log");
  const log = fs.openSync(logFile, "w");
  const hub = spawn(
    hubBin,
    ["serve", "--topology", topoFile, "--database", path.join(dir, "hub.db"), "--ui-users", usersFile],
    {
      cwd,
      stdio: ["ignore", log, log],
      env: {
        ...process.env,
        ...topo.env,
        LEPTOS_OUTPUT_NAME: "wall-street",
        LEPTOS_SITE_ROOT: site,
        LEPTOS_SITE_PKG_DIR: "pkg",
        LEPTOS_SITE_ADDR: `127.0.0.1:${port}`,
        LEPTOS_RELOAD_PORT: String(port + 1),
        LEPTOS_ENV: "PROD",
      },
    },
  );
  fs.closeSync(log);
  try {
    await waitFor(`${base}/login`, 60_000, hub);
  } catch (e) {
    await stopHub(hub);
    throw e;
  }
  return { hub, base, username, password, topo, log: logFile };
}

/** Stops a hub startHub started: SIGTERM, then SIGKILL if it is still up
 * 300 ms later. */
export async function stopHub(hub) {
  if (!hub || hub.exitCode !== null || hub.signalCode !== null) return;
  hub.kill("SIGTERM");
  await new Promise((r) => setTimeout(r, 300));
  if (hub.exitCode === null && hub.signalCode === null) hub.kill("SIGKILL");
}

/** Logs a Playwright request context (a browser context's `request`, so
 * its pages share the session) in as `username` on the hub at `base`. */
export async function login(request, base, username, password) {
  const res = await request.post(`${base}/api/login`, { data: { username, password } });
  if (res.status() !== 200) throw new Error(`login refused: ${res.status()} ${await res.text()}`);
  return res;
}
