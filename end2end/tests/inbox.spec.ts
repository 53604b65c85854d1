// The hub's approval inbox page: a proposal from a consult answer waits
// there; approving it is the only thing that makes the hub write (its own
// budget plan), rejecting writes nothing, and the proposing system's data
// never changes. Decisions are idempotent, CSRF-protected and recorded
// with who, when and the trace id.
import { test, expect, Api, watchErrors, ProposedActionView } from "./support";
import type { Page } from "@playwright/test";
import * as path from "path";

const SHOTS = path.resolve(__dirname, "..", "screenshots");

/** A fresh amount per run, so a plan row can only come from this run. */
function amount(): number {
  return 100_000 + Math.floor(Math.random() * 800_000);
}

function shown(n: number): string {
  return n.toLocaleString("en-US");
}

/** Asks BuyerCorp's budget consult as the hub (making the edge if needed). */
async function askBuyer(api: Api, question: string) {
  const hub = (await api.topology()).hub_id;
  await api.ensureEdge(hub, "buyercorp", "budget.consult");
  return api.ask(`${hub}->buyercorp:budget.consult`, question);
}

/** A consult from the hub that proposes `set_budget` on `department`. */
async function propose(api: Api, department: string, to: number): Promise<ProposedActionView> {
  const view = await askBuyer(api, `raise ${department} budget to ${to}`);
  expect(view.outcome.status).toBe("connected");
  const action = view.proposed_actions.find((a) => a.action_type === "set_budget" && a.target === department);
  expect(action, JSON.stringify(view)).toBeTruthy();
  expect(action!.status).toBe("pending");
  expect(action!.trace_id).toBe(view.trace_id);
  return action!;
}

/** What BuyerCorp itself says about a department's budget (read through the hub). */
async function buyerFacts(api: Api, department: string): Promise<string> {
  const view = await askBuyer(api, `what is the ${department} budget?`);
  expect(view.outcome.status).toBe("connected");
  expect(view.proposed_actions).toEqual([]);
  return JSON.stringify(view.facts);
}

async function openInbox(page: Page) {
  await page.goto("/inbox");
  await expect(page.getByTestId("inbox-page")).toHaveAttribute("data-hydrated", "true");
  await expect(page.getByTestId("inbox-loading")).toHaveCount(0);
}

test("approving a proposal in the inbox page performs the hub's own write, and only then", async ({ page, api }) => {
  const errors = watchErrors(page);
  const to = amount();
  const buyerBefore = await buyerFacts(api, "operations");
  const action = await propose(api, "operations", to);

  await openInbox(page);
  const entry = page.getByTestId(`inbox-entry-${action.id}`);
  await expect(entry).toHaveAttribute("data-status", "pending");
  await expect(entry).toContainText("set_budget");
  await expect(entry).toContainText("operations");
  await expect(entry.getByTestId("entry-trace")).toHaveText(action.trace_id);
  // The rationale is the peer's words: marked and inert.
  const why = entry.getByTestId("entry-rationale");
  await expect(why).toHaveAttribute("data-untrusted", "true");
  await expect(why).toContainText("from buyercorp, unverified");
  await expect(why.locator("a, button, input")).toHaveCount(0);
  // Before approval: no plan row with this amount.
  await expect(page.getByTestId("plan-operations").filter({ hasText: shown(to) })).toHaveCount(0);

  await entry.getByTestId("approve").click();
  await expect(entry).toHaveAttribute("data-status", "approved");
  await expect(entry.getByTestId("decision")).toContainText("Approved by operator at");
  await expect(entry.getByTestId("effect")).toHaveText(`the hub's budget plan for operations is now ${to}.00`);
  await expect(entry.getByTestId("approve")).toHaveCount(0);
  const plan = page.getByTestId("plan-operations");
  await expect(plan).toContainText(shown(to));
  await expect(plan).toContainText("operator");
  await expect(plan).toContainText("buyercorp");
  const shot = path.join(SHOTS, "inbox-approved.png");
  await page.screenshot({ path: shot, fullPage: true });
  console.log(`screenshot: ${shot}`);

  // It survives a reload (stored, not painted).
  await openInbox(page);
  await expect(page.getByTestId(`inbox-entry-${action.id}`)).toHaveAttribute("data-status", "approved");
  await expect(page.getByTestId("plan-operations")).toContainText(shown(to));

  // Idempotent: approving again answers the first decision; rejecting now is 409.
  const again = await api.decide(action.id, "approve");
  expect(again.status()).toBe(200);
  const first = (await again.json()) as ProposedActionView;
  expect(first.decided_by).toBe("operator");
  expect(first.trace_id).toBe(action.trace_id);
  const opposite = await api.decide(action.id, "reject");
  expect(opposite.status(), await opposite.text()).toBe(409);

  // The system that proposed it wrote nothing: BuyerCorp's own answer is unchanged.
  expect(await buyerFacts(api, "operations")).toBe(buyerBefore);
  expect(errors).toEqual([]);
});

