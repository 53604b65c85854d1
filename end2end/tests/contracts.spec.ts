// A data-share edge's data contracts in its drawer, against the real peers:
// BuyerCorp's contract (negotiated by scripts/stack at start, from its own
// side) with its transcript as the hub recorded it, the hub's empty state,
// then the hub negotiating its own from the drawer, and a query that reads
// under it. Serial: the hub's negotiation changes what the later tests see
// (and the "before" test skips itself on a stack where the hub already
// negotiated, e.g. a second run against the same stack).
import type { Locator, Page, Response } from "@playwright/test";
import { test, expect, tokens, openCanvas, watchErrors } from "./support";

const EDGE = "buyercorp->vendorcorp:orders.query";
const CONTRACT_ID = /^c-[0-9a-f]{12}$/;
const PURPOSE = "Aggregate queries from the Wall Street canvas drawer";

type Untrusted = { text: string; from: string };
type Message = {
  from: string;
  intent: string;
  columns: string[];
  retention_days: number | null;
  purpose: Untrusted | null;
  rationale: Untrusted | null;
};
type Turn = {
  seq: number;
  context_id: string;
  sent: Message;
  reply: Message | null;
  grant_id: string | null;
  failure: { status: string; reason?: string; detail?: string } | null;
};
type Party = {
  consumer: string;
  is_hub: boolean;
  may_negotiate: boolean;
  contract: {
    contract_id: string;
    columns: string[];
    retention_days: number | null;
    expires_at: string | null;
    expired: boolean;
  } | null;
  state: "idle" | "negotiating" | "executing" | "error";
  state_detail: string;
  transcript: Turn[];
};
type ContractsView = {
  edge: string;
  capability: string;
  provider: string;
  negotiation: string | null;
  parties: Party[];
};

const path = (what: "contract" | "negotiate" | "query") => `/api/edges/${encodeURIComponent(EDGE)}/${what}`;

/** The next answer to `method` on this edge's `what` route. */
function answerOf(page: Page, method: string, what: "contract" | "negotiate" | "query", timeout = 15_000): Promise<Response> {
  return page.waitForResponse(
    (r) => r.request().method() === method && new URL(r.url()).pathname === path(what),
    { timeout },
  );
}

/** A body the browser got must hold no token, token env var or header. */
function expectNoSecrets(where: string, body: string) {
  for (const s of ["token", "Token", "TOKEN", "Bearer", "WS_TOKEN"]) {
    expect(body.includes(s), `${where} contains ${s}`).toBe(false);
  }
  for (const [name, value] of Object.entries(tokens())) {
    expect(value.length > 0 && body.includes(value), `${where} contains the value of ${name}`).toBe(false);
  }
}

/** Opens the edge's drawer; returns it and the contracts view it loaded. */
async function openContracts(page: Page): Promise<{ drawer: Locator; view: ContractsView }> {
  await openCanvas(page);
  const loaded = answerOf(page, "GET", "contract");
  await page.getByTestId(`edge-${EDGE}`).click();
  const res = await loaded;
  const body = await res.text();
  expect(res.status(), body).toBe(200);
  expectNoSecrets("the contract answer", body);
  const drawer = page.getByTestId("drawer");
  await expect(drawer.getByTestId("contract-panel")).toBeVisible();
  return { drawer, view: JSON.parse(body) as ContractsView };
}

/** The column names shown in a column list. */
async function columnsOf(list: Locator): Promise<string[]> {
  return (await list.getByTestId("column").allTextContents()).map((c) => c.trim());
}

/** Peer words in a transcript are inert, marked text: nothing to click. */
async function expectInert(transcript: Locator) {
  await expect(transcript.locator("a, button, input, textarea, select, [contenteditable=true]")).toHaveCount(0);
  const boxes = transcript.locator("[data-untrusted=true]");
  for (const box of await boxes.all()) {
    await expect(box).toContainText("unverified");
    const text = box.getByTestId("untrusted-text");
    expect(await text.evaluate((el) => el.children.length)).toBe(0);
  }
}

