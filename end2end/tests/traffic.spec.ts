// What crossed an edge, on the canvas (DESIGN.md §6, metrics on the
// canvas), against the real stack: an edge label's counts change
// live as calls flow (a member's A2A call through the hub's surface, the
// drawer's own consult through the hub's gateway), the drawer's metrics
// and envelope inspector follow without a reload; the inspector shows a
// task's answer as the contract redacted it (a masked e-mail, never the
// raw one); and a degraded edge's inspector names the reason code of the
// call that failed.
import * as fs from "fs";
import * as path from "path";
import type { Locator, Page } from "@playwright/test";
import {
  test,
  expect,
  STATE,
  stack,
  openCanvas,
  watchErrors,
  a2a,
  sendMessageParams,
  peerSql,
  edgeTraffic,
} from "./support";

const SHARE = "buyercorp->vendorcorp:orders.query";
/** Within BuyerCorp's negotiated contract (scripts/stack's seed). */
const SHARE_INPUT = { aggregate: { op: "sum", column: "order_value" }, group_by: "region" };
const TRIAGE = "buyercorp->helpdesk:ticket.triage";
const TICKET = "T-1003";
/** hub/src/redaction/apply.rs mask_email: first character, `***@`, the domain. */
const MASKED_EMAIL = /"requester_email":\s*"[^"@\s]?\*\*\*@[A-Za-z0-9.-]+"/;

/** The drawer's `metric-calls`, or 0 while it says "no calls yet". */
async function metricCalls(drawer: Locator): Promise<number> {
  const metrics = drawer.getByTestId("metrics");
  await expect(metrics.locator("[data-testid=metric-calls], [data-testid=metrics-empty]")).toBeVisible();
  const calls = metrics.getByTestId("metric-calls");
  if ((await calls.count()) === 0) return 0;
  return Number(await calls.getAttribute("data-value"));
}

/** Marks the document, to prove later that nothing reloaded it. */
async function markDocument(page: Page) {
  await page.evaluate(() => {
    (window as unknown as { __trafficMark: number }).__trafficMark = 13;
  });
}

async function sameDocument(page: Page): Promise<boolean> {
  return page.evaluate(() => (window as unknown as { __trafficMark?: number }).__trafficMark === 13);
}

