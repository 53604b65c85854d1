// Nothing secret reaches a browser: a full session is crawled (every /api
// response the page receives, every GET route asked explicitly, the pages
// themselves and a few seconds of the event stream) and no body may hold a
// token of this run, a token env var name, an internal base URL, an IP
// allowlist, or an e-mail address (the orders carry customer e-mails; only
// aggregates may leave the hub).
import { test, expect, tokens, openCanvas } from "./support";

const BASE = process.env.WS_BASE_URL ?? "http://127.0.0.1:3000";

function forbidden(): { label: string; test: (body: string) => boolean }[] {
  const list: { label: string; test: (body: string) => boolean }[] = Object.entries(tokens()).map(([name, value]) => ({
    label: `the value of ${name}`,
    test: (b: string) => value.length > 0 && b.includes(value),
  }));
  for (const s of ["WS_TOKEN_", "token_env", "base_url", "http://127.0.0.1:31", "127.0.0.1/32", "ip_allowlist"]) {
    list.push({ label: s, test: (b) => b.includes(s) });
  }
  const email = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/;
  list.push({ label: "an e-mail address", test: (b) => email.test(b) });
  return list;
}

function check(where: string, body: string, rules: ReturnType<typeof forbidden>) {
  for (const r of rules) {
    expect(r.test(body), `${where} contains ${r.label}`).toBe(false);
  }
}

/** A few seconds of the event stream, as text. */
async function readEvents(cookie: string, ms: number): Promise<string> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), ms);
  let text = "";
  try {
    const res = await fetch(`${BASE}/api/events`, { headers: { cookie }, signal: abort.signal });
    expect(res.status).toBe(200);
    const reader = res.body?.getReader();
    const decoder = new TextDecoder();
    while (reader) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value);
    }
  } catch (e) {
    if (!abort.signal.aborted) throw e;
  } finally {
    clearTimeout(timer);
  }
  return text;
}

