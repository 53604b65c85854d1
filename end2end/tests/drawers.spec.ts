// Each kind of drawer against the real peers: a node's (with its audit
// trail), a data-share edge's (the result checked against the provider's
// own data, recomputed here from its SQLite file), a consult edge's (the
// answer inert and marked untrusted, proposed actions only listed).
import { execFileSync } from "child_process";
import * as path from "path";
import { test, expect, STATE, openCanvas, watchErrors } from "./support";

/** Runs SQL on a peer's database (read-only) with Python's sqlite3. */
function sql(db: string, query: string): unknown[][] {
  const script = [
    "import json, sqlite3, sys",
    "c = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True)",
    "print(json.dumps(c.execute(sys.argv[2]).fetchall()))",
  ].join("\n");
  const out = execFileSync("python3", ["-c", script, path.join(STATE, db), query], { encoding: "utf8" });
  return JSON.parse(out) as unknown[][];
}

test("a system's drawer shows its facts and recent audit entries", async ({ page, api }) => {
  const errors = watchErrors(page);
  await api.ensureEdge("buyercorp", "vendorcorp", "orders.query");
  // Make sure the trail has a call in it.
  const q = await page.request.post(`/api/edges/${encodeURIComponent("buyercorp->vendorcorp:orders.query")}/query`, {
    data: { op: "count", column: null, group_by: null },
    headers: { "X-CSRF-Token": api.csrf },
  });
  expect(q.status()).toBe(200);
  await openCanvas(page);
  await page.getByTestId("node-vendorcorp").click();
  const drawer = page.getByTestId("drawer");
  await expect(drawer.getByRole("heading", { name: "VendorCorp" })).toBeVisible();
  await expect(drawer).toContainText("orders.query");
  const audit = drawer.getByTestId("audit");
  await expect(audit).toContainText("Recent audit entries");
  await expect(audit.getByTestId("audit-entry").first()).toBeVisible();
  await expect(audit.getByTestId("audit-entry").first()).toContainText("orders.query");
  // A child node's drawer names its system.
  await page.keyboard.press("Escape");
  await page.getByTestId("node-vendorcorp/datasource/orders-db").click();
  await expect(drawer.getByRole("heading", { name: "Orders" })).toBeVisible();
  await expect(drawer).toContainText("VendorCorp");
  expect(errors, errors.join("\n")).toEqual([]);
});

test("a data-share drawer shows the provider's data, as the provider computes it", async ({ page, api }) => {
  const errors = watchErrors(page);
  const id = "buyercorp->vendorcorp:orders.query";
  await api.ensureEdge("buyercorp", "vendorcorp", "orders.query");
  await openCanvas(page);
  await page.getByTestId(`edge-${id}`).click();
  const drawer = page.getByTestId("drawer");

  // The form says what the contract lets a query name (from the registry).
  const grants = drawer.getByTestId("query-grants");
  await expect(grants).toContainText("group_by: region, order_date, product");
  await expect(grants).not.toContainText("customer_email");

  // The default: count, ungrouped.
  await expect(drawer.getByTestId("query-op")).toHaveValue("count");
  await drawer.getByTestId("query-run").click();
  await expect(drawer.getByTestId("answer-outcome")).toHaveAttribute("data-outcome", "connected");
  const [[total]] = sql("vendorcorp.db", "SELECT COUNT(*) FROM orders") as number[][];
  await expect(drawer.getByTestId("query-row")).toHaveCount(1);
  await expect(drawer.getByTestId("query-count")).toHaveText(String(total));

  // The average order value per region.
  await drawer.getByTestId("query-op").selectOption("avg");
  await drawer.getByTestId("query-column").fill("order_value");
  await drawer.getByTestId("query-group-by").fill("region");
  await drawer.getByTestId("query-run").click();
  await expect(drawer.getByTestId("query-row").nth(1)).toBeVisible();
  const expected = sql(
    "vendorcorp.db",
    "SELECT region, AVG(order_value), COUNT(*) FROM orders GROUP BY region ORDER BY region",
  ) as [string, number, number][];
  const rows = await drawer.getByTestId("query-row").evaluateAll((trs) =>
    trs.map((tr) => ({
      key: tr.querySelector("[data-testid=query-key]")?.textContent ?? "",
      value: Number(tr.querySelector("[data-testid=query-value]")?.getAttribute("data-value")),
      count: Number(tr.querySelector("[data-testid=query-count]")?.textContent),
    })),
  );
  rows.sort((a, b) => a.key.localeCompare(b.key));
  expect(rows.length).toBe(expected.length);
  expected.forEach(([region, avg, count], i) => {
    expect(rows[i].key).toBe(region);
    // The hub may round to cents; nothing more.
    expect(Math.abs(rows[i].value - avg), `${region}: ${rows[i].value} vs ${avg}`).toBeLessThanOrEqual(0.0051);
    expect(rows[i].count).toBe(count);
  });
  // A chart of the same groups.
  await expect(drawer.getByTestId("query-chart").getByTestId("query-bar")).toHaveCount(expected.length);
  // Aggregates only: no column of a raw row (no e-mail, no name) reaches the page.
  await expect(drawer).not.toContainText("@");
  expect(errors, errors.join("\n")).toEqual([]);
});

