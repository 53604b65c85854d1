// Edge labels never collide (app/src/canvas/graph/placement.rs): on the
// stack's canvas, with observed traffic both ways between BuyerCorp and
// Helpdesk (whose two labels and rate lines once sat on one spot), at 50,
// 100 and 200 %, no two visible labels overlap (each with its traffic line
// under it), none lies under the toolbar or the minimap, and every label
// shows its capability whole or cut ("…"), its full id in its `title`.
import * as fs from "fs";
import type { Page } from "@playwright/test";
import { test, expect, STATE, PEER, Box, boxOf, overlap, peerCall, openCanvas, watchErrors, zoomTo, nextFrames } from "./support";

/** Calls both ways between BuyerCorp and Helpdesk, not established here. */
const CLASSIFY = "buyercorp->helpdesk:ticket.classify";
const CONSULT = "helpdesk->buyercorp:budget.consult";

/** One label as the page draws it. */
type Seen = {
  /** The edge's id (from the label's test id). */
  edge: string;
  /** `data-label`: whole, short or none. */
  label: string | null;
  title: string | null;
  /** The label's own text (an observed label's reason code left out). */
  text: string;
  /** Drawn: not hidden (under a control, lifted), not left out. */
  visible: boolean;
  /** The label's box and, when drawn, its traffic line's. */
  boxes: Box[];
};

/** Every edge label on the canvas, established and observed. */
async function labels(page: Page): Promise<Seen[]> {
  return page.evaluate(() => {
    const box = (el: Element) => {
      const r = el.getBoundingClientRect();
      return { x: r.x, y: r.y, w: r.width, h: r.height };
    };
    const shown = (el: Element) => {
      const s = getComputedStyle(el);
      return s.display !== "none" && s.visibility !== "hidden";
    };
    return [...document.querySelectorAll(".label-layer .edge-label, .label-layer .observed-label")].map((el) => {
      const testid = el.getAttribute("data-testid") ?? "";
      const edge = testid.replace(/^(edge|observed)-/, "");
      const text = [...el.childNodes]
        .filter((n) => n.nodeType === Node.TEXT_NODE)
        .map((n) => n.textContent ?? "")
        .join("")
        .trim();
      const visible = shown(el) && !el.classList.contains("unplaced");
      const boxes = [box(el)];
      const line = document.querySelector(`[data-testid="traffic-${CSS.escape(edge)}"]`);
      if (line && shown(line)) boxes.push(box(line));
      return { edge, label: el.getAttribute("data-label"), title: el.getAttribute("title"), text, visible, boxes };
    });
  });
}



test.beforeAll(() => {
  test.skip(!STATE || !fs.existsSync(PEER), `needs the stack of scripts/test and ${PEER}`);
});

for (const percent of [50, 100, 200]) {
  test(`edge labels lie apart, clear of the controls, whole or cut, at ${percent}%`, async ({ page, api }) => {
    test.setTimeout(60_000);
    const errors = watchErrors(page);
    // Not established: the calls below draw observed edges both ways.
    await api.removeEdge(CLASSIFY);
    await api.removeEdge(CONSULT);
    await openCanvas(page);
    await expect(page.getByTestId("live-status")).toHaveAttribute("data-state", "live");
    for (const [caller, provider, capability, input] of [
      ["buyercorp", "helpdesk", "ticket.classify", { ticket_id: "T-1003" }],
      ["helpdesk", "buyercorp", "budget.consult", { question: "what is left overall?" }],
    ] as const) {
      const call = peerCall(caller, provider, capability, input);
      expect([0, 2], call.out).toContain(call.status);
    }
    await expect(page.getByTestId(`observed-${CLASSIFY}`)).toHaveCount(1, { timeout: 5_000 });
    await expect(page.getByTestId(`observed-${CONSULT}`)).toHaveCount(1, { timeout: 5_000 });

    await zoomTo(page, percent);
    // The labels under a control are found on the frame after a camera
    // change; one more frame draws what that changed.
    await nextFrames(page);

    const seen = await labels(page);
    const topology = await api.topology();
    expect(seen.length, "every established edge and the two observed ones").toBeGreaterThanOrEqual(topology.edges.length + 2);
    for (const id of [CLASSIFY, CONSULT]) expect(seen.map((s) => s.edge)).toContain(id);

    // Every label whole or cut, its full id in its title.
    for (const s of seen) {
      const capability = s.edge.slice(s.edge.lastIndexOf(":") + 1);
      const where = `${s.edge} at ${percent}%`;
      expect(["whole", "short"], `${where}: data-label`).toContain(s.label);
      expect(s.title ?? "", `${where}: title`).toMatch(new RegExp(`^${capability.replace(/[.]/g, "\\.")} · `));
      if (s.label === "whole") {
        expect(s.text, where).toBe(capability);
      } else {
        expect(s.text.endsWith("…"), `${where}: ${s.text}`).toBe(true);
        const prefix = s.text.slice(0, -1);
        expect(prefix.length, `${where}: ${s.text}`).toBeGreaterThan(0);
        expect(capability.startsWith(prefix), `${where}: ${s.text}`).toBe(true);
        expect(prefix.length, `${where}: ${s.text}`).toBeLessThan(capability.length);
      }
    }

    // On screen: apart from each other and from the controls.
    const area = await boxOf(page, "section.canvas");
    if (!area) throw new Error("no canvas");
    const visible = seen.filter((s) => s.visible && s.boxes.some((b) => overlap(b, area)));
    expect(visible.length, `some labels on screen at ${percent}%`).toBeGreaterThan(0);
    for (let i = 0; i < visible.length; i++) {
      for (const other of visible.slice(i + 1)) {
        for (const a of visible[i].boxes) {
          for (const b of other.boxes) {
            expect(overlap(a, b), `${visible[i].edge} ${JSON.stringify(a)} overlaps ${other.edge} ${JSON.stringify(b)} at ${percent}%`).toBe(false);
          }
        }
      }
    }
    const controls = [
      { name: "toolbar", box: await boxOf(page, ".toolbar") },
      { name: "minimap", box: await boxOf(page, '[data-testid="minimap"]') },
    ];
    expect(controls[0].box, "the toolbar").not.toBeNull();
    for (const { name, box } of controls) {
      if (!box) continue;
      for (const s of visible) {
        for (const b of s.boxes) {
          expect(overlap(b, box), `${s.edge} ${JSON.stringify(b)} lies under the ${name} at ${percent}%`).toBe(false);
        }
      }
    }
    expect(errors, errors.join("\n")).toEqual([]);
  });
}
