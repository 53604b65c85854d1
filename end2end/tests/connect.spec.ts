// Making and removing connections: by dragging from a node's handle, by
// keyboard alone, and what the hub says about a forged request. What is
// legal is read from the hub's rules (GET /api/topology), never listed here.
import { Page } from "@playwright/test";
import { test, expect, Api, openCanvas, drag, centre, cardHead, watchErrors, TopologyView } from "./support";

/** Is `a`–`b` joined by any rule, in either direction? */
function ruled(view: TopologyView, a: string, b: string): boolean {
  return view.rules.some(
    (r) => (r.provider === b && r.consumers.includes(a)) || (r.provider === a && r.consumers.includes(b)),
  );
}

/** Watches for create requests the page sends. */
function watchCreates(page: Page): string[] {
  const seen: string[] = [];
  page.on("request", (req) => {
    if (req.method() === "POST" && new URL(req.url()).pathname === "/api/edges") seen.push(req.postData() ?? "");
  });
  return seen;
}

test("dragging to a legal target creates the edge, which survives a reload", async ({ page, api }) => {
  const errors = watchErrors(page);
  const view = await api.topology();
  // The rules say the hub may consume orders.query from VendorCorp.
  expect(view.rules.some((r) => r.capability === "orders.query" && r.provider === "vendorcorp" && r.consumers.includes(view.hub_id))).toBe(true);
  const id = `${view.hub_id}->vendorcorp:orders.query`;
  await api.removeEdge(id);
  await openCanvas(page);
  await expect(page.getByTestId(`edge-${id}`)).toHaveCount(0);

  const from = await centre(page, `handle-${view.hub_id}`);
  const to = await cardHead(page, "vendorcorp");
  await drag(page, from, to, async () => {
    // While dragging: the source is marked, legal targets lit, the rest dimmed.
    await expect(page.getByTestId(`node-${view.hub_id}`)).toHaveAttribute("data-connect", "source");
    await expect(page.getByTestId("node-vendorcorp")).toHaveAttribute("data-connect", "legal");
    for (const n of view.nodes.filter((n) => n.node_type === "system" && n.id !== "vendorcorp")) {
      const legal = ruled(view, view.hub_id, n.id) && view.rules.some((r) => {
        const open = (c: string, p: string) => r.provider === p && r.consumers.includes(c) && !view.edges.some((e) => e.consumer === c && e.provider === p && e.capability === r.capability);
        return open(view.hub_id, n.id) || open(n.id, view.hub_id);
      });
      await expect(page.getByTestId(`node-${n.id}`)).toHaveAttribute("data-connect", legal ? "legal" : "illegal");
    }
  });
  await expect(page.getByTestId(`node-vendorcorp`)).toHaveAttribute("data-connect", "");
  const edge = page.getByTestId(`edge-${id}`);
  await expect(edge).toBeVisible();
  await expect(edge).toHaveText("orders.query");
  await expect(page.getByTestId("announcer")).toContainText("Connected");
  expect(await api.hasEdge(id)).toBe(true);

  await page.reload();
  await expect(page.getByTestId(`edge-${id}`)).toBeVisible();
  expect(errors, errors.join("\n")).toEqual([]);
});

test("dropping on an illegal target is refused with the reason, and nothing is sent", async ({ page, api }) => {
  const view = await api.topology();
  // Helpdesk and VendorCorp: no rule joins them (checked, not assumed).
  expect(ruled(view, "helpdesk", "vendorcorp")).toBe(false);
  await openCanvas(page);
  const creates = watchCreates(page);
  await drag(page, await centre(page, "handle-helpdesk"), await cardHead(page, "vendorcorp"), async () => {
    await expect(page.getByTestId("node-helpdesk")).toHaveAttribute("data-connect", "source");
    await expect(page.getByTestId("node-vendorcorp")).toHaveAttribute("data-connect", "illegal");
    await expect(page.locator(".node-group.connect-illegal.connect-hover")).toHaveCount(1);
    await expect(page.locator(".connect-line.illegal")).toHaveCount(1);
  });
  const announcer = page.getByTestId("announcer");
  await expect(announcer).toHaveAttribute("data-kind", "refused");
  await expect(announcer).toContainText("no rule lets Helpdesk consume anything from VendorCorp");
  expect(creates).toEqual([]);
  await expect(page.locator("[data-testid^='edge-vendorcorp->helpdesk'], [data-testid^='edge-helpdesk->vendorcorp']")).toHaveCount(0);
  // Nothing stays lit or dimmed once the drag is over.
  await expect(page.locator("[data-connect='illegal'], [data-connect='legal']")).toHaveCount(0);
});

