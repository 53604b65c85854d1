// Shared by every spec: the stack's state directory, the operator's
// credential, a login fixture, and small calls to the hub's /api.
//
// The login fixture logs in through the UI once per worker (the suite runs
// one worker, so once per run) and hands the session to every test as its
// storageState; tests that need no session, or end one, make their own
// browser context.
import { test as base, expect, Page, APIRequestContext, ConsoleMessage, BrowserContext } from "@playwright/test";
import { ChildProcess, execFileSync, spawn, spawnSync } from "child_process";
import * as fs from "fs";
import * as path from "path";

export { expect };

/** The repository root (end2end/tests/..). */
export const REPO = path.resolve(__dirname, "..", "..");

/** The stack's state directory (scripts/stack start $WS_E2E_STATE). */
export const STATE = process.env.WS_E2E_STATE ?? "";

export type NodeView = {
  id: string;
  name: string;
  node_type: string;
  system: string | null;
  status: string;
  reason: string | null;
};
export type EdgeView = { id: string; consumer: string; provider: string; capability: string; kind: string };
export type RuleView = { capability: string; kind: string; provider: string; consumers: string[] };
export type NodePosition = { node: string; x: number; y: number };
export type TopologyView = {
  hub_id: string;
  nodes: NodeView[];
  edges: EdgeView[];
  rules: RuleView[];
  positions: NodePosition[];
  /** SHA-256 of the topology file this view was made from. */
  digest: string;
};

export type ProposedActionView = {
  id: string;
  action_type: string;
  target: string;
  parameters: string;
  status: "pending" | "approved" | "rejected";
  inbox: string;
  trace_id: string;
  decided_by: string | null;
  decided_at: string | null;
  effect: string | null;
};
export type ConsultView = {
  trace_id: string;
  outcome: { status: string };
  facts: { label: string; value: string }[];
  proposed_actions: ProposedActionView[];
};

/** The demo peers the topology file ships (the canvas test checks them). */
export const SYSTEMS = [
  { id: "vendorcorp", name: "VendorCorp", children: ["agent/data-steward", "datasource/orders-db"] },
  { id: "buyercorp", name: "BuyerCorp", children: ["agent/finance-analyst", "datasource/budgets-db"] },
  { id: "helpdesk", name: "Helpdesk", children: ["agent/triage-agent", "datasource/tickets-db"] },
];

/** `operator:<password>` as the stack wrote it. */
export function credential(): { username: string; password: string } {
  const file = path.join(STATE, "operator-credential");
  if (!STATE || !fs.existsSync(file)) {
    throw new Error(`no operator credential at ${file}: start the stack with scripts/stack start $WS_E2E_STATE`);
  }
  const text = fs.readFileSync(file, "utf8").trim();
  const at = text.indexOf(":");
  return { username: text.slice(0, at), password: text.slice(at + 1) };
}

/** The A2A tokens of this run (never sent to a browser). */
export function tokens(): Record<string, string> {
  const file = path.join(STATE, "tokens.env");
  const out: Record<string, string> = {};
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    const eq = line.indexOf("=");
    if (eq > 0) out[line.slice(0, eq)] = line.slice(eq + 1).trim();
  }
  return out;
}

/** Runs scripts/stack (kill-peer, start-peer) against this run's stack. */
export function stack(...args: string[]) {
  execFileSync(path.join(REPO, "scripts", "stack"), [args[0], STATE, ...args.slice(1)], {
    cwd: REPO,
    stdio: "pipe",
    timeout: 90_000,
  });
}

/** Logs in through the login page and waits for the canvas. */
export async function loginThroughUi(page: Page, next = "/") {
  const { username, password } = credential();
  await page.goto(`/login?next=${encodeURIComponent(next)}`);
  const form = page.getByTestId("login-form");
  await expect(form).toHaveAttribute("data-hydrated", "true");
  await page.getByLabel("Username").fill(username);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Log in" }).click();
  await page.waitForURL((u) => u.pathname === new URL(next, "http://x").pathname);
}

/** Logs a request context in through the API (no page). */
export async function loginThroughApi(request: APIRequestContext) {
  const res = await request.post("/api/login", { data: credential() });
  expect(res.status(), await res.text()).toBe(200);
  return (await res.json()) as { username: string; csrf_token: string };
}

type Fixtures = { csrf: string; api: Api };
type WorkerFixtures = { authFile: string };

