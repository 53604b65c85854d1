// The hub's own agents (DESIGN.md §5) on the canvas. Without a model tier
// (the default deployment): the connection recommender lists exactly the
// registry's open connections (computed here from GET /api/topology, never
// listed), Connect makes one through the same create a drag makes, and the
// data interpreter is not offered at all. With the stand-in model
// (WS_MODEL_STANDIN=1, set by scripts/test): the list is ranked by a model
// and the orchestrator's run is shown as a transcript.
//
// This file runs first (files go alphabetically, one worker): it leaves
// the edges and the agent config as it found them.
import * as fs from "fs";
import * as path from "path";
import { APIRequestContext } from "@playwright/test";
import { test, expect, REPO, STATE, openCanvas, watchErrors, NodeView, TopologyView } from "./support";

type AgentsView = { recommender: boolean; recommender_model: boolean; interpreter: boolean };

/** Which of its own agents the hub offers. */
async function agents(request: APIRequestContext): Promise<AgentsView> {
  const res = await request.get("/api/agents");
  expect(res.status(), await res.text()).toBe(200);
  return (await res.json()) as AgentsView;
}

/** Polls /api/agents until `ok` holds (the hub re-reads its agent file). */
async function waitForAgents(request: APIRequestContext, ok: (a: AgentsView) => boolean, what: string) {
  await expect
    .poll(async () => ok(await agents(request)), { message: `GET /api/agents: ${what}`, timeout: 15_000 })
    .toBe(true);
}

type CapabilityRef = { id: string; kind: string };
/** A node as /api/topology serves it, with its capabilities. */
type RegistryNode = NodeView & { provides: CapabilityRef[]; consumes: CapabilityRef[] };

/**
 * What the recommender may suggest, from the registry alone: every rule's
 * consumer → provider not established yet, no negotiation (it is no
 * connection of its own), no system consuming from itself; and, as
 * DESIGN.md §5 puts it, the provider/consumer intersection: the provider
 * provides the capability and the consumer consumes it (the hub consumes
 * whatever a rule names it for).
 */
function openConnections(view: TopologyView): string[] {
  const nodes = view.nodes as RegistryNode[];
  const has = (id: string, side: "provides" | "consumes", cap: string) =>
    nodes.some((n) => n.id === id && (n[side] ?? []).some((c) => c.id === cap));
  const made = new Set(view.edges.map((e) => e.id));
  const ids = view.rules
    .filter((r) => r.kind !== "negotiation" && has(r.provider, "provides", r.capability))
    .flatMap((r) =>
      r.consumers
        .filter((c) => c !== r.provider && (c === view.hub_id || has(c, "consumes", r.capability)))
        .map((c) => `${c}->${r.provider}:${r.capability}`),
    )
    .filter((id) => !made.has(id));
  return [...new Set(ids)].sort();
}

/** The edge ids the open panel lists, in its order. */
async function listed(page: import("@playwright/test").Page): Promise<string[]> {
  return page
    .getByTestId("suggestions")
    .getByTestId("suggestion")
    .evaluateAll((els) => els.map((e) => e.getAttribute("data-edge") ?? ""));
}

test("the recommender lists the registry's open connections, and Connect makes one", async ({ page, api }) => {
  const errors = watchErrors(page);
  const view = await api.topology();
  const want = openConnections(view);
  expect(want.length, "the topology leaves some connection to make").toBeGreaterThan(0);

  await openCanvas(page);
  const button = page.getByTestId("suggestions-open");
  await expect(button).toBeVisible();
  await expect(button).toHaveAttribute("aria-expanded", "false");
  await button.click();
  await expect(button).toHaveAttribute("aria-expanded", "true");
  const panel = page.getByTestId("suggestions");
  await expect(panel).toBeVisible();
  const ranked = panel.getByTestId("suggestions-ranked");
  await expect(ranked).toHaveAttribute("data-ranked-by", "rules");
  await expect(ranked).toHaveText("ranked by the registry's rules");
  await expect(panel.getByTestId("transcript")).toHaveCount(0);
  await expect(panel.getByTestId("suggestion")).toHaveCount(want.length);
  expect((await listed(page)).sort()).toEqual(want);
  await expect(panel.getByTestId("suggestions-empty")).toHaveCount(0);

  // Each names both ends, its capability and kind, and the hub's reason.
  const first = panel.getByTestId("suggestion").first();
  const id = (await first.getAttribute("data-edge")) ?? "";
  const [ends, capability] = id.split(":");
  const [consumer, provider] = ends.split("->");
  const name = (node: string) => view.nodes.find((n) => n.id === node)?.name ?? node;
  await expect(first.getByTestId("suggestion-consumer")).toHaveText(name(consumer));
  await expect(first.getByTestId("suggestion-provider")).toHaveText(name(provider));
  await expect(first.getByTestId("suggestion-capability")).toHaveText(capability);
  const rule = view.rules.find((r) => r.capability === capability && r.provider === provider);
  await expect(first).toHaveAttribute("data-kind", rule?.kind ?? "?");
  await expect(first.getByTestId("suggestion-why")).not.toBeEmpty();
  // No model ranked them: no model words.
  await expect(panel.getByTestId("suggestion-model-why")).toHaveCount(0);

  await expect(page.getByTestId(`edge-${id}`)).toHaveCount(0);
  try {
    await first.getByTestId("suggestion-accept").click();
    // Drawn, recorded by the hub, and gone from the list.
    await expect(page.getByTestId(`edge-${id}`)).toBeVisible();
    await expect(page.getByTestId("announcer")).toContainText("Connected");
    expect(await api.hasEdge(id)).toBe(true);
    await expect(panel).toBeVisible();
    await expect(panel.locator(`[data-testid="suggestion"][data-edge="${id}"]`)).toHaveCount(0);
    await expect(panel.getByTestId("suggestion")).toHaveCount(want.length - 1);
    expect((await listed(page)).sort()).toEqual(want.filter((w) => w !== id));
  } finally {
    await api.removeEdge(id);
  }
  expect(await api.hasEdge(id)).toBe(false);
  // The canvas follows the removal live, and the list with it.
  await expect(page.getByTestId(`edge-${id}`)).toHaveCount(0);
  await expect(panel.locator(`[data-testid="suggestion"][data-edge="${id}"]`)).toHaveCount(1);

  // Closing gives focus back to the button.
  await panel.getByTestId("suggestions-close").click();
  await expect(panel).toHaveCount(0);
  await expect(button).toBeFocused();
  expect(errors, errors.join("\n")).toEqual([]);
});

