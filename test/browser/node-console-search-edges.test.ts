/**
 * The console's search at its edges: ids the address cannot carry as they are (`.`, `..`), ids
 * with spaces or at their longest, searches that find nothing or answer late, a page of older
 * messages that fails, a timeline whose message is gone, and one the service no longer keeps. Failures are made on demand by
 * routing the page's requests (Playwright's `page.route`).
 */
import type { Browser, Page, Route } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServiceHarness, startHarness } from "../support/node-service.js";
import { type ConsolePage, fitsWidth, launchChromium, openConsolePage } from "./support/console-browser.js";
import { searchFor, signIn } from "./support/console-timeline.js";

const ADMIN_SECRET = "browser-search-edges-admin-secret-012345";
/** The longest conversation id the webhook takes. */
const LONGEST_ID = 256;

let browser: Browser;
let harness: ServiceHarness;
let tab: ConsolePage;
let page: Page;

/** Posts a message to `conversation`; resolves to the id the service gave it. */
const send = async (conversation: string, text = "hello"): Promise<string> => {
  const response = await harness.post({ sender_id: "someone", conversation_id: conversation, text });
  expect(response.status).toBe(200);
  return ((await response.json()) as { message_id: string }).message_id;
};
const admin = (path: string): Promise<Response> =>
  fetch(`${harness.baseUrl}${path}`, { headers: { authorization: `Bearer ${ADMIN_SECRET}` } });
/** Resolves once the conversation has `count` messages in the timeline. */
const kept = async (conversation: string, count: number): Promise<void> => {
  const path = `/admin/messages?limit=100&conversation_id=${encodeURIComponent(conversation)}`;
  await expect
    .poll(async () => ((await (await admin(path)).json()) as { items: unknown[] }).items.length, { timeout: 10_000 })
    .toBe(count);
};
const title = () => page.locator("#found-title").textContent();
const foundState = () => page.locator("#found-state").textContent();
const rows = () => page.locator("#conversation-messages tbody tr");
const hash = () => page.evaluate(() => location.hash);
const isMessages = (url: URL): boolean => url.pathname === "/admin/messages";

beforeAll(async () => {
  browser = await launchChromium();
  harness = await startHarness({}, {}, { admin: { token_env: "ADMIN_SECRET" } }, { ADMIN_SECRET });
  tab = await openConsolePage(browser, harness.baseUrl, { width: 375, height: 800 });
  page = tab.page;
  await signIn(page, harness.baseUrl, ADMIN_SECRET);
});

afterAll(async () => {
  await tab?.close();
  await browser?.close();
  await harness?.close();
});