export const test = base.extend<Fixtures, WorkerFixtures>({
  authFile: [
    async ({ browser }, use, info) => {
      const file = path.join(info.project.outputDir, `.auth-${info.workerIndex}.json`);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      // Worker fixtures do not get the project's options: pass the URL.
      const context = await browser.newContext({ baseURL: info.project.use.baseURL });
      const page = await context.newPage();
      await loginThroughUi(page);
      await context.storageState({ path: file });
      await context.close();
      await use(file);
    },
    { scope: "worker" },
  ],
  storageState: async ({ authFile }, use) => use(authFile),
  csrf: async ({ page }, use) => {
    const res = await page.request.get("/api/session");
    expect(res.status()).toBe(200);
    await use(((await res.json()) as { csrf_token: string }).csrf_token);
  },
  api: async ({ page, csrf }, use) => use(new Api(page.request, csrf)),
});

/** The hub's /api as the logged-in operator, with the CSRF token. */
export class Api {
  constructor(
    readonly request: APIRequestContext,
    readonly csrf: string,
  ) {}

  async topology(): Promise<TopologyView> {
    const res = await this.request.get("/api/topology");
    expect(res.status()).toBe(200);
    return (await res.json()) as TopologyView;
  }

  async hasEdge(id: string): Promise<boolean> {
    return (await this.topology()).edges.some((e) => e.id === id);
  }

  /** Makes sure `consumer->provider:capability` is established. */
  async ensureEdge(consumer: string, provider: string, capability: string) {
    if (await this.hasEdge(`${consumer}->${provider}:${capability}`)) return;
    const res = await this.request.post("/api/edges", {
      data: { consumer, provider, capability },
      headers: { "X-CSRF-Token": this.csrf },
    });
    expect([201, 409], await res.text()).toContain(res.status());
  }

  /** Makes sure the edge `id` is not established. */
  async removeEdge(id: string) {
    if (!(await this.hasEdge(id))) return;
    const res = await this.request.delete(`/api/edges/${encodeURIComponent(id)}`, {
      headers: { "X-CSRF-Token": this.csrf },
    });
    expect([204, 404], await res.text()).toContain(res.status());
  }

  /** Asks a consult edge through the hub, as the consult drawer does. */
  async ask(edgeId: string, question: string): Promise<ConsultView> {
    const res = await this.request.post(`/api/edges/${encodeURIComponent(edgeId)}/ask`, {
      data: { question },
      headers: { "X-CSRF-Token": this.csrf },
    });
    expect(res.status(), await res.text()).toBe(200);
    return (await res.json()) as ConsultView;
  }

  /** Approves or rejects an entry of the hub's inbox. */
  async decide(id: string, verb: "approve" | "reject", csrf: string | null = this.csrf) {
    const headers: Record<string, string> = csrf === null ? {} : { "X-CSRF-Token": csrf };
    return this.request.post(`/api/inbox/${encodeURIComponent(id)}/${verb}`, { headers });
  }

  async savePositions(positions: NodePosition[]) {
    const res = await this.request.put("/api/positions", {
      data: { positions },
      headers: { "X-CSRF-Token": this.csrf },
    });
    expect(res.status(), await res.text()).toBe(204);
  }
}

/** Console errors and page errors, to fail a test that produced any. */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("console", (msg: ConsoleMessage) => {
    if (msg.type() !== "error") return;
    if (msg.location().url.endsWith("/favicon.ico")) return;
    errors.push(`${msg.text()} (${msg.location().url})`);
  });
  page.on("pageerror", (err) => errors.push(String(err)));
  return errors;
}

export function canvas(page: Page) {
  return page.getByRole("region", { name: "Ecosystem canvas" });
}

/** Opens the canvas and waits for hydration. */
export async function openCanvas(page: Page) {
  await page.goto("/");
  await expect(canvas(page)).toHaveAttribute("data-hydrated", "true");
}

/** A root's position (its group's translate), in world pixels. */
export async function rootPosition(page: Page, id: string): Promise<{ x: number; y: number }> {
  const style = await page
    .getByTestId(`node-${id}`)
    .evaluate((el) => (el.parentElement as HTMLElement).style.transform);
  const m = /translate\(([-\d.]+)px,\s*([-\d.]+)px\)/.exec(style);
  if (!m) throw new Error(`no translate in ${style}`);
  return { x: Number(m[1]), y: Number(m[2]) };
}