test("a pair with several legal capabilities asks which one", async ({ page, api }) => {
  const view = await api.topology();
  const between = view.rules.flatMap((r) =>
    r.consumers
      .filter((c) => (r.provider === "buyercorp" && c === "helpdesk") || (r.provider === "helpdesk" && c === "buyercorp"))
      .map((c) => `${c}->${r.provider}:${r.capability}`),
  );
  // ticket.classify and ticket.triage one way, budget.consult the other.
  expect(between.length).toBe(3);
  for (const id of between) await api.removeEdge(id);
  await openCanvas(page);
  await drag(page, await centre(page, "handle-buyercorp"), await cardHead(page, "helpdesk"));
  const chooser = page.getByTestId("connect-chooser");
  await expect(chooser).toBeVisible();
  await expect(chooser.getByTestId("connect-option")).toHaveCount(between.length);
  const ids = await chooser.getByTestId("connect-option").evaluateAll((els) => els.map((e) => e.getAttribute("data-edge-id")));
  expect(ids.sort()).toEqual([...between].sort());
  // Choose the consult Helpdesk makes of BuyerCorp.
  const want = between.find((id) => id.startsWith("helpdesk->")) ?? "";
  await chooser.locator(`[data-edge-id="${want}"]`).click();
  await expect(page.getByTestId(`edge-${want}`)).toBeVisible();
  await expect(chooser).toHaveCount(0);
  expect(await api.hasEdge(want)).toBe(true);
  for (const id of between.filter((id) => id !== want)) expect(await api.hasEdge(id)).toBe(false);
});

test("the hub refuses a forged create for an illegal pair, and one without the CSRF token", async ({ page, api, csrf }) => {
  const view = await api.topology();
  expect(ruled(view, "vendorcorp", "helpdesk")).toBe(false);
  const forged = await page.request.post("/api/edges", {
    data: { consumer: "helpdesk", provider: "vendorcorp", capability: "orders.query" },
    headers: { "X-CSRF-Token": csrf },
  });
  expect(forged.status()).toBe(403);
  const body = (await forged.json()) as { error: string; reason: string };
  expect(body.reason).toBe("NOT_PERMITTED");
  expect(body.error).toContain("helpdesk");
  expect(body.error).toContain("vendorcorp");

  // A capability the provider does not offer, or a provider that does not exist.
  for (const data of [
    { consumer: view.hub_id, provider: "vendorcorp", capability: "budget.consult" },
    { consumer: view.hub_id, provider: "nobody", capability: "orders.query" },
  ]) {
    const res = await page.request.post("/api/edges", { data, headers: { "X-CSRF-Token": csrf } });
    expect([403, 404], JSON.stringify(data)).toContain(res.status());
  }
  // A legal pair without the token: refused as a cross-site request.
  const noToken = await page.request.post("/api/edges", {
    data: { consumer: view.hub_id, provider: "buyercorp", capability: "budget.consult" },
  });
  expect(noToken.status()).toBe(403);
  const wrongToken = await page.request.post("/api/edges", {
    data: { consumer: view.hub_id, provider: "buyercorp", capability: "budget.consult" },
    headers: { "X-CSRF-Token": `${csrf}0` },
  });
  expect(wrongToken.status()).toBe(403);
  expect((await api.topology()).edges.map((e) => e.id)).toEqual(view.edges.map((e) => e.id));
});

test("an edge is removed from its drawer, and with Delete on its label", async ({ page, api }) => {
  const hub = (await api.topology()).hub_id;
  const first = `${hub}->vendorcorp:orders.query`;
  const second = `${hub}->buyercorp:budget.consult`;
  await api.ensureEdge(hub, "vendorcorp", "orders.query");
  await api.ensureEdge(hub, "buyercorp", "budget.consult");
  await openCanvas(page);

  await page.getByTestId(`edge-${first}`).click();
  await page.getByTestId("drawer").getByTestId("edge-remove").click();
  await expect(page.getByTestId(`edge-${first}`)).toHaveCount(0);
  await expect(page.getByTestId("drawer")).toHaveCount(0);
  await expect(page.getByTestId("announcer")).toContainText("Removed");
  expect(await api.hasEdge(first)).toBe(false);

  await page.getByTestId(`edge-${second}`).focus();
  await page.keyboard.press("Delete");
  await expect(page.getByTestId(`edge-${second}`)).toHaveCount(0);
  expect(await api.hasEdge(second)).toBe(false);
  // Focus lands on the consumer, not on nothing.
  await expect(page.getByTestId(`node-${hub}`)).toBeFocused();
});

