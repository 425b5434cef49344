/**
 * The console when the admin API fails or changes under it: a failed request at sign-in or in
 * a refresh, sign-in failures, a channel that went away, letters replayed or deleted elsewhere,
 * answers that arrive late; and where the keyboard's focus goes when a row it was on goes. The
 * API is made to fail on demand by routing the page's requests (Playwright's `page.route`).
 */
import type { Browser, Page, Request, Route } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ReceivedReply } from "../../src/node/receiver/sample-receiver.js";
import { type ServiceHarness, startHarness } from "../support/node-service.js";
import { type ConsolePage, launchChromium, openConsolePage, tabTo } from "./support/console-browser.js";
import { signIn } from "./support/console-timeline.js";

const ADMIN_SECRET = "browser-recovery-admin-secret-0123456789";
const SECRET_KEY = "webhook-channel-admin-secret";

let browser: Browser;
let harness: ServiceHarness;
let tab: ConsolePage;
let page: Page;
/** While true the receiver refuses, with a 400, every reply starting "doomed": a dead letter at once. */
let refusing = true;

const replyText = (reply: ReceivedReply): string => String((reply.body as { text?: unknown }).text);
/** Posts a message the receiver refuses: a dead letter at once. Resolves to its message id. */
const deadLetter = async (conversation: string): Promise<string> => {
  const response = await harness.post({ sender_id: conversation, text: `doomed ${conversation}` });
  expect(response.status).toBe(200);
  return ((await response.json()) as { message_id: string }).message_id;
};
const admin = (method: string, path: string): Promise<Response> =>
  fetch(`${harness.baseUrl}${path}`, { method, headers: { authorization: `Bearer ${ADMIN_SECRET}` } });
const letterRows = () => page.locator("#dead-letters tbody tr");
const focusedId = () => page.evaluate(() => document.activeElement?.id);
const isListUrl = (url: URL): boolean => url.pathname === "/admin/dead-letters";
const isList = (request: Request): boolean => isListUrl(new URL(request.url()));
const isStatus = (request: Request): boolean => new URL(request.url()).pathname === "/admin/status";
const problem = (status: number, code: string, detail: string) => ({
  status,
  contentType: "application/problem+json",
  body: JSON.stringify({ type: "about:blank", title: code, status, code, detail }),
});
/** The id of the only dead letter listed, once it is. */
const onlyLetter = async (): Promise<string> => {
  await expect.poll(() => letterRows().count(), { timeout: 10_000 }).toBe(1);
  return (await letterRows().first().getAttribute("data-id")) ?? "";
};
const confirm = async (): Promise<void> => {
  await expect.poll(() => page.locator("#confirm").evaluate((dialog) => (dialog as HTMLDialogElement).open)).toBe(true);
  await page.locator("#confirm-ok").click();
};

beforeAll(async () => {
  browser = await launchChromium();
  harness = await startHarness(
    {},
    { status: (reply) => (refusing && replyText(reply).startsWith("doomed") ? 400 : 200) },
    { admin: { token_env: "ADMIN_SECRET" } },
    { ADMIN_SECRET },
  );
});

afterAll(async () => {
  await browser?.close();
  await harness?.close();
});

