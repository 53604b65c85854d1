// The UI login: the canvas and every /api route need a session; the login
// page is the only public page; logging out ends the session.
import { request as playwrightRequest } from "@playwright/test";
import { test, expect, credential, anonymousContext, canvas, watchErrors, loginThroughUi } from "./support";

const BASE = process.env.WS_BASE_URL ?? "http://127.0.0.1:3000";

// Every /api route of the hub, with a body where one is needed. None may
// answer anything but 401 without a session (with or without a CSRF
// header: the session comes first).
const API_ROUTES: { method: "GET" | "POST" | "PUT" | "DELETE"; path: string; data?: unknown }[] = [
  { method: "GET", path: "/api/topology" },
  { method: "GET", path: "/api/events" },
  { method: "GET", path: "/api/session" },
  { method: "GET", path: "/api/inbox" },
  { method: "GET", path: "/api/inbox/page" },
  { method: "GET", path: "/api/inbox/pending" },
  { method: "POST", path: "/api/inbox/1/approve" },
  { method: "POST", path: "/api/inbox/1/reject" },
  { method: "GET", path: "/api/nodes/vendorcorp/audit?limit=20" },
  { method: "GET", path: "/api/nodes/hub/audit" },
  { method: "POST", path: "/api/logout" },
  { method: "POST", path: "/api/edges", data: { consumer: "hub", provider: "vendorcorp", capability: "orders.query" } },
  { method: "DELETE", path: `/api/edges/${encodeURIComponent("buyercorp->vendorcorp:orders.query")}` },
  { method: "PUT", path: "/api/positions", data: { positions: [{ node: "hub", x: 0, y: 0 }] } },
  { method: "POST", path: `/api/edges/${encodeURIComponent("buyercorp->vendorcorp:orders.query")}/query`, data: { op: "count", column: null, group_by: null } },
  { method: "POST", path: `/api/edges/${encodeURIComponent("hub->helpdesk:ticket.classify")}/ask`, data: { question: "hello" } },
  { method: "POST", path: "/api/fn/topology" },
  { method: "GET", path: "/api/no-such-route" },
];