test.describe.serial("data contracts in a data-share drawer", () => {
  let hub = "hub";

  test.beforeEach(async ({ api }) => {
    hub = (await api.topology()).hub_id;
    await api.ensureEdge("buyercorp", "vendorcorp", "orders.query");
  });

  test("shows BuyerCorp's negotiated contract and transcript, and the hub's empty state", async ({ page }) => {
    const errors = watchErrors(page);
    const { drawer, view } = await openContracts(page);
    test.skip(
      view.parties.some((p) => p.is_hub && p.contract !== null),
      "the hub already negotiated on this stack (an earlier run): its empty state is gone",
    );

    // The edge's consumer first, then the hub.
    expect(view.parties.map((p) => p.consumer)).toEqual(["buyercorp", hub]);
    const parties = drawer.locator("[data-testid^=contract-party-]");
    await expect(parties).toHaveCount(2);
    await expect(parties.nth(0)).toHaveAttribute("data-testid", "contract-party-buyercorp");
    await expect(parties.nth(1)).toHaveAttribute("data-testid", `contract-party-${hub}`);

    // The hub: nothing negotiated yet, and a button to start.
    const hubParty = drawer.getByTestId(`contract-party-${hub}`);
    await expect(hubParty.getByTestId(`contract-state-${hub}`)).toHaveAttribute("data-state", "idle");
    await expect(hubParty.getByTestId(`contract-empty-${hub}`)).toBeVisible();
    await expect(hubParty.getByTestId(`contract-id-${hub}`)).toHaveCount(0);
    await expect(hubParty.getByTestId("turn")).toHaveCount(0);
    await expect(hubParty.getByTestId(`negotiate-${hub}`)).toBeEnabled();
    await expect(hubParty.getByTestId(`negotiate-${hub}`)).toHaveText("Negotiate");
    // The drawer's queries run as the hub: without its contract, VendorCorp
    // refuses, and the drawer shows VendorCorp's own words.
    const query = drawer.getByTestId("query-panel");
    await query.getByTestId("query-run").click();
    const refused = query.getByTestId("answer-outcome");
    await expect(refused).toHaveAttribute("data-outcome", "not_connected");
    await expect(refused).toContainText("NO_CONTRACT: no negotiated contract covers this consumer and capability");

    // BuyerCorp: the contract VendorCorp granted it.
    const buyer = drawer.getByTestId("contract-party-buyercorp");
    await expect(buyer.getByTestId("contract-state-buyercorp")).toHaveAttribute("data-state", "executing");
    await expect(buyer.getByTestId("contract-empty-buyercorp")).toHaveCount(0);
    await expect(buyer.getByTestId("contract-id-buyercorp")).toHaveText(CONTRACT_ID);
    const granted = await columnsOf(buyer.getByTestId("contract-columns-buyercorp"));
    expect(granted).toEqual(expect.arrayContaining(["region", "order_date", "order_value"]));
    expect(granted).not.toContain("order_id");
    expect(granted).not.toContain("customer_email");
    await expect(buyer.getByTestId("contract-retention-buyercorp")).toHaveText("30 days");
    // A member starts its own negotiations: no button for it here.
    await expect(buyer.getByRole("button")).toHaveCount(0);

    // Its transcript: the messages that crossed the hub, in order.
    const transcript = buyer.getByTestId("transcript-buyercorp");
    const first = transcript.getByTestId("turn").first();
    const sent = first.getByTestId("turn-sent");
    await expect(sent).toHaveAttribute("data-from", "buyercorp");
    await expect(sent).toHaveAttribute("data-intent", "propose");
    await expect(sent.getByTestId("turn-who")).toHaveText("buyercorp propose");
    const asked = await columnsOf(sent.getByTestId("turn-columns"));
    expect(asked).toHaveLength(4);
    expect(asked).toContain("order_id");
    const reply = first.getByTestId("turn-reply");
    await expect(reply).toHaveAttribute("data-from", "vendorcorp");
    await expect(reply).toHaveAttribute("data-intent", "counter");
    await expect(reply.getByTestId("turn-who")).toHaveText("vendorcorp counter");
    const countered = await columnsOf(reply.getByTestId("turn-columns"));
    expect(countered.length).toBeGreaterThan(0);
    expect(countered).not.toContain("order_id");
    // The grant the drawer shows is one a turn carried.
    const contractId = (await buyer.getByTestId("contract-id-buyercorp").textContent())?.trim();
    await expect(transcript.getByTestId("turn-grant-id").last()).toHaveText(contractId ?? "");
    // The page shows the turns the hub recorded, no more, no fewer.
    const buyerView = view.parties.find((p) => p.consumer === "buyercorp");
    await expect(transcript.getByTestId("turn")).toHaveCount(buyerView?.transcript.length ?? -1);
    await expectInert(transcript);
    expect(errors, errors.join("\n")).toEqual([]);
  });

  test("the hub negotiates its own contract from the drawer, then reads under it", async ({ page }) => {
    test.setTimeout(60_000);
    const errors = watchErrors(page);
    const { drawer, view } = await openContracts(page);
    expect(view.negotiation).toBe("orders.negotiate");
    const hubParty = drawer.getByTestId(`contract-party-${hub}`);

    // The form asks for the data-share's queryable columns, never a
    // personal or key column, for the drawer's purpose.
    await expect(hubParty.getByTestId(`negotiate-purpose-${hub}`)).toHaveValue(PURPOSE);
    for (const c of ["region", "order_date", "order_value"]) {
      await expect(hubParty.getByTestId(`negotiate-column-${c}`)).toBeChecked();
    }
    for (const c of ["order_id", "customer_email", "customer_name"]) {
      await expect(hubParty.getByTestId(`negotiate-column-${c}`)).toHaveCount(0);
    }

    // Hold the POST until the page has shown it is negotiating.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    await page.route((url) => url.pathname === path("negotiate"), async (route) => {
      await held;
      await route.continue();
    });
    const negotiated = answerOf(page, "POST", "negotiate", 30_000);
    await hubParty.getByTestId(`negotiate-${hub}`).click();
    await expect(hubParty.getByTestId(`contract-state-${hub}`)).toHaveAttribute("data-state", "negotiating");
    await expect(hubParty.getByTestId(`negotiate-${hub}`)).toBeDisabled();
    release();

    const res = await negotiated;
    const body = await res.text();
    expect(res.status(), body).toBe(200);
    expectNoSecrets("the negotiate answer", body);
    const after = JSON.parse(body) as ContractsView;
    const mine = after.parties.find((p) => p.is_hub);
    expect(mine?.consumer).toBe(hub);
    expect(mine?.contract?.contract_id).toMatch(CONTRACT_ID);
    expect(mine?.contract?.columns).not.toContain("order_id");
    const sentBody = res.request().postDataJSON() as { columns: string[]; purpose: string; retention_days: number };
    expect(sentBody.purpose).toBe(PURPOSE);
    expect(sentBody.retention_days).toBe(30);
    expect(sentBody.columns).toEqual(expect.arrayContaining(["region", "order_date", "order_value"]));

    // The drawer shows the view the POST returned.
    await expect(hubParty.getByTestId(`contract-id-${hub}`)).toHaveText(CONTRACT_ID);
    await expect(hubParty.getByTestId(`contract-id-${hub}`)).toHaveText(mine?.contract?.contract_id ?? "");
    await expect(hubParty.getByTestId(`contract-state-${hub}`)).toHaveAttribute("data-state", "executing");
    await expect(hubParty.getByTestId(`contract-empty-${hub}`)).toHaveCount(0);
    const granted = await columnsOf(hubParty.getByTestId(`contract-columns-${hub}`));
    expect(granted.length).toBeGreaterThan(0);
    expect(granted).not.toContain("order_id");
    expect(granted).not.toContain("customer_email");

    // Its transcript: the hub proposed, VendorCorp countered or accepted,
    // and the last turn carried the grant.
    const transcript = hubParty.getByTestId(`transcript-${hub}`);
    const turns = transcript.getByTestId("turn");
    await expect(turns).toHaveCount(mine?.transcript.length ?? -1);
    await expect(turns.first().getByTestId("turn-sent")).toHaveAttribute("data-from", hub);
    await expect(turns.first().getByTestId("turn-sent")).toHaveAttribute("data-intent", "propose");
    await expect(turns.first().getByTestId("turn-reply")).toHaveAttribute("data-from", "vendorcorp");
    expect(["counter", "accept"]).toContain(await turns.first().getByTestId("turn-reply").getAttribute("data-intent"));
    await expect(turns.last().getByTestId("turn-grant-id")).toHaveText(mine?.contract?.contract_id ?? "");
    await expect(transcript.getByTestId("turn-failure")).toHaveCount(0);
    await expectInert(transcript);

    // A query through the drawer now reads under the hub's contract (and
    // the panel reads the contracts again after it).
    const query = drawer.getByTestId("query-panel");
    await query.getByTestId("query-op").selectOption("avg");
    await query.getByTestId("query-column").fill("order_value");
    await query.getByTestId("query-group-by").fill("region");
    await query.getByTestId("query-run").click();
    await expect(query.getByTestId("answer-outcome")).toHaveAttribute("data-outcome", "connected");
    await expect(query.getByTestId("query-row").first()).toBeVisible();
    await expect(hubParty.getByTestId(`contract-state-${hub}`)).toHaveAttribute("data-state", "executing");
    expect(errors, errors.join("\n")).toEqual([]);
  });

  test("a reload shows the same contracts: the state is the hub's record, not the page's", async ({ page }) => {
    const { drawer, view } = await openContracts(page);
    const mine = view.parties.find((p) => p.is_hub);
    expect(mine?.contract?.contract_id).toMatch(CONTRACT_ID);
    expect(mine?.state).toBe("executing");
    const hubParty = drawer.getByTestId(`contract-party-${hub}`);
    await expect(hubParty.getByTestId(`contract-id-${hub}`)).toHaveText(mine?.contract?.contract_id ?? "");
    await expect(hubParty.getByTestId("turn")).toHaveCount(mine?.transcript.length ?? -1);
    // Renegotiating stays possible; the button says so.
    await expect(hubParty.getByTestId(`negotiate-${hub}`)).toHaveText("Negotiate again");
  });
});
