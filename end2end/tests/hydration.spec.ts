import { ConsoleMessage } from "@playwright/test";
import { test, expect, credential } from "./support";

// Collects console errors and page errors so a broken hydration (a panic in
// the wasm bundle, a failed fetch of /pkg/*.wasm) fails the test.
function watchErrors(page: import("@playwright/test").Page): string[] {
  const errors: string[] = [];
  page.on("console", (msg: ConsoleMessage) => {
    if (msg.type() === "error") errors.push(msg.text());
  });
  page.on("pageerror", (err) => errors.push(String(err)));
  page.on("requestfailed", (req) => errors.push(`request failed: ${req.url()}`));
  return errors;
}

test("the canvas is rendered on the server before any script runs", async ({ browser }) => {
  // Logged in through the API (no script on the page can log in), then
  // the page with JavaScript off.
  const context = await browser.newContext({
    javaScriptEnabled: false,
    storageState: { cookies: [], origins: [] },
  });
  const login = await context.request.post("/api/login", { data: credential() });
  expect(login.status()).toBe(200);
  const page = await context.newPage();
  await page.goto("/");
  await expect(page.getByRole("heading", { name: "Wall Street" })).toBeVisible();
  const canvas = page.getByRole("region", { name: "Ecosystem canvas" });
  await expect(canvas).toHaveAttribute("data-hydrated", "false");
  // Without wasm the controls stay inert: what the server sent is all there is.
  await expect(page.getByTestId("zoom-in")).toBeDisabled();
  await context.close();
});

test("the page hydrates without a console error and the zoom control reacts", async ({ page }) => {
  const errors = watchErrors(page);
  await page.goto("/");
  const canvas = page.getByRole("region", { name: "Ecosystem canvas" });
  await expect(canvas).toHaveAttribute("data-hydrated", "true");
  // The first view is the graph fitted to the window (at most 100 %); the
  // buttons then step through 50, 67, 80, 100, 125, 150, 200 %.
  const level = page.getByTestId("zoom-level");
  const first = parseInt((await level.textContent()) ?? "", 10);
  expect(first).toBeGreaterThan(10);
  expect(first).toBeLessThanOrEqual(100);
  // (The demo fits at 67 % or more in Playwright's 1280 × 720 window, so
  // the step above the first zoom has two steps below it.)
  const steps = [50, 67, 80, 100, 125, 150, 200];
  const up = steps.findIndex((s) => s > first);
  expect(up).toBeGreaterThanOrEqual(2);
  await page.getByTestId("zoom-in").click();
  await expect(level).toHaveText(`${steps[up]}%`);
  await page.getByTestId("zoom-out").click();
  await page.getByTestId("zoom-out").click();
  await expect(level).toHaveText(`${steps[up - 2]}%`);
  expect(errors, errors.join("\n")).toEqual([]);
});

test("the wasm bundle the page loads is served and is WebAssembly", async ({ page, request }) => {
  const wasmUrls: string[] = [];
  page.on("response", (res) => {
    if (res.url().endsWith(".wasm")) wasmUrls.push(res.url());
  });
  await page.goto("/");
  await expect(page.getByRole("region", { name: "Ecosystem canvas" })).toHaveAttribute("data-hydrated", "true");
  expect(wasmUrls.length).toBe(1);
  const res = await request.get(wasmUrls[0]);
  expect(res.ok()).toBeTruthy();
  const body = await res.body();
  // "\0asm" magic number.
  expect([...body.subarray(0, 4)]).toEqual([0x00, 0x61, 0x73, 0x6d]);
});

test("every page runs under its Content-Security-Policy with no violation", async ({ page }) => {
  // Records every violation the browser reports, from before any script of
  // the page runs.
  await page.addInitScript(() => {
    (window as any).__cspViolations = [];
    document.addEventListener("securitypolicyviolation", (e) => {
      (window as any).__cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`);
    });
  });
  const errors = watchErrors(page);
  for (const path of ["/", "/inbox"]) {
    const response = await page.goto(path);
    const csp = response?.headers()["content-security-policy"] ?? "";
    expect(csp, path).toContain("default-src 'none'");
    expect(csp, path).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9_-]{16,}' 'wasm-unsafe-eval'/);
    await expect(page.locator("[data-hydrated='true']").first()).toBeVisible();
    if (path === "/") {
      // Interaction (zoom, open a drawer) stays inside the policy too.
      await page.getByTestId("zoom-in").click();
      await page.getByTestId("node-vendorcorp").click();
      await expect(page.getByTestId("drawer")).toBeVisible();
    }
    const violations = await page.evaluate(() => (window as any).__cspViolations as string[]);
    expect(violations, `${path}: ${violations.join("\n")}`).toEqual([]);
  }
  expect(errors, errors.join("\n")).toEqual([]);
});