test.describe("without a session", () => {
  test("every /api route answers 401 and pages redirect to the login", async () => {
    // Explicitly without the login fixture's cookies.
    const req = await playwrightRequest.newContext({ baseURL: BASE, storageState: { cookies: [], origins: [] } });
    try {
      for (const r of API_ROUTES) {
        for (const headers of [{}, { "X-CSRF-Token": "forged" }] as Record<string, string>[]) {
          const res = await req.fetch(r.path, {
            method: r.method,
            data: r.data,
            headers,
            maxRedirects: 0,
            timeout: 5_000,
          });
          expect(res.status(), `${r.method} ${r.path} ${JSON.stringify(headers)}`).toBe(401);
          const body = await res.text();
          expect(body, `${r.method} ${r.path}`).not.toContain("orders.query\",\"kind");
        }
      }
      for (const page of ["/", "/?x=1", "/inbox", "/anything"]) {
        const res = await req.get(page, { maxRedirects: 0 });
        expect(res.status(), page).toBe(303);
        const location = res.headers()["location"] ?? "";
        expect(location, page).toMatch(/^\/login\?next=/);
        expect(decodeURIComponent(location.slice("/login?next=".length)), page).toBe(page);
      }
      // The login page and the wasm bundle are public.
      expect((await req.get("/login")).status()).toBe(200);
    } finally {
      await req.dispose();
    }
  });

  test("the canvas sends the browser to the login, which brings it back", async ({ browser }) => {
    const context = await anonymousContext(browser);
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto("/");
    await expect(page).toHaveURL(/\/login\?next=/);
    await expect(page.getByTestId("login-form")).toHaveAttribute("data-hydrated", "true");
    const { username, password } = credential();

    // A wrong password is refused on the form, nothing else happens.
    await page.getByLabel("Username").fill(username);
    await page.getByLabel("Password").fill(`${password}-wrong`);
    await page.getByRole("button", { name: "Log in" }).click();
    await expect(page.getByTestId("login-error")).toHaveText("Wrong username or password.");
    await expect(page).toHaveURL(/\/login/);

    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.waitForURL((u) => u.pathname === "/");
    await expect(canvas(page)).toHaveAttribute("data-hydrated", "true");
    await expect(page.getByTestId("username")).toHaveText(username);

    // The cookie is HttpOnly and SameSite=Strict.
    const cookie = (await context.cookies()).find((c) => c.name === "ws_session");
    expect(cookie?.httpOnly).toBe(true);
    expect(cookie?.sameSite).toBe("Strict");
    expect(await page.evaluate(() => document.cookie)).not.toContain("ws_session");
    // A wrong password shows one console error (the 401 of /api/login).
    expect(errors.filter((e) => !e.includes("401")), errors.join("\n")).toEqual([]);
    await context.close();
  });

  // A login never sends the browser to another site: not to `//host`,
  // nor to the forms a browser's URL parser turns into another host — a
  // tab or a newline it drops (`/\t/evil` is `//evil`), a backslash it
  // reads as a slash, an encoded `//`, a whole URL. Each lands on the
  // hub's canvas.
  for (const next of ["//evil.example/", "/%09/evil.example", "/%0a/evil.example", "/%5Cevil.example", "%2F%2Fevil.example", "https://evil.example"]) {
    test(`a login with next=${next} stays on the hub`, async ({ browser }) => {
      const context = await anonymousContext(browser);
      const page = await context.newPage();
      const left: string[] = [];
      page.on("request", (r) => {
        if (new URL(r.url()).host !== new URL(BASE).host) left.push(r.url());
      });
      await page.goto(`/login?next=${next}`);
      await expect(page.getByTestId("login-form")).toHaveAttribute("data-hydrated", "true");
      const { username, password } = credential();
      await page.getByLabel("Username").fill(username);
      await page.getByLabel("Password").fill(password);
      await page.getByRole("button", { name: "Log in" }).click();
      await page.waitForURL((u) => u.pathname === "/");
      await expect(canvas(page)).toHaveAttribute("data-hydrated", "true");
      expect(new URL(page.url()).origin).toBe(new URL(BASE).origin);
      expect(left, "requests off the hub").toEqual([]);
      await context.close();
    });
  }
});

test("logging out ends the session", async ({ browser }) => {
  // Its own session: the shared one must outlive this test.
  const context = await anonymousContext(browser);
  const page = await context.newPage();
  await loginThroughUi(page);
  await expect(canvas(page)).toHaveAttribute("data-hydrated", "true");
  const session = await page.request.get("/api/session");
  expect(session.status()).toBe(200);
  const { csrf_token } = (await session.json()) as { csrf_token: string };

  // Without the CSRF token a state-changing request is refused.
  const forged = await page.request.post("/api/logout");
  expect(forged.status()).toBe(403);

  await page.getByTestId("logout").click();
  await page.waitForURL(/\/login/);
  expect((await page.request.get("/api/topology")).status()).toBe(401);
  const res = await page.request.post("/api/edges", {
    data: { consumer: "hub", provider: "vendorcorp", capability: "orders.query" },
    headers: { "X-CSRF-Token": csrf_token },
  });
  expect(res.status()).toBe(401);
  await page.goto("/");
  await expect(page).toHaveURL(/\/login\?next=/);
  await context.close();
});

test("the top bar names who is logged in", async ({ page }) => {
  await page.goto("/");
  await expect(canvas(page)).toHaveAttribute("data-hydrated", "true");
  await expect(page.getByTestId("username")).toHaveText(credential().username);
  await expect(page.getByTestId("logout")).toBeEnabled();
});

test("the server-rendered page already names who is logged in", async ({ page }) => {
  // The HTML as the hub sends it, before any script runs.
  const res = await page.request.get("/");
  expect(res.status()).toBe(200);
  const html = await res.text();
  expect(html).toMatch(new RegExp(`data-testid="username"[^>]*>\\s*${credential().username}\\s*<`));
});