test("a connection can be made with the keyboard alone", async ({ page, api }) => {
  const view = await api.topology();
  const hub = view.hub_id;
  const target = `${hub}->buyercorp:budget.consult`;
  await api.removeEdge(target);
  await openCanvas(page);

  // Tab to the hub's node.
  let reached = false;
  for (let i = 0; i < 40 && !reached; i++) {
    await page.keyboard.press("Tab");
    reached = (await page.evaluate(() => document.activeElement?.getAttribute("data-testid"))) === `node-${hub}`;
  }
  expect(reached).toBe(true);

  // c opens the list of legal connections; Escape cancels and gives focus back.
  await page.keyboard.press("c");
  const chooser = page.getByTestId("connect-chooser");
  await expect(chooser).toBeVisible();
  await expect(page.getByTestId("connect-options")).toBeFocused();
  await page.keyboard.press("Escape");
  await expect(chooser).toHaveCount(0);
  await expect(page.getByTestId(`node-${hub}`)).toBeFocused();

  // Again: arrows to the wanted option, Enter connects.
  await page.keyboard.press("c");
  await expect(page.getByTestId("connect-options")).toBeFocused();
  const ids = await page.getByTestId("connect-option").evaluateAll((els) => els.map((e) => e.getAttribute("data-edge-id")));
  // Every option is legal by the rules and not made yet.
  for (const id of ids) {
    const [pair, cap] = (id ?? "").split(":");
    const [consumer, provider] = pair.split("->");
    expect(view.rules.some((r) => r.capability === cap && r.provider === provider && r.consumers.includes(consumer)), id ?? "").toBe(true);
    expect(view.edges.some((e) => e.id === id), id ?? "").toBe(false);
  }
  const index = ids.indexOf(target);
  expect(index).toBeGreaterThanOrEqual(0);
  for (let i = 0; i < index; i++) await page.keyboard.press("ArrowDown");
  await expect(page.getByTestId("connect-options")).toHaveAttribute("aria-activedescendant", `connect-option-${index}`);
  await page.keyboard.press("Enter");

  const edge = page.getByTestId(`edge-${target}`);
  await expect(edge).toBeVisible();
  await expect(edge).toBeFocused();
  await expect(page.getByTestId("announcer")).toContainText("Connected: ");
  await expect(page.getByTestId("announcer")).toHaveAttribute("role", "status");
  expect(await api.hasEdge(target)).toBe(true);
  // Enter on the new edge opens its drawer; Escape closes it.
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("drawer").getByTestId("ask-panel")).toBeVisible();
  await page.keyboard.press("Escape");
  await expect(page.getByTestId("drawer")).toHaveCount(0);
});

test("the node drawer's Connect… button opens the same list", async ({ page, api }) => {
  await openCanvas(page);
  await page.getByTestId("node-buyercorp").click();
  await page.getByTestId("drawer-connect").click();
  const chooser = page.getByTestId("connect-chooser");
  await expect(chooser).toBeVisible();
  const view = await api.topology();
  // A negotiation is no edge of its own (it is started from a data-share
  // edge's drawer): the chooser offers every other open connection.
  const open = view.rules.filter((r) => r.kind !== "negotiation").flatMap((r) =>
    r.consumers
      .filter((c) => c === "buyercorp" || r.provider === "buyercorp")
      .map((c) => `${c}->${r.provider}:${r.capability}`)
      .filter((id) => !view.edges.some((e) => e.id === id)),
  );
  await expect(chooser.getByTestId("connect-option")).toHaveCount(open.length);
  // Escape closes the chooser only; the drawer stays.
  await page.keyboard.press("Escape");
  await expect(chooser).toHaveCount(0);
  await expect(page.getByTestId("drawer")).toBeVisible();
});
