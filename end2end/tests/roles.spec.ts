// People and roles in the browser: the admin manages people on the People
// page (a password shown once), and a member-scoped viewer who logs in
// sees its system's part of the map only, with none of the controls its
// role could not use; the People page is not theirs.
import { test, expect, anonymousContext, watchErrors } from "./support";

test("an admin adds a member-scoped viewer who sees its part of the map and no admin control", async ({ page, browser, baseURL }) => {
  test.setTimeout(60_000);
  const username = `vendor-${Date.now() % 100000}`;

  // The People page: the admin adds a viewer bound to VendorCorp.
  await page.goto("/people");
  await expect(page.getByTestId("people-page")).toHaveAttribute("data-hydrated", "true");
  await expect(page.getByTestId("person").first()).toBeVisible();
  await page.getByTestId("people-add-username").fill(username);
  await page.getByTestId("people-add-role").selectOption("viewer");
  await page.getByTestId("people-add-system").fill("vendorcorp");
  await page.getByTestId("people-add-submit").click();
  const shown = page.getByTestId("people-password-value");
  await expect(shown).toBeVisible();
  const password = (await shown.textContent())?.trim() ?? "";
  expect(password).toHaveLength(20);
  await expect(page.locator(`[data-testid=person][data-username="${username}"]`)).toBeVisible();
  // Reloaded, the page shows the person and never the password again.
  await page.reload();
  await expect(page.locator(`[data-testid=person][data-username="${username}"]`)).toBeVisible();
  expect(await page.content()).not.toContain(password);

  // The new person logs in through the login page.
  const context = await anonymousContext(browser, { baseURL });
  const theirs = await context.newPage();
  const errors = watchErrors(theirs);
  await theirs.goto("/login");
  await expect(theirs.getByTestId("login-form")).toHaveAttribute("data-hydrated", "true");
  await theirs.getByLabel("Username").fill(username);
  await theirs.getByLabel("Password").fill(password);
  await theirs.getByRole("button", { name: "Log in" }).click();
  await theirs.waitForURL((u) => u.pathname === "/");
  await expect(theirs.getByTestId("role")).toHaveText("viewer of vendorcorp");
  // Its part: VendorCorp and its counterparts, nothing of Helpdesk.
  await expect(theirs.getByTestId("node-vendorcorp")).toBeVisible();
  await expect(theirs.getByTestId("node-buyercorp")).toBeVisible();
  await expect(theirs.getByTestId("node-helpdesk")).toHaveCount(0);
  expect(await theirs.content()).not.toContain("helpdesk");
  // No control a viewer could not use, no People link; the page itself
  // is refused.
  await expect(theirs.getByTestId("onboard-open")).toHaveCount(0);
  await expect(theirs.getByTestId("nav-people")).toHaveCount(0);
  const people = await theirs.request.get("/people");
  expect(people.status()).toBe(403);
  const api = await theirs.request.get("/api/people");
  expect(api.status()).toBe(403);
  expect(errors).toEqual([]);
  await context.close();

  // The admin removes them again.
  await page.locator(`[data-testid=person][data-username="${username}"]`).getByTestId("person-remove").click();
  await expect(page.locator(`[data-testid=person][data-username="${username}"]`)).toHaveCount(0);
});