describe("the console's search at its edges", () => {
  it("keeps the list and the button when a page of older messages fails, and the button tries again", async () => {
    await Promise.all(Array.from({ length: 60 }, (_, index) => send("pager", `message ${index}`)));
    await kept("pager", 60);
    await searchFor(page, "pager");
    await expect.poll(() => rows().count()).toBe(50);
    await page.route(
      (url) => isMessages(url) && url.searchParams.has("cursor"),
      (route) =>
        route.fulfill({
          status: 503,
          contentType: "application/problem+json",
          body: JSON.stringify({ status: 503, code: "unavailable", title: "unavailable", detail: "Try again later." }),
        }),
      { times: 1 },
    );
    await page.locator("#conversation-more").click();
    await expect
      .poll(foundState)
      .toBe(
        "Could not load older messages: the API answered 503 unavailable: Try again later. The messages above stay; Show older messages tries again.",
      );
    expect(await page.locator("#conversation").isVisible()).toBe(true);
    expect(await rows().count()).toBe(50);
    await page.locator("#conversation-more").click();
    await expect.poll(() => rows().count()).toBe(60);
    expect(await page.locator("#conversation-more").isHidden()).toBe(true);
  });

  it("says there is no message `.` or `..`, from the box and from the address, without an error", async () => {
    for (const id of [".", ".."]) {
      await searchFor(page, id);
      await expect.poll(title).toBe(`Message ${id}`);
      expect(await foundState()).toBe("No message with that id — past retention or never accepted.");
      expect(await page.locator("#notice").textContent()).toBe("");
    }
    await page.evaluate(() => {
      location.hash = "#message=..";
    });
    await expect.poll(title).toBe("Message ..");
    expect(await foundState()).toBe("No message with that id — past retention or never accepted.");
    expect(tab.errors.filter((error) => error.startsWith("page:"))).toEqual([]);
  });

  it("names in the address what a search that found nothing shows", async () => {
    await send("histconv");
    await kept("histconv", 1);
    await searchFor(page, "histconv");
    await expect.poll(hash).toBe("#conversation=histconv");
    await searchFor(page, "does-not-exist");
    await expect.poll(title).toBe("Message does-not-exist");
    await expect.poll(hash).toBe("#message=does-not-exist");
  });

  it("wraps the longest conversation id rather than widen the page", async () => {
    const id = "x".repeat(LONGEST_ID);
    await send(id);
    await kept(id, 1);
    await searchFor(page, id);
    await expect.poll(title).toBe(`Conversation ${id}`);
    expect(await fitsWidth(page)).toBe(true);
  });

  it("finds a conversation whose id begins and ends with spaces, and an id pasted with spaces around it", async () => {
    await send(" spaced ");
    await kept(" spaced ", 1);
    await searchFor(page, " spaced ");
    await expect.poll(title).toBe("Conversation  spaced ");
    expect(await rows().count()).toBe(1);
    await send("tidy");
    await kept("tidy", 1);
    await searchFor(page, "  tidy ");
    await expect.poll(title).toBe("Conversation tidy");
    expect(await hash()).toBe("#conversation=tidy");
  });

  it("shows the later of two searches when the first answers last", async () => {
    await send("slow");
    await send("fast");
    await kept("slow", 1);
    await kept("fast", 1);
    let release = (): void => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let held: Route | undefined;
    await page.route(
      (url) => isMessages(url) && url.searchParams.get("conversation_id") === "slow",
      async (route) => {
        held = route;
        const response = await route.fetch();
        await released;
        await route.fulfill({ response });
      },
      { times: 1 },
    );
    await searchFor(page, "slow");
    await expect.poll(() => held !== undefined).toBe(true);
    await searchFor(page, "fast");
    await expect.poll(title).toBe("Conversation fast");
    const finished = page.waitForEvent("requestfinished", (request) => request === held?.request());
    release();
    await finished;
    // A round trip to the page after the late answer: it was dropped.
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve)));
    expect(await title()).toBe("Conversation fast");
    expect(await hash()).toBe("#conversation=fast");
  });

  it("says so when the open message's timeline is gone", async () => {
    const id = await send("gone");
    await kept("gone", 1);
    await searchFor(page, id);
    await expect.poll(title).toBe(`Message ${id}`);
    await page.locator("#timeline").waitFor({ state: "visible" });
    // As after a restart of a service that keeps its timeline in memory.
    await page.route(`**/admin/messages/${id}`, (route) =>
      route.fulfill({
        status: 404,
        contentType: "application/problem+json",
        body: JSON.stringify({ status: 404, code: "not_found", title: "not_found", detail: "No message." }),
      }),
    );
    await expect
      .poll(foundState, { timeout: 10_000 })
      .toBe("No message with that id — past retention or never accepted.");
    expect(await page.locator("#timeline").isHidden()).toBe(true);
    await page.unroute(`**/admin/messages/${id}`);
  });

  // Last: the console then takes the timeline for off until the next sign-in (each case reloads).
  it.each(["message", "conversation"] as const)(
    "says the timeline is off, not that the %s is gone, when the service comes back without it",
    async (kind) => {
      // A fresh page, signed in again with the secret the tab keeps: the timeline is on again.
      await page.reload();
      await page.locator("#console").waitFor({ state: "visible" });
      const conversation = `switched-off-${kind}`;
      const id = await send(conversation);
      await kept(conversation, 1);
      await searchFor(page, kind === "message" ? id : conversation);
      await expect.poll(title).toBe(kind === "message" ? `Message ${id}` : `Conversation ${conversation}`);
      await page.locator(kind === "message" ? "#timeline" : "#conversation").waitFor({ state: "visible" });
      // As after a restart with `timeline.retention_hours: 0`: every timeline route answers so.
      const off = (route: Route) =>
        route.fulfill({
          status: 404,
          contentType: "application/problem+json",
          body: JSON.stringify({
            status: 404,
            code: "not_found",
            title: "Not Found",
            detail:
              "The message timeline is off (timeline.retention_hours or timeline.max_messages is 0 in the configuration).",
          }),
        });
      const timelineRoute = (url: URL) =>
        url.pathname.startsWith("/admin/messages") || url.pathname === "/admin/activity";
      await page.route(timelineRoute, off);
      await expect
        .poll(foundState, { timeout: 10_000 })
        .toMatch(
          /^Not shown: this service keeps no message timeline; the API answered 404 not_found: The message timeline is off/,
        );
      expect(await page.locator("#found-detail").isHidden()).toBe(true);
      expect(await page.locator("#timeline").isHidden()).toBe(true);
      expect(await page.locator("#conversation").isHidden()).toBe(true);
      expect(await page.locator("#refresh-state").textContent()).not.toContain("Could not refresh");
      await page.unroute(timelineRoute);
    },
  );
});
