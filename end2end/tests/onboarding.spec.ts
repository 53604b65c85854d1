// Onboarding from the canvas, against the real stack: the test starts a
// fourth company's server (the reference peer, `peer serve`, with a config
// of its own), and the operator adds it from its running card with "Add a
// system", lets it ask BuyerCorp's budget consult, saves, and reads its
// token once. The company sets the token; its call through the hub
// connects without a restart. The hub's topology file on disk has the new
// section, a reload of the page keeps it, and removing the system from its
// drawer takes it out again. Screenshots of the map before and after are
// kept in end2end/screenshots/.
import { ChildProcess, spawnSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { test, expect, PEER, REPO, STATE, logisticsConfig, openCanvas, startLogistics, stopPeer, watchErrors } from "./support";

const SHOTS = path.resolve(__dirname, "..", "screenshots");
const LISTEN = "127.0.0.1:3104";
const TOPOLOGY = path.join(STATE, "topology.yaml");

test.beforeAll(() => {
  test.skip(!STATE || !fs.existsSync(PEER) || !fs.existsSync(TOPOLOGY), `needs the stack of scripts/test and ${PEER}`);
});

test("an operator adds a fourth system from its card, its call crosses, and it is removed the same way", async ({ page }) => {
  test.setTimeout(90_000);
  const errors = watchErrors(page);
  const config = logisticsConfig(LISTEN, "logistics-e2e");
  // Every /api answer the page receives, to look for the token in.
  const answers: { what: string; cache: string; body: Promise<string> }[] = [];
  page.on("response", (res) => {
    const url = new URL(res.url());
    if (!url.pathname.startsWith("/api/") || url.pathname === "/api/events") return;
    answers.push({
      what: `${res.request().method()} ${url.pathname}`,
      cache: res.headers()["cache-control"] ?? "",
      body: res.text().catch(() => ""),
    });
  });
  let peer = await startLogistics(config, LISTEN, "not-a-member-yet");
  try {
    await openCanvas(page);
    await expect(page.getByTestId("node-logistics")).toHaveCount(0);
    fs.mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SHOTS, "onboard-before.png") });
    const fileBefore = fs.readFileSync(TOPOLOGY, "utf8");
    const started = Date.now();

    // Read the card from the hub's side.
    await page.getByTestId("onboard-open").click();
    await page.getByTestId("onboard-url").fill(`http://${LISTEN}`);
    await page.getByTestId("onboard-read").click();
    await expect(page.getByTestId("onboard-system")).toHaveText("logistics");
    await expect(page.getByTestId("onboard-skill")).toHaveCount(2);
    await expect(page.locator('[data-testid="onboard-skill"][data-capability="shipments.query"]')).toContainText("data-share");
    // The card's name is the company's own text, shown as such.
    await expect(page.getByTestId("onboard-card-name")).toHaveAttribute("data-untrusted", "true");

    // A rule: it may ask BuyerCorp's budget consult.
    const section = page.getByTestId("onboard-section");
    const proposed = await section.inputValue();
    expect(proposed).toContain("calls: []");
    await section.fill(proposed.replace("calls: []", "calls:\n  - { capability: budget.consult, provider: buyercorp }"));
    await page.getByTestId("onboard-save").click();
    const token = (await page.getByTestId("onboard-token").textContent())?.trim() ?? "";
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    await expect(page.getByTestId("onboard-export")).toHaveText(`export WS_TOKEN_LOGISTICS=${token}`);

    // Drawn at once (the hub reloaded and told every canvas).
    await expect(page.getByTestId("node-logistics")).toBeVisible({ timeout: 5_000 });
    const text = fs.readFileSync(TOPOLOGY, "utf8");
    expect(text).toContain("  - id: logistics\n");
    expect(text).toContain("consumers: [hub, helpdesk, logistics]");
    expect(text).not.toContain(token);
    expect(fs.readFileSync(`${TOPOLOGY}.previous`, "utf8")).toBe(fileBefore);

    // The company sets its token; its call crosses, the hub never restarted.
    await stopPeer(peer);
    peer = await startLogistics(config, LISTEN, token);
    const call = spawnSync(
      PEER,
      [
        "call", "--config", config,
        "--provider", "buyercorp", "--capability", "budget.consult",
        "--input", JSON.stringify({ question: "How much of the marketing budget is left?" }),
      ],
      { cwd: REPO, encoding: "utf8", timeout: 30_000, env: { ...process.env, WS_TOKEN_LOGISTICS: token } },
    );
    expect(call.status, `${call.stdout}\n${call.stderr}`).toBe(0);
    console.log(`onboarding: from "Add a system" to the first call crossing: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    await page.getByTestId("onboard-close").click();
    await expect(page.getByTestId("status-logistics")).toHaveText("healthy", { timeout: 10_000 });
    await page.screenshot({ path: path.join(SHOTS, "onboard-after.png") });

    // A reload keeps it: the file is the source of truth.
    await page.reload();
    await expect(page.getByTestId("node-logistics")).toBeVisible();

    // Removed from its drawer, the same way.
    await page.getByTestId("node-logistics").click();
    await expect(page.getByTestId("membership")).toBeVisible();
    await expect(page.locator('[data-testid="may-call"][data-rule="budget.consult@buyercorp"]')).toBeVisible();
    await page.getByTestId("remove-system").click();
    await page.getByTestId("remove-system-confirm").click();
    await expect(page.getByTestId("node-logistics")).toHaveCount(0, { timeout: 5_000 });
    const after = fs.readFileSync(TOPOLOGY, "utf8");
    expect(after).not.toContain("id: logistics");
    expect(after).toBe(fileBefore);

    // The token was in one answer only, the save's, which no cache keeps;
    // no other answer nor the page held it.
    const holding: string[] = [];
    for (const a of answers) {
      if ((await a.body).includes(token)) holding.push(a.what);
      if (a.what === "POST /api/systems") expect(a.cache).toBe("no-store");
    }
    expect(holding).toEqual(["POST /api/systems"]);
    await page.getByTestId("onboard-open").click();
    expect(await page.content()).not.toContain(token);
    expect(errors).toEqual([]);
  } finally {
    await stopPeer(peer);
  }
});

test("a refused onboarding shows the hub's reason and writes nothing", async ({ page }) => {
  const before = fs.readFileSync(TOPOLOGY, "utf8");
  await openCanvas(page);
  await page.getByTestId("onboard-open").click();
  await page.getByTestId("onboard-url").fill("http://169.254.169.254:80");
  await page.getByTestId("onboard-read").click();
  await expect(page.getByTestId("onboard-error")).toContainText("169.254.169.254 is a cloud metadata address");
  await expect(page.getByTestId("onboard-proposal")).toHaveCount(0);
  expect(fs.readFileSync(TOPOLOGY, "utf8")).toBe(before);
});
