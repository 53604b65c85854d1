// Observed edges (DESIGN.md §2): a call between two systems that crossed
// the hub shows on the canvas as an edge of its own, even though nobody
// established the connection, against the real stack. A member makes the
// call with the reference peer's own CLI (`peer call`, its token from this
// run's tokens.env): an answered call appears live with its count, a call
// no rule permits appears greyed with its reason code, and the observed
// edge's drawer shows its metrics and the envelope inspector's entry.
import * as fs from "fs";
import type { Page } from "@playwright/test";
import { test, expect, STATE, PEER, peerCall, openCanvas, watchErrors, edgeTraffic } from "./support";

/** Not established on the stack's canvas (initial_edges), permitted by a rule. */
const CLASSIFY = "buyercorp->helpdesk:ticket.classify";
/** No rule lets Helpdesk read VendorCorp's orders: refused NOT_PERMITTED. */
const REFUSED = "helpdesk->vendorcorp:orders.query";

/** Calls the hub counts on `id` now, from `GET /api/traffic`. */
async function hubCalls(page: Page, id: string): Promise<number> {
  const res = await page.request.get("/api/traffic");
  expect(res.status()).toBe(200);
  const view = (await res.json()) as { edges: { edge: string; calls: number }[] };
  return view.edges.find((e) => e.edge === id)?.calls ?? 0;
}

test.beforeAll(() => {
  test.skip(!STATE || !fs.existsSync(PEER), `needs the stack of scripts/test and ${PEER}`);
});

test("a call between two systems that passed the hub is drawn as an observed edge, live, with its drawer", async ({ page, api }) => {
  test.setTimeout(60_000);
  const errors = watchErrors(page);
  // Not established: only the observed edge can show this call.
  await api.removeEdge(CLASSIFY);
  await openCanvas(page);
  await expect(page.getByTestId("live-status")).toHaveAttribute("data-state", "live");
  const before = await hubCalls(page, CLASSIFY);

  const call = peerCall("buyercorp", "helpdesk", "ticket.classify", { ticket_id: "T-1003" });
  expect(call.status, call.out).toBe(0);

  // Within 2 s of the call, live over the event stream: no reload.
  const label = page.getByTestId(`observed-${CLASSIFY}`);
  await expect(label).toBeVisible({ timeout: 2_000 });
  await expect(label).toHaveAttribute("data-state", "answered");
  await expect(label).toContainText("ticket.classify");
  await expect(label).toHaveAttribute("aria-label", /observed: BuyerCorp called ticket\.classify of Helpdesk/);
  const line = page.getByTestId(`traffic-${CLASSIFY}`);
  await expect.poll(async () => (await edgeTraffic(page, CLASSIFY)).calls, { timeout: 2_000 }).toBe(before + 1);
  await expect(line).toHaveAttribute("data-last-outcome", "connected");
  await expect(line).toContainText(/\d+\/min/);
  // Its own kind of line, apart from the established edges' (which the
  // canvas spec counts): no `g.edge`, an animated dashed arc.
  const arc = page.locator(`svg.edge-layer g.observed-edge[data-observed-id="${CLASSIFY}"]`);
  await expect(arc).toHaveCount(1);
  await expect(page.locator(`svg.edge-layer g.edge[data-edge-id="${CLASSIFY}"]`)).toHaveCount(0);
  await expect(page.getByTestId(`edge-${CLASSIFY}`)).toHaveCount(0);
  await expect(arc.locator(".observed-line")).toHaveAttribute("style", /animation-duration: [\d.]+s/);

  // The hub lists it with its ends, so a browser that never saw the event
  // can draw it too.
  const traffic = (await (await page.request.get("/api/traffic")).json()) as {
    observed: { id: string; consumer: string; provider: string; capability: string }[];
  };
  expect(traffic.observed).toContainEqual({ id: CLASSIFY, consumer: "buyercorp", provider: "helpdesk", capability: "ticket.classify" });

  // Its drawer: metrics and the envelope inspector's entry of that call.
  await label.click();
  const drawer = page.getByTestId("drawer");
  await expect(drawer.getByRole("heading", { name: "ticket.classify" })).toBeVisible();
  await expect(drawer).toContainText("observed consult traffic");
  await expect(drawer.getByTestId("observed-note")).toContainText("established connection");
  await expect(drawer.getByTestId("ask-question")).toHaveCount(0);
  await expect(drawer.getByTestId("metric-calls")).toHaveAttribute("data-value", /^[1-9]\d*$/);
  const newest = drawer.getByTestId("inspector").getByTestId("exchange").first();
  await expect(newest).toHaveAttribute("data-outcome", "connected");
  await expect(newest.getByTestId("exchange-summary")).toContainText(/\d\d:\d\d:\d\d · \S+ · 200 · connected/);
  expect(errors, errors.join("\n")).toEqual([]);
});

test("a call no rule permits shows greyed, with its reason code", async ({ page }) => {
  test.setTimeout(60_000);
  const errors = watchErrors(page);
  await openCanvas(page);
  await expect(page.getByTestId("live-status")).toHaveAttribute("data-state", "live");

  // Helpdesk is no consumer of orders.query: the hub refuses it, and every
  // id in the call is one the registry knows.
  const call = peerCall("helpdesk", "vendorcorp", "orders.query", { aggregate: { op: "count", column: "*" } });
  expect(call.status, call.out).toBe(2);
  expect(call.out).toContain("NOT_PERMITTED");

  const label = page.getByTestId(`observed-${REFUSED}`);
  await expect(label).toBeVisible({ timeout: 2_000 });
  await expect(label).toHaveAttribute("data-state", "refused");
  await expect(label).toHaveClass(/\brefused\b/);
  await expect(label.getByTestId("observed-reason")).toHaveText("NOT_PERMITTED");
  const arc = page.locator(`svg.edge-layer g.observed-edge[data-observed-id="${REFUSED}"]`);
  await expect(arc).toHaveClass(/\brefused\b/);
  // Greyed: the refused line takes the degraded colour and stands still.
  const stroke = await arc.locator(".observed-line").evaluate((el) => getComputedStyle(el).stroke);
  const grey = await page.evaluate(() => {
    const probe = document.createElement("div");
    probe.style.color = "var(--degraded)";
    document.body.appendChild(probe);
    const c = getComputedStyle(probe).color;
    probe.remove();
    return c;
  });
  expect(stroke).toBe(grey);
  const line = page.getByTestId(`traffic-${REFUSED}`);
  await expect(line).toHaveAttribute("data-last-reason", "NOT_PERMITTED");
  await expect(line).toContainText("failed");

  // Its drawer's inspector names the refusal.
  await label.click();
  const newest = page.getByTestId("drawer").getByTestId("inspector").getByTestId("exchange").first();
  await expect(newest).toHaveAttribute("data-outcome", "not_connected");
  await expect(newest).toHaveAttribute("data-reason", "NOT_PERMITTED");
  expect(errors, errors.join("\n")).toEqual([]);
});
