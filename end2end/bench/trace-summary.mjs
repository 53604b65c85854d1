#!/usr/bin/env node
// Where a Chromium performance trace's time went (the canvas at 500
// nodes; DESIGN.md §6, the canvas): self time per event name on the
// page's main thread (script, style, layout, paint, GC…) and the total of
// the raster and compositor threads, for `canvas-bench.mjs --trace`.
//
//   node end2end/bench/trace-summary.mjs TRACE.json [TOP]
import * as fs from "node:fs";
import { fileURLToPath } from "node:url";

/** Self time (ms) by event name on the renderer's main thread, and the
 * busy time of its other threads, from a trace file's `traceEvents`. */
export function summarize(file, top = 14) {
  const raw = JSON.parse(fs.readFileSync(file, "utf8"));
  const events = Array.isArray(raw) ? raw : raw.traceEvents ?? [];
  const names = new Map();
  for (const e of events) {
    if (e.ph === "M" && e.name === "thread_name") names.set(`${e.pid}:${e.tid}`, e.args?.name ?? "");
  }
  // The renderer's main thread with the most events is the page's.
  const counts = new Map();
  for (const e of events) {
    const k = `${e.pid}:${e.tid}`;
    if (names.get(k) === "CrRendererMain" && e.ph === "X") counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  const main = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
  const pid = main?.split(":")[0];
  const self = new Map();
  const xs = events.filter((e) => `${e.pid}:${e.tid}` === main && e.ph === "X" && e.dur !== undefined);
  xs.sort((a, b) => a.ts - b.ts || b.dur - a.dur);
  const stack = [];
  let first = Infinity;
  let last = 0;
  const close = (until) => {
    while (stack.length && stack[stack.length - 1].end <= until) stack.pop();
  };
  for (const e of xs) {
    first = Math.min(first, e.ts);
    last = Math.max(last, e.ts + e.dur);
    close(e.ts);
    const parent = stack[stack.length - 1];
    if (parent) self.set(parent.name, (self.get(parent.name) ?? 0) - e.dur);
    self.set(e.name, (self.get(e.name) ?? 0) + e.dur);
    stack.push({ name: e.name, end: e.ts + e.dur });
  }
  const threads = new Map();
  for (const e of events) {
    const k = `${e.pid}:${e.tid}`;
    if (e.ph !== "X" || e.dur === undefined || k === main || `${e.pid}` !== pid) continue;
    // Only top-level slices of each thread (nested ones would count twice).
    const t = threads.get(k) ?? { name: names.get(k) ?? k, busy: 0, end: 0 };
    if (e.ts >= t.end) {
      t.busy += e.dur;
      t.end = e.ts + e.dur;
    } else if (e.ts + e.dur > t.end) {
      t.busy += e.ts + e.dur - t.end;
      t.end = e.ts + e.dur;
    }
    threads.set(k, t);
  }
  const ms = (us) => (us / 1000).toFixed(1);
  const rows = [...self.entries()].filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1]);
  const busy = rows.reduce((a, [, v]) => a + v, 0);
  const out = [`    main thread: ${ms(busy)} ms busy of ${ms(last - first)} ms traced; self time by event:`];
  for (const [name, v] of rows.slice(0, top)) out.push(`      ${ms(v).padStart(8)} ms  ${name}`);
  const others = [...threads.values()].filter((t) => t.busy > 1000).sort((a, b) => b.busy - a.busy);
  if (others.length) {
    out.push(`    other threads: ${others.map((t) => `${t.name} ${ms(t.busy)} ms`).join(", ")}`);
  }
  return out.join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (!process.argv[2]) {
    console.error("usage: trace-summary.mjs TRACE.json [TOP]");
    process.exit(2);
  }
  console.log(summarize(process.argv[2], Number(process.argv[3] ?? 14)));
}