test("an edge's label counts its calls live, and its drawer's metrics and inspector follow", async ({ page, api }) => {
  test.setTimeout(60_000);
  const errors = watchErrors(page);
  const hub = (await api.topology()).hub_id;
  const consult = `${hub}->helpdesk:ticket.classify`;
  await api.ensureEdge("buyercorp", "vendorcorp", "orders.query");
  await api.ensureEdge(hub, "helpdesk", "ticket.classify");

  await openCanvas(page);
  await expect(page.getByTestId("live-status")).toHaveAttribute("data-state", "live");
  await markDocument(page);

  // The counts are read once the page runs: known, not "unknown".
  const shareLine = page.getByTestId(`traffic-${SHARE}`);
  await expect(shareLine).not.toHaveAttribute("data-state", "unknown");
  const before = await edgeTraffic(page, SHARE);

  // BuyerCorp calls VendorCorp through the hub's A2A surface, twice.
  for (let i = 0; i < 2; i++) {
    const r = await a2a("buyercorp", "vendorcorp", "SendMessage", sendMessageParams("orders.query", SHARE_INPUT));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.error, JSON.stringify(r.body)).toBeUndefined();
  }
  await expect.poll(async () => (await edgeTraffic(page, SHARE)).calls, { timeout: 5_000 }).toBeGreaterThanOrEqual(before.calls + 2);
  await expect(shareLine).toHaveAttribute("data-state", "seen");
  await expect(shareLine).toHaveAttribute("data-last-outcome", "connected");
  await expect(shareLine.getByTestId("traffic-dot")).toHaveClass(/\bok\b/);
  await expect(shareLine).toContainText(/^\s*\d[\d,]*(\/min|\/h| in \d+ (min|s))/);
  // The label itself still reads its capability; its name carries the counts.
  const shareLabel = page.getByTestId(`edge-${SHARE}`);
  await expect(shareLabel).toHaveText("orders.query");
  await expect(shareLabel).toHaveAttribute("aria-label", /\d+ calls? in the last .*last call connected/);

  // The consult edge's drawer asks through the hub's gateway (as the hub):
  // its label, metrics and inspector move while the drawer stays open.
  const c0 = await edgeTraffic(page, consult);
  await page.getByTestId(`edge-${consult}`).click();
  const drawer = page.getByTestId("drawer");
  await expect(drawer.getByRole("heading", { name: "ticket.classify" })).toBeVisible();
  const m0 = await metricCalls(drawer);
  const inspector = drawer.getByTestId("inspector");
  await expect(inspector.locator("[data-testid=exchanges], [data-testid=inspector-empty]")).toBeVisible();

  await drawer.getByTestId("ask-question").fill("The VPN is down for the whole office");
  const asked = page.waitForResponse((r) => r.request().method() === "POST" && r.url().includes("/ask"));
  await drawer.getByTestId("ask-run").click();
  const answer = (await (await asked).json()) as { trace_id: string; outcome: { status: string } };
  expect(answer.outcome.status).toBe("connected");
  await expect(drawer.getByTestId("answer-outcome")).toHaveAttribute("data-outcome", "connected");

  await expect.poll(async () => (await edgeTraffic(page, consult)).calls, { timeout: 5_000 }).toBeGreaterThan(c0.calls);
  await expect.poll(() => metricCalls(drawer), { timeout: 5_000 }).toBeGreaterThan(m0);
  await expect(drawer.getByTestId("metric-success-rate")).toContainText("%");
  // The newest exchange is this call: its traceparent carries the answer's trace id.
  const newest = inspector.getByTestId("exchange").first();
  await expect(newest.getByTestId("exchange-traceparent")).toContainText(answer.trace_id, { timeout: 5_000 });
  await expect(newest).toHaveAttribute("data-outcome", "connected");
  await expect(newest.getByTestId("exchange-summary")).toContainText(/\d\d:\d\d:\d\d · \S+ · 200 · connected · \d[\d,]* ms/);
  await newest.getByTestId("exchange-summary").click();
  await expect(newest.getByTestId("exchange-version")).toBeVisible();
  await expect(newest.getByTestId("exchange-request-id")).not.toBeEmpty();

  expect(await sameDocument(page), "the page was reloaded").toBe(true);
  expect(errors, errors.join("\n")).toEqual([]);
});

test("the inspector shows a task's answer as the contract redacted it: the e-mail masked, never raw", async ({ page, api }) => {
  test.setTimeout(60_000);
  const errors = watchErrors(page);
  await api.ensureEdge("buyercorp", "helpdesk", "ticket.triage");
  try {
    const [[raw]] = peerSql("helpdesk.db", `SELECT requester_email FROM tickets WHERE ticket_id = '${TICKET}'`) as string[][];
    expect(raw).toContain("@");

    // BuyerCorp has Helpdesk triage a ticket (a task) and reads it back
    // until it completes.
    const sent = await a2a("buyercorp", "helpdesk", "SendMessage", sendMessageParams("ticket.triage", { ticket_id: TICKET, work_ms: 0 }));
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    expect(sent.body.error, JSON.stringify(sent.body)).toBeUndefined();
    const task = sent.body.result?.task ?? sent.body.result;
    expect(task?.id, JSON.stringify(sent.body)).toBeTruthy();
    await expect
      .poll(
        async () => {
          const got = await a2a("buyercorp", "helpdesk", "GetTask", { id: task.id });
          const t = got.body.result?.task ?? got.body.result;
          return String(t?.status?.state ?? JSON.stringify(got.body));
        },
        { timeout: 15_000 },
      )
      .toMatch(/COMPLETED|completed/);

    const bodies: Promise<string>[] = [];
    page.on("response", (res) => {
      const url = new URL(res.url());
      // The event stream never ends: its text would never resolve.
      if (url.pathname.startsWith("/api/") && url.pathname !== "/api/events") bodies.push(res.text().catch(() => ""));
    });
    await openCanvas(page);
    const label = page.getByTestId(`edge-${TRIAGE}`);
    await expect(label).toHaveClass(/\btask\b/);
    await expect(page.getByTestId(`traffic-${TRIAGE}`)).toHaveAttribute("data-state", "seen");
    await label.click();
    const drawer = page.getByTestId("drawer");
    await expect(drawer).toContainText("task connection");
    await expect(drawer.getByTestId("metrics")).toBeVisible();
    const exchanges = drawer.getByTestId("inspector").getByTestId("exchange");
    await expect(exchanges.first()).toBeVisible();

    // Some exchange of this task carries the triage result: open them all.
    for (const summary of await drawer.getByTestId("exchange-summary").all()) await summary.click();
    const responses = drawer.getByTestId("exchange-response");
    await expect.poll(async () => (await responses.allTextContents()).join("\n"), { timeout: 5_000 }).toMatch(MASKED_EMAIL);
    const withEmail = responses.filter({ hasText: "requester_email" }).first();
    await expect(withEmail).toBeVisible();
    await expect(withEmail).toContainText(`"ticket_id": "${TICKET}"`);
    // The request as the caller sent it (the input schema bounds it).
    await expect(drawer.getByTestId("exchange-request").first()).toContainText(TICKET);

    // The raw address is nowhere: not on the page, not in any answer.
    expect(await page.content()).not.toContain(raw);
    for (const b of await Promise.all(bodies)) expect(b.includes(raw), "an /api answer holds the raw e-mail").toBe(false);
    expect(errors, errors.join("\n")).toEqual([]);
  } finally {
    // Leave the canvas as the other specs expect it.
    await api.removeEdge(TRIAGE);
  }
});