test("without a model tier the interpreter is not offered", async ({ page }) => {
  const offered = await agents(page.request);
  expect(offered.interpreter).toBe(false);
  await openCanvas(page);
  // The page has read what is offered: the recommender's entry is there.
  await expect(page.getByTestId("suggestions-open")).toBeVisible();
  await page.getByTestId("node-vendorcorp").click();
  const drawer = page.getByTestId("drawer");
  await expect(drawer.getByRole("heading", { name: "VendorCorp" })).toBeVisible();
  await expect(page.getByTestId("interpret")).toHaveCount(0);
  await expect(page.getByTestId("interpret-panel")).toHaveCount(0);
});

test("with the stand-in model the suggestions are ranked by a model, with the run's transcript", async ({ page, api }) => {
  test.skip(!process.env.WS_MODEL_STANDIN, "needs the stand-in model server: WS_MODEL_STANDIN=1 (scripts/test sets it)");
  test.setTimeout(120_000);
  const errors = watchErrors(page);
  const live = path.join(STATE, "agents.yaml");
  expect(fs.existsSync(live), `${live}: the stack passes the hub --agents here`).toBe(true);
  const want = openConnections(await api.topology());
  await openCanvas(page);
  try {
    fs.copyFileSync(path.join(REPO, "config", "agents.standin.yaml"), live);
    await waitForAgents(page.request, (a) => a.recommender_model, "recommender_model becomes true");
    await page.reload();
    await expect(page.getByRole("region", { name: "Ecosystem canvas" })).toHaveAttribute("data-hydrated", "true");

    // The interpreter, if this tier serves it too: a sentence, or why not
    // (before the panel opens: it covers the canvas's left side).
    if ((await agents(page.request)).interpreter) {
      await page.getByTestId("node-vendorcorp").click();
      await page.getByTestId("interpret").click();
      const said = page.getByTestId("interpretation").or(page.getByTestId("interpretation-note"));
      await expect(said).toBeVisible({ timeout: 30_000 });
      await page.keyboard.press("Escape");
      await expect(page.getByTestId("drawer")).toHaveCount(0);
    }

    await page.getByTestId("suggestions-open").click();
    const panel = page.getByTestId("suggestions");
    const ranked = panel.getByTestId("suggestions-ranked");
    await expect(ranked).toHaveAttribute("data-ranked-by", "model", { timeout: 30_000 });
    await expect(ranked).toHaveText("ranked by a model");
    // A model reorders the registry's connections; it adds none.
    expect((await listed(page)).sort()).toEqual(want);
    for (const words of await panel.getByTestId("suggestion-model-why").all()) {
      await expect(words).toHaveAttribute("data-untrusted", "true");
      await expect(words.locator(".untrusted-mark")).toContainText("unverified");
    }

    const transcript = panel.getByTestId("transcript");
    await expect(transcript).toBeVisible();
    // Ranked by the model means its run answered and passed the checks.
    await expect(transcript).toHaveAttribute("data-outcome", "answered");
    await expect(transcript.getByTestId("transcript-agent")).toHaveText("recommender");
    await expect(transcript.getByTestId("transcript-trace")).not.toBeEmpty();
    const steps = transcript.getByTestId("transcript-step");
    await expect(steps.first()).toBeVisible();
    expect(await steps.count()).toBeGreaterThan(0);
    // Read-only: nothing in it is a control but the folds.
    await expect(transcript.locator("button, a, input, select, textarea")).toHaveCount(0);

    expect(errors, errors.join("\n")).toEqual([]);
  } finally {
    fs.copyFileSync(path.join(REPO, "config", "agents.yaml"), live);
    await waitForAgents(page.request, (a) => !a.recommender_model, "recommender_model back to false");
  }
  // The page follows the change live (agents_changed), without a reload.
  await expect(page.getByTestId("suggestions-ranked")).toHaveAttribute("data-ranked-by", "rules", { timeout: 30_000 });
});