test("rejecting a proposal writes nothing, and a decision needs the CSRF token", async ({ page, api }) => {
  const to = amount();
  const action = await propose(api, "support", to);

  // No CSRF token, or someone else's: refused, still pending.
  expect((await api.decide(action.id, "approve", null)).status()).toBe(403);
  expect((await api.decide(action.id, "approve", "not-the-token")).status()).toBe(403);

  await openInbox(page);
  const entry = page.getByTestId(`inbox-entry-${action.id}`);
  await expect(entry).toHaveAttribute("data-status", "pending");
  await entry.getByTestId("reject").click();
  await expect(entry).toHaveAttribute("data-status", "rejected");
  await expect(entry.getByTestId("decision")).toContainText("Rejected by operator at");
  await expect(entry.getByTestId("effect")).toHaveText("nothing was written");
  await expect(page.getByTestId("plan-support").filter({ hasText: shown(to) })).toHaveCount(0);

  const late = await api.decide(action.id, "approve");
  expect(late.status()).toBe(409);
  expect(await late.text()).toContain("already Rejected");
  const missing = await api.decide("999999", "approve");
  expect(missing.status()).toBe(404);

  // The decision is in the hub's audit trail under the proposal's trace id.
  const hub = (await api.topology()).hub_id;
  const audit = (await (await page.request.get(`/api/nodes/${hub}/audit?limit=200`)).json()) as {
    trace_id: string;
    outcome: string;
  }[];
  expect(audit.some((a) => a.trace_id === action.trace_id && a.outcome === "refused")).toBe(true);
});

test("the canvas and the inbox link to each other", async ({ page }) => {
  await page.goto("/");
  await page.getByTestId("nav-inbox").click();
  await expect(page).toHaveURL(/\/inbox$/);
  await expect(page.getByTestId("inbox-page")).toBeVisible();
  await page.getByTestId("nav-canvas").click();
  await expect(page).toHaveURL(/\/$/);
});

test("the canvas's Inbox link counts waiting proposals, live", async ({ page, api }) => {
  await page.goto("/");
  await expect(page.getByRole("region", { name: "Ecosystem canvas" })).toHaveAttribute("data-hydrated", "true");
  await expect(page.getByTestId("live-status")).toHaveAttribute("data-state", "live");
  const pending = async () => ((await (await page.request.get("/api/inbox/pending")).json()) as { pending: number }).pending;
  const before = await pending();
  const link = page.getByTestId("nav-inbox");
  if (before > 0) await expect(link.getByTestId("inbox-pending")).toHaveText(String(before));

  // A proposal arrives (another tab, here the API): the count follows, no reload.
  const action = await propose(api, "finance", amount());
  await expect(link.getByTestId("inbox-pending")).toHaveText(String(before + 1));
  await expect(link).toHaveAttribute("aria-label", `Inbox, ${before + 1} waiting for approval`);

  // A decision: it goes back down.
  expect((await api.decide(action.id, "reject")).status()).toBe(200);
  if (before > 0) await expect(link.getByTestId("inbox-pending")).toHaveText(String(before));
  else await expect(link.getByTestId("inbox-pending")).toHaveCount(0);
});