describe("the console when the API fails or changes under it", () => {
  let opened: ConsolePage | undefined;
  const open = async (): Promise<void> => {
    opened = await openConsolePage(browser, harness.baseUrl);
    tab = opened;
    page = tab.page;
  };
  afterEach(async () => {
    refusing = true;
    // Every letter left is deleted, so that each test starts from an empty list.
    const listed = (await (await admin("GET", "/admin/dead-letters")).json()) as { items: { id: string }[] };
    for (const item of listed.items) await admin("DELETE", `/admin/dead-letters/${item.id}`);
    // No uncaught exception in any test (the failed loads Chromium logs were asked for).
    expect(tab.errors.filter((error) => !error.startsWith("console: Failed to load resource"))).toEqual([]);
    await opened?.close();
  });

  it("says on the sign-in form why signing in failed, and forgets the secret", async () => {
    await open();
    await page.goto(`${harness.baseUrl}/admin/`);
    await page.route("**/admin/status", (route) => route.abort("connectionrefused"), { times: 1 });
    await page.locator("#secret").fill(ADMIN_SECRET);
    await page.locator("#secret").press("Enter");
    await expect
      .poll(() => page.locator("#sign-in-error").textContent())
      .toMatch(/^Not signed in: could not reach the service \(.+\)\.$/);
    expect(await page.locator("#sign-in-section").isVisible()).toBe(true);
    expect(await page.evaluate((key) => sessionStorage.getItem(key), SECRET_KEY)).toBeNull();

    // A secret pasted with typographic quotes cannot go in a header at all.
    await page.locator("#secret").fill(`“${ADMIN_SECRET}”`);
    await page.locator("#secret").press("Enter");
    await expect
      .poll(() => page.locator("#sign-in-error").textContent())
      .toContain("the secret holds a character a browser cannot send in a header");
    expect(await page.evaluate((key) => sessionStorage.getItem(key), SECRET_KEY)).toBeNull();
    await page.reload();
    expect(await page.locator("#sign-in-error").textContent()).toBe("");
  });

  it("keeps refreshing after the dead letters failed once at sign-in, and says so meanwhile", async () => {
    await open();
    await page.route(isListUrl, (route) => route.fulfill(problem(502, "bad_gateway", "upstream")), {
      times: 1,
    });
    await signIn(page, harness.baseUrl, ADMIN_SECRET);
    await expect
      .poll(() => page.locator("#refresh-state").textContent())
      .toMatch(/^Could not refresh \(listing dead letters answered 502 bad_gateway: upstream\); trying again in/);
    // The next refresh draws the list, and the line says when.
    await expect
      .poll(() => page.locator("#dead-letters-empty").textContent(), { timeout: 10_000 })
      .toContain("No dead letters");
    expect(await page.locator("#refresh-state").textContent()).toMatch(/^Updated /);
    await page.waitForRequest(isStatus, { timeout: 10_000 });
  });

  it("goes back to every channel when the chosen one is no longer configured", async () => {
    await open();
    await signIn(page, harness.baseUrl, ADMIN_SECRET);
    await page.locator("#dead-letter-channel").selectOption("webhook");
    expect(await page.locator("#replay-all").textContent()).toBe("Replay all of webhook");
    // The service restarted with the channel renamed: its status names another channel.
    await page.route("**/admin/status", async (route: Route) => {
      const response = await route.fetch();
      const body = (await response.json()) as { channels: { channel: string }[] };
      for (const channel of body.channels) channel.channel = "renamed";
      await route.fulfill({ response, json: body });
    });
    const unfiltered = await page.waitForRequest((request) => isList(request) && !request.url().includes("channel="), {
      timeout: 10_000,
    });
    expect(unfiltered.url()).not.toContain("channel=");
    expect(await page.locator("#dead-letter-channel").inputValue()).toBe("");
    expect(await page.locator("#replay-all").textContent()).toBe("Replay all (every channel)");
    await page.unroute("**/admin/status");
  });

  it("gives the focus to the list's title after Replay or Delete by keyboard, and when a refresh removes the focused row", async () => {
    await open();
    await signIn(page, harness.baseUrl, ADMIN_SECRET);
    for (const action of ["#detail-replay", "#detail-delete"]) {
      refusing = true;
      await deadLetter(`focus-${action.slice(8)}`);
      const id = await onlyLetter();
      refusing = false;
      await tabTo(page, `[data-key="show:${id}"]`);
      await page.keyboard.press("Enter");
      await expect.poll(focusedId).toBe("detail-title");
      await tabTo(page, action);
      await page.keyboard.press("Enter");
      await expect.poll(focusedId).toBe("confirm-cancel");
      await page.keyboard.press("Tab");
      await page.keyboard.press("Enter");
      await expect.poll(() => letterRows().count()).toBe(0);
      await expect.poll(focusedId).toBe("dead-letters-title");
    }

    refusing = true;
    await deadLetter("focus-refresh");
    const id = await onlyLetter();
    await page.locator(`[data-key="select:${id}"]`).focus();
    expect((await admin("DELETE", `/admin/dead-letters/${id}`)).status).toBe(204);
    await expect.poll(() => letterRows().count(), { timeout: 10_000 }).toBe(0);
    await expect.poll(focusedId).toBe("dead-letters-title");
  });

  it("does not bring back a replayed letter when an earlier list answer arrives late", async () => {
    await open();
    await signIn(page, harness.baseUrl, ADMIN_SECRET);
    await deadLetter("late");
    const id = await onlyLetter();
    // The next timer refresh's list is held, with the letter in it, until the replay is drawn.
    let release = (): void => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let held: Request | undefined;
    await page.route(
      isListUrl,
      async (route) => {
        held = route.request();
        const response = await route.fetch();
        await released;
        await route.fulfill({ response });
      },
      { times: 1 },
    );
    await expect.poll(() => held !== undefined, { timeout: 10_000 }).toBe(true);
    refusing = false;
    await page.locator(`[data-key="show:${id}"]`).click();
    await page.locator("#detail").waitFor({ state: "visible" });
    await page.locator("#detail-replay").click();
    await confirm();
    await expect.poll(() => letterRows().count()).toBe(0);
    const finished = page.waitForEvent("requestfinished", (request) => request === held);
    release();
    await finished;
    // The refresh after the late answer starts: the letter was not drawn again meanwhile.
    await page.waitForRequest(isStatus, { timeout: 10_000 });
    expect(await letterRows().count()).toBe(0);
  });

  it("closes the detail of a letter deleted elsewhere, saying so", async () => {
    await open();
    await signIn(page, harness.baseUrl, ADMIN_SECRET);
    await deadLetter("elsewhere");
    const id = await onlyLetter();
    await page.locator(`[data-key="show:${id}"]`).click();
    await page.locator("#detail").waitFor({ state: "visible" });
    expect((await admin("DELETE", `/admin/dead-letters/${id}`)).status).toBe(204);
    await page.locator("#detail").waitFor({ state: "hidden", timeout: 10_000 });
    expect(await page.locator("#notice").textContent()).toBe(
      `Dead letter ${id} is no longer there: it was replayed or deleted.`,
    );
    await expect.poll(focusedId).toBe("dead-letters-title");
  });

  it("signs out when opening a letter answers 401, as every other request does", async () => {
    await open();
    await signIn(page, harness.baseUrl, ADMIN_SECRET);
    await deadLetter("revoked");
    const id = await onlyLetter();
    await page.route(`**/admin/dead-letters/${id}`, (route) =>
      route.fulfill(problem(401, "unauthorized", "A valid `Authorization: Bearer <secret>` header is required.")),
    );
    await page.locator(`[data-key="show:${id}"]`).click();
    await page.locator("#sign-in-section").waitFor({ state: "visible" });
    expect(await page.locator("#sign-in-error").textContent()).toMatch(/^Signed out: the API answered 401/);
    expect(await page.evaluate((key) => sessionStorage.getItem(key), SECRET_KEY)).toBeNull();
  });
});
