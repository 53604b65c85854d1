// The canvas as a new person opens it, and as they come back to it: the
// first view shows every system, fitted to the window below the toolbar;
// a person's own pan and zoom are kept by their browser and given back
// after a reload. And the first load fetches only the map: the drawer, the
// onboarding panel and the inbox's entries are parts of the wasm fetched
// the first time they are opened, once each (app/src/parts.rs).
import type { Page } from "@playwright/test";
import { test, expect, SYSTEMS, canvas, openCanvas, watchErrors } from "./support";

/** The world's CSS transform. */
function worldTransform(page: Page) {
  return page.getByTestId("world").evaluate((el) => (el as HTMLElement).style.transform);
}

/** Files fetched from /pkg/, in order, as they are asked for. */
function pkgRequests(page: Page): string[] {
  const files: string[] = [];
  page.on("request", (r) => {
    const u = new URL(r.url());
    if (u.pathname.startsWith("/pkg/")) files.push(u.pathname.slice(5));
  });
  return files;
}

/** The lazily loaded parts among `files` (wasm-split names them
 * `split_<function>_<hash>.wasm`). */
function parts(files: string[]): string[] {
  return files.filter((f) => f.startsWith("split_"));
}

test("the first view shows every system's card whole, below the toolbar", async ({ page }) => {
  const errors = watchErrors(page);
  await openCanvas(page);
  const toolbar = await page.locator(".toolbar").boundingBox();
  const area = await canvas(page).boundingBox();
  expect(toolbar && area).toBeTruthy();
  if (!toolbar || !area) return;
  for (const id of ["hub", ...SYSTEMS.map((s) => s.id)]) {
    const card = page.getByTestId(`node-${id}`);
    // Whole (to a rounding of the scaled box).
    await expect(card).toBeInViewport({ ratio: 0.99 });
    const box = await card.boundingBox();
    expect(box, id).toBeTruthy();
    if (!box) continue;
    expect(box.y, `${id} starts below the toolbar`).toBeGreaterThanOrEqual(toolbar.y + toolbar.height - 0.5);
    expect(box.x, `${id} inside the canvas`).toBeGreaterThanOrEqual(area.x - 0.5);
    expect(box.x + box.width, `${id} inside the canvas`).toBeLessThanOrEqual(area.x + area.width + 0.5);
    expect(box.y + box.height, `${id} inside the canvas`).toBeLessThanOrEqual(area.y + area.height + 0.5);
  }
  // Fitted: the graph is not left in a corner at an arbitrary zoom.
  const level = parseInt((await page.getByTestId("zoom-level").textContent()) ?? "", 10);
  expect(level).toBeLessThanOrEqual(100);
  expect(errors, errors.join("\n")).toEqual([]);
});

test("a person's own pan and zoom come back after a reload; another person still gets the fitted view", async ({ page, browser }) => {
  await openCanvas(page);
  const fitted = await worldTransform(page);
  const area = await canvas(page).boundingBox();
  if (!area) throw new Error("no canvas box");
  // Pan from the empty bottom-left corner, then zoom in once.
  const start = { x: area.x + 20, y: area.y + area.height - 20 };
  await page.mouse.move(start.x, start.y);
  await page.mouse.down();
  await page.mouse.move(start.x + 90, start.y - 60, { steps: 6 });
  await page.mouse.up();
  await page.getByTestId("zoom-in").click();
  const own = await worldTransform(page);
  expect(own).not.toEqual(fitted);
  const level = await page.getByTestId("zoom-level").textContent();
  // Kept a moment after the view stops moving.
  await expect
    .poll(() => page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith("wall-street.view.")).length))
    .toBe(1);

  await page.reload();
  await expect(canvas(page)).toHaveAttribute("data-hydrated", "true");
  await expect.poll(() => worldTransform(page)).toEqual(own);
  await expect(page.getByTestId("zoom-level")).toHaveText(level ?? "");

  // A browser that kept nothing opens on the fitted view.
  const other = await browser.newContext({ storageState: await page.context().storageState().then((s) => ({ ...s, origins: [] })) });
  const fresh = await other.newPage();
  await openCanvas(fresh);
  await expect.poll(() => worldTransform(fresh)).toEqual(fitted);
  await other.close();

  // What the storage holds is the browser's: junk there is ignored.
  await page.evaluate(() => {
    for (const k of Object.keys(localStorage)) if (k.startsWith("wall-street.view.")) localStorage.setItem(k, "1e999 NaN <script>");
  });
  await page.reload();
  await expect(canvas(page)).toHaveAttribute("data-hydrated", "true");
  await expect.poll(() => worldTransform(page)).toEqual(fitted);
});

test("the first load fetches only the map; a drawer, the onboarding panel and the inbox fetch their parts once, when first opened", async ({ page }) => {
  const errors = watchErrors(page);
  const files = pkgRequests(page);
  await openCanvas(page);
  // Nothing is opened, nothing more is fetched.
  await page.waitForTimeout(1500);
  expect(files.filter((f) => f.endsWith(".wasm"))).toEqual(["wall-street.wasm"]);
  expect(parts(files)).toEqual([]);

  // The first drawer fetches the drawer's part.
  await page.getByTestId("node-vendorcorp").click();
  await expect(page.getByTestId("drawer").getByRole("heading", { name: "VendorCorp" })).toBeVisible();
  const drawerParts = parts(files);
  expect(drawerParts.length).toBe(1);
  expect(drawerParts[0]).toMatch(/^split_drawer_part_/);
  // Other drawers reuse it.
  await page.keyboard.press("Escape");
  await page.getByTestId("node-helpdesk").click();
  await expect(page.getByTestId("drawer").getByRole("heading", { name: "Helpdesk" })).toBeVisible();
  await page.keyboard.press("Escape");
  expect(parts(files)).toEqual(drawerParts);

  // The onboarding panel: its own part, once.
  await page.getByTestId("onboard-open").click();
  await expect(page.locator("#onboard-panel")).toBeVisible();
  await page.getByTestId("onboard-close").click();
  await expect(page.locator("#onboard-panel")).toHaveCount(0);
  await page.getByTestId("onboard-open").click();
  await expect(page.locator("#onboard-panel")).toBeVisible();
  const afterOnboard = parts(files);
  expect(afterOnboard.length).toBe(2);
  expect(afterOnboard[1]).toMatch(/^split_onboard_part_/);
  // Every file was fetched once.
  expect(new Set(files).size).toBe(files.length);

  // The inbox page: its entries are a part the canvas never fetched.
  const before = files.length;
  await page.goto("/inbox");
  await expect(page.getByTestId("inbox-page")).toHaveAttribute("data-hydrated", "true");
  await expect(page.getByTestId("inbox-loading")).toHaveCount(0);
  await expect(page.getByTestId("inbox-entries").or(page.getByTestId("inbox-empty"))).toBeVisible();
  const inbox = parts(files.slice(before));
  expect(inbox.length).toBe(1);
  expect(inbox[0]).toMatch(/^split_inbox_part_/);
  expect(errors, errors.join("\n")).toEqual([]);
});