test("a consult drawer shows the answer read-only, marked untrusted, and lists proposed actions", async ({ page, api }) => {
  const view = await api.topology();
  const hub = view.hub_id;
  const id = `${hub}->buyercorp:budget.consult`;
  await api.ensureEdge(hub, "buyercorp", "budget.consult");
  await openCanvas(page);
  await page.getByTestId(`edge-${id}`).click();
  const drawer = page.getByTestId("drawer");
  await drawer.getByTestId("ask-question").fill("raise marketing budget to 150000");
  await drawer.getByTestId("ask-run").click();
  await expect(drawer.getByTestId("answer-outcome")).toHaveAttribute("data-outcome", "connected");

  const answer = drawer.getByTestId("consult-answer");
  await expect(answer).toBeVisible();
  await expect(answer).toHaveAttribute("data-untrusted", "true");
  await expect(answer).toContainText("from BuyerCorp, unverified");
  // Inert: the peer's text is one text node, nothing in the box is
  // editable, clickable or a link.
  const text = answer.getByTestId("untrusted-text");
  expect(await text.evaluate((el) => el.children.length)).toBe(0);
  expect((await text.textContent())?.length ?? 0).toBeGreaterThan(0);
  await expect(answer.locator("a, button, input, textarea, select, [contenteditable=true]")).toHaveCount(0);
  expect(await text.evaluate((el) => (el as HTMLElement).isContentEditable)).toBe(false);

  // Facts as a definition list.
  await expect(drawer.getByTestId("consult-facts").locator("dt").first()).toBeVisible();

  // The proposed budget change waits in the hub's inbox; nothing here runs it.
  const actions = drawer.getByTestId("proposed-actions");
  const action = actions.getByTestId("proposed-action").first();
  await expect(action).toContainText("set_budget");
  await expect(action).toContainText("marketing");
  await expect(action).toHaveAttribute("data-status", "pending");
  await expect(action.getByTestId("approval-state")).toContainText("waiting for approval in");
  await expect(action.getByTestId("approval-state")).toContainText("inbox");
  await expect(actions.locator("button, a, input, form")).toHaveCount(0);
  await expect(action.getByTestId("action-rationale")).toContainText("unverified");
  const inbox = (await (await page.request.get("/api/inbox")).json()) as { action_type: string; status: string }[];
  expect(inbox.some((a) => a.action_type === "set_budget" && a.status === "pending")).toBe(true);
});

test("a consult drawer on a classify edge answers with facts", async ({ page, api }) => {
  const hub = (await api.topology()).hub_id;
  const id = `${hub}->helpdesk:ticket.classify`;
  await api.ensureEdge(hub, "helpdesk", "ticket.classify");
  await openCanvas(page);
  await page.getByTestId(`edge-${id}`).click();
  const drawer = page.getByTestId("drawer");
  await drawer.getByTestId("ask-question").fill("I cannot log in, my password reset link is broken");
  await drawer.getByTestId("ask-run").click();
  await expect(drawer.getByTestId("answer-outcome")).toHaveAttribute("data-outcome", "connected");
  await expect(drawer.getByTestId("consult-facts")).toBeVisible();
});