/** Drags with the mouse from one point to another in small steps. */
export async function drag(page: Page, from: { x: number; y: number }, to: { x: number; y: number }, hold?: () => Promise<void>) {
  await page.mouse.move(from.x, from.y);
  await page.mouse.down();
  await page.mouse.move(from.x + (to.x - from.x) / 3, from.y + (to.y - from.y) / 3, { steps: 4 });
  await page.mouse.move(to.x, to.y, { steps: 8 });
  if (hold) await hold();
  await page.mouse.up();
}

/** The centre of a locator's box. */
export async function centre(page: Page, testid: string, dx = 0, dy = 0) {
  const box = await page.getByTestId(testid).boundingBox();
  if (!box) throw new Error(`${testid} has no box`);
  return { x: box.x + box.width / 2 + dx, y: box.y + box.height / 2 + dy };
}

/** A point in a root card's head (where no edge label sits). */
export async function cardHead(page: Page, id: string) {
  const box = await page.getByTestId(`node-${id}`).boundingBox();
  if (!box) throw new Error(`node-${id} has no box`);
  return { x: box.x + 40, y: box.y + 14 };
}

/** Steps the toolbar's zoom buttons until the toolbar reads `percent`. */
export async function zoomTo(page: Page, percent: number) {
  const level = page.getByTestId("zoom-level");
  for (let i = 0; i < 12; i++) {
    const now = parseInt((await level.textContent()) ?? "", 10);
    if (now === percent) return;
    await page.getByTestId(now > percent ? "zoom-out" : "zoom-in").click();
    await expect(level).not.toHaveText(`${now}%`);
  }
  await expect(level).toHaveText(`${percent}%`);
}

/** Resolves after two animation frames: what the page queued for the
 * next frame (after a pan or zoom) has run, and what it changed is drawn. */
export async function nextFrames(page: Page) {
  await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(null)))));
}

/** A fresh browser context without a session. */
export async function anonymousContext(browser: import("@playwright/test").Browser, options = {}): Promise<BrowserContext> {
  return browser.newContext({ storageState: { cookies: [], origins: [] }, ...options });
}

// ---------------------------------------------------------------------
// Peer calls and peer data (traffic.spec): what a member system does,
// done from the test with that system's own token.
// ---------------------------------------------------------------------

/** The hub's base URL (the project's baseURL). */
export const HUB = process.env.WS_BASE_URL ?? "http://127.0.0.1:3000";

/** A JSON-RPC answer of the hub's A2A surface. */
export type RpcAnswer = { status: number; body: { result?: any; error?: { code: number; message: string; data?: unknown } } };

let rpcSeq = 0;

/** A unique id for message ids and request ids of this run. */
export function uniqueId(prefix: string): string {
  rpcSeq += 1;
  return `${prefix}-${Date.now().toString(36)}-${process.pid}-${rpcSeq}`;
}

/** `SendMessage` params (A2A v1.0): one data part naming `capability`
 *  with its `input`, under a fresh `messageId` (the idempotency key). */
export function sendMessageParams(capability: string, input: unknown, messageId = uniqueId("msg")) {
  return { message: { messageId, role: "ROLE_USER", parts: [{ data: { capability, input } }] } };
}

/** A JSON-RPC request to `provider`'s A2A surface on the hub as `caller`
 *  (its bearer token from this run's tokens.env, `A2A-Version: 1.0`), the
 *  way a member's A2A client calls another member. */
