import { Page } from "@playwright/test";
import { test, expect, NodeView, TopologyView, openCanvas, watchErrors, zoomTo } from "./support";

// A system's card names every capability it provides and consumes: each
// as a chip drawn whole, or counted by the row's last chip, "+N", which
// opens the node's drawer listing them all. Checked against what the hub
// serves (GET /api/topology), at three zoom levels.

type Cap = { id: string; kind: string };
type SystemView = NodeView & { provides: Cap[]; consumes: Cap[] };

const DIRECTIONS = [
  { key: "provides", heading: "Provides" },
  { key: "consumes", heading: "Consumes" },
] as const;

/** What one row of a card draws, measured in the page. */
type RowSeen = {
  chips: { text: string; scrollWidth: number; clientWidth: number; inside: boolean }[];
  more: { text: string; hidden: string | null; label: string | null } | null;
} | null;

/** The chips of `direction` on the card of `id`: their text, whether the
 * text is cut inside the chip, and whether the chip lies whole inside its
 * row and its card (a row clips what overflows it). */
async function row(page: Page, id: string, direction: string): Promise<RowSeen> {
  return page.getByTestId(`node-${id}`).evaluate((card, direction) => {
    const rowEl = card.querySelector(`.cap-row.${direction}`);
    if (!rowEl) return null;
    const r = rowEl.getBoundingClientRect();
    const c = card.getBoundingClientRect();
    const within = (e: DOMRect) =>
      e.width > 0 &&
      e.left >= Math.max(r.left, c.left) - 0.5 &&
      e.right <= Math.min(r.right, c.right) + 0.5 &&
      e.top >= Math.max(r.top, c.top) - 0.5 &&
      e.bottom <= Math.min(r.bottom, c.bottom) + 0.5;
    const chips = [...rowEl.querySelectorAll<HTMLElement>(".cap:not(.more)")].map((el) => ({
      text: (el.textContent ?? "").trim(),
      scrollWidth: el.scrollWidth,
      clientWidth: el.clientWidth,
      inside: within(el.getBoundingClientRect()),
    }));
    const moreEl = rowEl.querySelector<HTMLElement>(".cap.more");
    const more = moreEl && within(moreEl.getBoundingClientRect())
      ? {
          text: (moreEl.textContent ?? "").trim(),
          hidden: moreEl.getAttribute("data-hidden"),
          label: moreEl.getAttribute("aria-label"),
        }
      : moreEl
        ? { text: "(+N chip cut by its row)", hidden: null, label: null }
        : null;
    return { chips, more };
  }, direction);
}

for (const percent of [50, 100, 200]) {
  test(`every capability is a whole chip or counted by +N at ${percent}%`, async ({ page }) => {
    const errors = watchErrors(page);
    const res = await page.request.get("/api/topology");
    expect(res.ok()).toBeTruthy();
    const view = (await res.json()) as TopologyView & { nodes: SystemView[] };
    const systems = view.nodes.filter((n) => n.node_type === "system");
    expect(systems.length).toBeGreaterThan(0);

    await openCanvas(page);
    await zoomTo(page, percent);
    let counted = 0;
    for (const node of systems) {
      const card = page.getByTestId(`node-${node.id}`);
      for (const { key, heading } of DIRECTIONS) {
        const ids = node[key].map((c) => c.id);
        const seen = await row(page, node.id, key);
        const where = `${node.id} ${key} at ${percent}%`;
        if (ids.length === 0) {
          expect(seen?.chips ?? [], where).toEqual([]);
          continue;
        }
        expect(seen, `${where}: no row`).not.toBeNull();
        if (!seen) continue;
        // The chips drawn are the first of the list, each whole.
        const shown = seen.chips.map((c) => c.text);
        expect(shown, where).toEqual(ids.slice(0, shown.length));
        for (const chip of seen.chips) {
          expect(chip.scrollWidth, `${where}: ${chip.text}'s text is cut`).toBeLessThanOrEqual(chip.clientWidth);
          expect(chip.inside, `${where}: ${chip.text} is cut by its row`).toBe(true);
        }
        // The rest is counted by +N, which lists them all.
        const hidden = ids.slice(shown.length);
        if (hidden.length === 0) {
          expect(seen.more, `${where}: +N with nothing hidden`).toBeNull();
          continue;
        }
        counted += hidden.length;
        expect(seen.more, `${where}: ${hidden.join(", ")} neither drawn nor counted`).toEqual({
          text: `+${hidden.length}`,
          hidden: String(hidden.length),
          label: expect.stringContaining(`${hidden.length} not shown`),
        });
        // Keyboard: focus it (without scrolling the canvas) and press Enter.
        const more = page.getByTestId(`caps-more-${node.id}-${key}`);
        await more.evaluate((el: HTMLElement) => el.focus({ preventScroll: true }));
        await expect(more).toBeFocused();
        await page.keyboard.press("Enter");
        const drawer = page.getByTestId("drawer");
        await expect(drawer.getByRole("heading", { name: node.name, exact: true })).toBeVisible();
        const listed = drawer.locator("section.drawer-section", {
          has: page.getByRole("heading", { name: heading, exact: true }),
        });
        await expect(listed.locator("code")).toHaveText(ids);
        await page.keyboard.press("Escape");
        await expect(drawer).toHaveCount(0);
      }

      // A long name is ellipsised, the whole of it in a tooltip.
      const name = card.locator(".node-name");
      await expect(name).toHaveAttribute("title", node.name);
      const cut = await name.evaluate((el) => el.scrollWidth > el.clientWidth);
      if (cut) expect(await name.evaluate((el) => getComputedStyle(el).textOverflow)).toBe("ellipsis");
    }
    // The demo's BuyerCorp consumes four capabilities: more than a card shows.
    expect(counted).toBeGreaterThan(0);
    expect(errors, errors.join("\n")).toEqual([]);
  });
}