test("a degraded edge's inspector shows the reason code of the call that failed", async ({ page, api }) => {
  test.skip(!STATE || !fs.existsSync(path.join(STATE, "pids", "helpdesk.pid")), "needs the stack of scripts/test");
  test.setTimeout(90_000);
  const hub = (await api.topology()).hub_id;
  const consult = `${hub}->helpdesk:ticket.classify`;
  await api.ensureEdge(hub, "helpdesk", "ticket.classify");
  await openCanvas(page);
  await expect(page.getByTestId("live-status")).toHaveAttribute("data-state", "live");
  await expect(page.getByTestId("status-helpdesk")).toHaveText("healthy", { timeout: 10_000 });
  await markDocument(page);

  stack("kill-peer", "helpdesk");
  try {
    await expect(page.getByTestId("status-helpdesk")).toHaveText("PEER_UNREACHABLE", { timeout: 5_000 });
    const before = await edgeTraffic(page, consult);
    await page.getByTestId(`edge-${consult}`).click();
    const drawer = page.getByTestId("drawer");
    await drawer.getByTestId("ask-question").fill("Is the helpdesk there?");
    await drawer.getByTestId("ask-run").click();
    const outcome = drawer.getByTestId("answer-outcome");
    await expect(outcome).toHaveAttribute("data-outcome", "not_connected", { timeout: 10_000 });
    const said = /not connected — ([A-Z_]+)/.exec((await outcome.textContent()) ?? "");
    expect(said, "the answer names a reason code").not.toBeNull();
    const reason = (said as RegExpExecArray)[1];
    expect(["PEER_UNREACHABLE", "TIMEOUT"]).toContain(reason);

    // The inspector's newest exchange is that call, with the hub's reason.
    const newest = drawer.getByTestId("inspector").getByTestId("exchange").first();
    await expect(newest).toHaveAttribute("data-outcome", "not_connected", { timeout: 5_000 });
    await expect(newest).toHaveAttribute("data-reason", reason);
    await expect(newest.getByTestId("exchange-summary")).toContainText(`not connected · ${reason}`);
    await newest.getByTestId("exchange-summary").click();
    await expect(newest.getByTestId("exchange-traceparent")).not.toBeEmpty();

    // The label and the metrics say the same, live.
    await expect.poll(async () => (await edgeTraffic(page, consult)).failures, { timeout: 5_000 }).toBeGreaterThan(before.failures);
    const line = page.getByTestId(`traffic-${consult}`);
    await expect(line).toHaveAttribute("data-last-outcome", "not_connected");
    await expect(line).toHaveAttribute("data-last-reason", reason);
    await expect(line.getByTestId("traffic-dot")).toHaveClass(/\bfailed\b/);
    await expect(line.getByTestId("traffic-dot")).toHaveAttribute("title", new RegExp(reason));
    await expect(line).toContainText("failed");
    await expect(drawer.locator(`[data-testid=metric-failure][data-reason=${reason}]`)).toBeVisible({ timeout: 5_000 });
    expect(await sameDocument(page), "the page was reloaded").toBe(true);
  } finally {
    stack("start-peer", "helpdesk");
  }
  await expect(page.getByTestId("status-helpdesk")).toHaveText("healthy", { timeout: 15_000 });
});