// The crawl includes a query grouped by a personal column (customer_email):
// the orders contract does not grant it (hub input_schema and VendorCorp's
// negotiable_columns), so it must come back as "not connected", never as
// e-mail addresses in group keys.
test("no response the browser receives holds a secret, an internal address or raw personal data", async ({ page, api, context }) => {
  test.setTimeout(90_000);
  const rules = forbidden();
  expect(rules.length).toBeGreaterThan(7);
  const hub = (await api.topology()).hub_id;
  await api.ensureEdge("buyercorp", "vendorcorp", "orders.query");
  await api.ensureEdge(hub, "buyercorp", "budget.consult");
  await api.ensureEdge(hub, "helpdesk", "ticket.classify");

  const seen: { url: string; body: Promise<string> }[] = [];
  page.on("response", (res) => {
    const url = new URL(res.url());
    if (!url.pathname.startsWith("/api/") || url.pathname === "/api/events") return;
    seen.push({ url: `${res.request().method()} ${url.pathname}${url.search}`, body: res.text().catch(() => "") });
  });

  // A full session: the canvas, every node's drawer, every edge's drawer
  // with its query or question, a connection made and removed.
  await openCanvas(page);
  check("the canvas page", await page.content(), rules);
  const view = await api.topology();
  for (const n of view.nodes) {
    await page.keyboard.press("Escape");
    await page.getByTestId(`node-${n.id}`).click();
    await expect(page.getByTestId("drawer").getByTestId("audit")).toBeVisible();
    await expect(page.getByTestId("drawer").getByTestId("audit").getByText(/Loading/)).toHaveCount(0);
  }
  for (const e of view.edges) {
    await page.keyboard.press("Escape");
    await page.getByTestId(`edge-${e.id}`).click();
    const drawer = page.getByTestId("drawer");
    // A task edge's drawer runs nothing: what crossed it (metrics, the
    // envelope inspector with redacted payloads) is what it shows.
    if (e.kind === "task") {
      await expect(drawer.getByTestId("inspector")).toBeVisible();
      await expect(drawer.getByTestId("inspector").getByText(/Loading/)).toHaveCount(0);
      check(`the drawer of ${e.id}`, await drawer.innerHTML(), rules);
      continue;
    }
    if (e.kind === "data-share") {
      // Grouping by the e-mail column: the hub must not let it through.
      for (const [op, column, group] of [["count", "", "region"], ["sum", "order_value", "product"], ["count", "", "customer_email"]]) {
        await drawer.getByTestId("query-op").selectOption(op);
        await drawer.getByTestId("query-column").fill(column);
        await drawer.getByTestId("query-group-by").fill(group);
        await drawer.getByTestId("query-run").click();
        await expect(drawer.getByTestId("query-run")).toBeEnabled();
        await expect(drawer.locator("[data-testid=answer-outcome], [data-testid=answer-error]")).toBeVisible();
        if (group === "customer_email") await expect(drawer.getByTestId("answer-outcome")).toContainText("not connected — NOT_PERMITTED");
      }
    } else {
      await drawer.getByTestId("ask-question").fill("what is the marketing budget? my mail is someone@example.com");
      await drawer.getByTestId("ask-run").click();
      await expect(drawer.getByTestId("ask-run")).toBeEnabled();
      await expect(drawer.locator("[data-testid=answer-outcome], [data-testid=answer-error]")).toBeVisible();
    }
    check(`the drawer of ${e.id}`, (await drawer.innerHTML()).replace(/someone@example\.com/g, ""), rules);
  }
  await page.keyboard.press("Escape");
  check("the canvas page after the session", await page.content(), rules);

  // Every GET route, asked explicitly.
  const roots = view.nodes.filter((n) => n.node_type === "system" || n.node_type === "hub");
  const gets = ["/api/topology", "/api/session", "/api/inbox", "/api/inbox/page", "/api/agents", "/api/recommendations", ...roots.map((n) => `/api/nodes/${encodeURIComponent(n.id)}/audit?limit=100`)];
  // Traffic: every edge's traffic, each edge's metrics and envelope
  // inspector (payloads as the contracts redact them), each system's
  // metrics. A consult's answer may quote the question it was asked: that
  // is the test's own text (as in the drawers above), not peer data.
  const trafficGets = [
    "/api/traffic",
    ...view.edges.flatMap((e) => [`/api/edges/${encodeURIComponent(e.id)}/metrics`, `/api/edges/${encodeURIComponent(e.id)}/inspector`]),
    ...roots.map((n) => `/api/nodes/${encodeURIComponent(n.id)}/metrics`),
  ];
  for (const url of trafficGets) {
    const res = await page.request.get(url);
    expect(res.status(), url).toBe(200);
    check(`GET ${url}`, (await res.text()).replace(/someone@example\.com/g, ""), rules);
  }
  for (const url of gets) {
    const res = await page.request.get(url);
    expect(res.status(), url).toBe(200);
    check(`GET ${url}`, await res.text(), rules);
  }
  // People and each system's trail export (409 while its newest record
  // waits for the next signed checkpoint: the refusal is checked too).
  const peopleRes = await page.request.get("/api/people");
  expect(peopleRes.status()).toBe(200);
  check("GET /api/people", await peopleRes.text(), rules);
  for (const n of roots) {
    const url = `/api/nodes/${encodeURIComponent(n.id)}/trail`;
    const res = await page.request.get(url);
    expect([200, 404, 409], url).toContain(res.status());
    check(`GET ${url}`, await res.text(), rules);
  }
  // The topology writes' refusals: an answer that names what was wrong
  // must not quote a member's token or address while doing so. Each is
  // refused, so nothing is written.
  const digest = (await api.topology()).digest;
  const taken = view.nodes.find((n) => n.node_type === "system")?.id ?? "buyercorp";
  // `echoes`: rule labels a refusal may show because the request itself
  // typed them (a section's own `token_env` line, named where it is wrong).
  const writes: { what: string; method: "post" | "put" | "delete"; url: string; data: unknown; echoes?: string[] }[] = [
    { what: "a private address", method: "post", url: "/api/systems/discover", data: { base_url: "http://10.255.255.1:8080" } },
    { what: "a section that is not YAML", method: "post", url: "/api/systems", data: { base: digest, section: "system: [" } },
    { what: "a stale base", method: "delete", url: `/api/systems/${encodeURIComponent(taken)}`, data: { base: "0".repeat(64) } },
    {
      what: "a rule that does not exist",
      method: "put",
      url: "/api/rules/consumers",
      data: { base: digest, capability: "no.such", provider: taken, consumer: taken, member: true },
    },
    {
      what: "a section naming another system's credential",
      method: "post",
      url: "/api/systems",
      data: {
        base: digest,
        section: `system:\n  id: mallory\n  name: M\n  base_url: http://127.0.0.1:9\n  token_env: WS_TOKEN_${taken.toUpperCase()}\n  ip_allowlist: [127.0.0.1/32]\n`,
      },
      echoes: ["WS_TOKEN_", "token_env", "base_url", "ip_allowlist", "127.0.0.1/32"],
    },
    { what: "the credential of a system that does not exist", method: "post", url: "/api/systems/nobody/credential", data: {} },
    { what: "a person with a role that does not exist", method: "post", url: "/api/people", data: { username: "x", role: "root" } },
    { what: "a person bound to a system that does not exist", method: "post", url: "/api/people", data: { username: "x", role: "viewer", system: "nobody" } },
  ];
  for (const w of writes) {
    const res = await page.request[w.method](w.url, { data: w.data, headers: { "X-CSRF-Token": api.csrf } });
    expect(res.status(), `${w.what}: ${await res.text()}`).toBeGreaterThanOrEqual(400);
    expect(res.status(), w.what).toBeLessThan(500);
    const body = await res.text();
    check(`${w.method.toUpperCase()} ${w.url} (${w.what})`, body, rules.filter((r) => !(w.echoes ?? []).includes(r.label)));
    if (w.echoes) expect(body, w.what).not.toContain(`WS_TOKEN_${taken.toUpperCase()}\``);
  }
  expect((await api.topology()).digest, "a refused write changed the file").toBe(digest);

  // The inbox page, rendered and hydrated (it lists peer rationales).
  await page.goto("/inbox");
  await expect(page.getByTestId("inbox-page")).toHaveAttribute("data-hydrated", "true");
  await expect(page.getByTestId("inbox-loading")).toHaveCount(0);
  check("the inbox page", await page.content(), rules);
  const login = await page.request.get("/login");
  check("the login page", await login.text(), rules);
  await page.goto("/people");
  await expect(page.getByTestId("people-page")).toHaveAttribute("data-hydrated", "true");
  await expect(page.getByTestId("person").first()).toBeVisible();
  check("the people page", await page.content(), rules);

  // The event stream, for a few seconds.
  const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join("; ");
  check("the event stream", await readEvents(cookie, 2_500), rules);

  // Every /api response the page itself received.
  expect(seen.length).toBeGreaterThan(view.nodes.length);
  for (const r of seen) {
    // The question echoed back is the test's own text, not peer data.
    check(r.url, (await r.body).replace(/someone@example\.com/g, ""), rules);
  }
  console.log(`crawled ${seen.length} /api responses seen by the page and ${gets.length + 2} explicit requests`);
});