export async function a2a(caller: string, provider: string, method: string, params: unknown): Promise<RpcAnswer> {
  const token = tokens()[`WS_TOKEN_${caller.toUpperCase()}`];
  if (!token) throw new Error(`no token for ${caller} in ${STATE}/tokens.env`);
  const res = await fetch(`${HUB}/a2a/${encodeURIComponent(provider)}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "a2a-version": "1.0",
      "content-type": "application/json",
      "x-request-id": uniqueId("req"),
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: uniqueId("rpc"), method, params }),
  });
  const text = await res.text();
  let body: RpcAnswer["body"] = {};
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`the A2A surface answered ${res.status} with no JSON: ${text.slice(0, 200)}`);
  }
  return { status: res.status, body };
}

/** Runs SQL on a peer's database (read-only) with Python's sqlite3. */
export function peerSql(db: string, query: string): unknown[][] {
  const script = [
    "import json, sqlite3, sys",
    "c = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True)",
    "print(json.dumps(c.execute(sys.argv[2]).fetchall()))",
  ].join("\n");
  const out = execFileSync("python3", ["-c", script, path.join(STATE, db), query], { encoding: "utf8" });
  return JSON.parse(out) as unknown[][];
}

/** An edge label's traffic line, as its `data-*` attributes say. */
export type TrafficAttrs = {
  state: string | null;
  calls: number;
  failures: number;
  lastOutcome: string | null;
  lastReason: string | null;
  lastAt: string | null;
};

/** The reference peer's binary, as scripts/test builds it. */
export const PEER = path.join(process.env.CARGO_TARGET_DIR ?? path.join(REPO, "target"), "release", "peer");

/** `peer call` as `caller` (its config, its database, its token of this
 *  run): the exit status (0 connected, 2 not connected) and what it said. */
export function peerCall(caller: string, provider: string, capability: string, input: unknown) {
  const run = spawnSync(
    PEER,
    [
      "call",
      "--config",
      path.join(REPO, "config", "peers", `${caller}.yaml`),
      "--database",
      path.join(STATE, `${caller}.db`),
      "--provider",
      provider,
      "--capability",
      capability,
      "--input",
      JSON.stringify(input),
    ],
    { cwd: REPO, encoding: "utf8", timeout: 30_000, env: { ...process.env, ...tokens() } },
  );
  return { status: run.status, out: `${run.stdout}\n${run.stderr}` };
}

/** Reads the traffic line under the label of edge `id`. */
export async function edgeTraffic(page: Page, id: string): Promise<TrafficAttrs> {
  const el = page.getByTestId(`traffic-${id}`);
  const attr = (name: string) => el.getAttribute(name);
  return {
    state: await attr("data-state"),
    calls: Number((await attr("data-calls")) ?? "0"),
    failures: Number((await attr("data-failures")) ?? "0"),
    lastOutcome: await attr("data-last-outcome"),
    lastReason: await attr("data-last-reason"),
    lastAt: await attr("data-last-at"),
  };
}

/** A fourth company's config for the onboarding and layout specs: the
 * reference peer's Logistics config with its own address (`listen`, e.g.
 * 127.0.0.1:3104), its own database under `STATE/<dir>`, its CSV by
 * absolute path and the stack's hub. Returns the file's path. */
export function logisticsConfig(listen: string, dir: string): string {
  const home = path.join(STATE, dir);
  fs.mkdirSync(home, { recursive: true });
  const text = fs
    .readFileSync(path.join(REPO, "config", "peers", "logistics.yaml"), "utf8")
    .replace(/^listen: .*$/m, `listen: ${listen}`)
    .replace(/^hub_url: .*$/m, `hub_url: ${HUB}`)
    .replace(/^database: .*$/m, `database: ${path.join(home, "logistics.db")}`)
    .replace("path: data/shipments.csv", `path: ${path.join(REPO, "config", "peers", "data", "shipments.csv")}`);
  const config = path.join(home, "logistics.yaml");
  fs.writeFileSync(config, text);
  return config;
}

/** Starts Logistics' server (`peer serve`) on `config` (`logisticsConfig`)
 * with `token`, and waits for its /health at `listen`. */
export async function startLogistics(config: string, listen: string, token: string): Promise<ChildProcess> {
  const child = spawn(PEER, ["serve", "--config", config], {
    cwd: REPO,
    env: { ...process.env, WS_TOKEN_LOGISTICS: token },
    stdio: "ignore",
  });
  await expect
    .poll(
      async () => {
        try {
          return (await fetch(`http://${listen}/health`)).status;
        } catch {
          return 0;
        }
      },
      { timeout: 15_000 },
    )
    .toBe(200);
  return child;
}

/** Stops a peer started by a spec and waits for it to exit. */
export async function stopPeer(child: ChildProcess | undefined) {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

/** A box on the screen, in CSS pixels. */
export type Box = { x: number; y: number; w: number; h: number };

/** Do two boxes overlap by more than rounding? */
export function overlap(a: Box, b: Box): boolean {
  const e = 0.5;
  return a.x + e < b.x + b.w && b.x + e < a.x + a.w && a.y + e < b.y + b.h && b.y + e < a.y + a.h;
}

/** The box of the first element `selector` matches, if any. */
export async function boxOf(page: Page, selector: string): Promise<Box | null> {
  const el = page.locator(selector);
  if ((await el.count()) === 0) return null;
  const b = await el.first().boundingBox();
  return b && { x: b.x, y: b.y, w: b.width, h: b.height };
}
