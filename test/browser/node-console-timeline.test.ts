import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReceivedReply } from "../../src/node/receiver/sample-receiver.js";
import { type ServiceHarness, startHarness } from "../support/node-service.js";
import { type ConsolePage, fitsWidth, launchChromium, openConsolePage, tabTo } from "./support/console-browser.js";
import { searchFor, shownEventTimes, shownEventTitles, shownStatus, signIn } from "./support/console-timeline.js";

const ADMIN_SECRET = "browser-timeline-admin-secret-0123456789";
/** Written over docs/console-timeline.png only when asked, as node-console.test.ts does with docs/console.png. */
const SCREENSHOT =
  process.env.UPDATE_SCREENSHOT === "1"
    ? fileURLToPath(new URL("../../docs/console-timeline.png", import.meta.url))
    : join(mkdtempSync(join(tmpdir(), "webhook-channel-console-")), "console-timeline.png");

let browser: Browser;
let harness: ServiceHarness;
let tab: ConsolePage;
let page: Page;
/** While true the receiver answers 503 to replies starting "outage"; it always refuses "doomed" with a 400. */
let receiverDown = true;

const replyText = (reply: ReceivedReply): string => String((reply.body as { text?: unknown }).text);
/** Posts a message; resolves to the id the service gave it. */
const send = async (text: string, conversation: string): Promise<string> => {
  const response = await harness.post({ sender_id: conversation, text });
  expect(response.status).toBe(200);
  return ((await response.json()) as { message_id: string }).message_id;
};
const admin = (path: string): Promise<Response> =>
  fetch(`${harness.baseUrl}${path}`, { headers: { authorization: `Bearer ${ADMIN_SECRET}` } });
/** A message's timeline as the admin API answers it. */
const apiTimeline = async (id: string): Promise<{ status: string; events: { type: string }[] }> =>
  (await (await admin(`/admin/messages/${encodeURIComponent(id)}`)).json()) as {
    status: string;
    events: { type: string }[];
  };
/** Resolves once the timeline has the message: the service writes what it gathered a moment after accepting it. */
const known = async (id: string): Promise<void> => {
  await expect
    .poll(async () => (await admin(`/admin/messages/${encodeURIComponent(id)}`)).status, { timeout: 10_000 })
    .toBe(200);
};
const findState = () => page.locator("#found-state").textContent();
const timelineStatus = () => shownStatus(page);
const eventTitles = () => shownEventTitles(page);
const search = (text: string): Promise<void> => searchFor(page, text);

beforeAll(async () => {
  browser = await launchChromium();
  harness = await startHarness(
    // Quick retries, so that an outage and the recovery after it take a second or two.
    { delivery: { initial_delay_ms: 200, max_delay_ms: 500, max_attempts: 1000, max_age_ms: 600_000 } },
    {
      status: (reply) => {
        const text = replyText(reply);
        if (text.startsWith("doomed")) return 400;
        return receiverDown && text.startsWith("outage") ? 503 : 200;
      },
    },
    { admin: { token_env: "ADMIN_SECRET" } },
    { ADMIN_SECRET },
  );
  tab = await openConsolePage(browser, harness.baseUrl);
  page = tab.page;
  await signIn(page, harness.baseUrl, ADMIN_SECRET);
});

afterAll(async () => {
  await tab?.close();
  await browser?.close();
  await harness?.close();
});

describe("the console's search and timelines on Node", () => {
  it("finds a message by its id, by keyboard, and follows it live through a receiver outage to its delivery", async () => {
    const id = await send("outage one", "olga");
    await known(id);
    await tabTo(page, "#search-id");
    await page.keyboard.type(id);
    await page.keyboard.press("Enter");
    await expect.poll(() => page.locator("#found-title").textContent()).toBe(`Message ${id}`);
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe("found-title");
    expect(page.url()).toBe(`${harness.baseUrl}/admin/#message=${id}`);
    // The receiver answers 503: each failed POST and the retry after it show up without a click.
    await expect.poll(eventTitles, { timeout: 10_000 }).toEqual(expect.arrayContaining(["Post failed"]));
    expect((await eventTitles()).slice(0, 3)).toEqual(["Accepted", "Brain answered", "Reply 1"]);
    expect(await page.locator("#timeline-events li.failed").first().textContent()).toContain("HTTP 503");

    receiverDown = false;
    await expect.poll(timelineStatus, { timeout: 10_000 }).toBe("delivered");
    const titles = await eventTitles();
    expect(titles.at(-2)).toBe("Posted");
    expect(titles.at(-1)).toBe("Delivered");
    // The list is the API's events, in its order, each with its time.
    const api = await apiTimeline(id);
    expect(api.status).toBe("delivered");
    expect(titles).toHaveLength(api.events.length);
    const times = await shownEventTimes(page);
    expect(times).toHaveLength(api.events.length);
    expect(times.every((time) => typeof time === "string" && time.endsWith("Z"))).toBe(true);
    // The pointer off the charts, whose minute under it would be highlighted.
    await page.mouse.move(0, 0);
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
  });

  it("lists a conversation's messages newest first, each linking to its timeline; Back returns to the list", async () => {
    const second = await send("second", "olga");
    const third = await send("third", "olga");
    await known(third);
    await search("olga");
    await expect.poll(() => page.locator("#found-title").textContent()).toBe("Conversation olga");
    const rows = page.locator("#conversation-messages tbody tr");
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(3);
    expect(await rows.evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-id")).slice(0, 2))).toEqual([
      third,
      second,
    ]);
    expect(await findState()).toBe("3 messages, newest first. Each links to its timeline.");

    await rows
      .nth(1)
      .getByRole("link", { name: `Timeline of message ${second}` })
      .click();
    await expect.poll(() => page.locator("#found-title").textContent()).toBe(`Message ${second}`);
    await expect.poll(timelineStatus, { timeout: 10_000 }).toBe("delivered");
    await page.goBack();
    await expect.poll(() => page.locator("#found-title").textContent()).toBe("Conversation olga");
    expect(await page.locator("#conversation").isVisible()).toBe(true);
  });

  it("links each dead letter to its message's timeline, and the timeline back to the dead letter", async () => {
    const id = await send("doomed here", "petra");
    const row = page.locator(`#dead-letters tbody tr[data-id="${id}"]`);
    await row.waitFor({ timeout: 10_000 });
    await row.getByRole("link", { name: `Timeline of message ${id}` }).click();
    await expect.poll(() => page.locator("#found-title").textContent()).toBe(`Message ${id}`);
    await expect.poll(timelineStatus).toBe("dead letter");
    expect((await eventTitles()).at(-1)).toBe("Dead-lettered");
    expect(await page.locator("#timeline-events li").last().textContent()).toMatch(/answered 400$/);
    await page.locator("#timeline-dead-letter").click();
    await expect.poll(() => page.locator("#detail-title").textContent()).toBe(`Dead letter ${id}`);
    await page.locator("#detail-close").click();
  });

  it("says plainly when no message has that id", async () => {
    await search("no-such-message");
    await expect.poll(findState).toBe("No message with that id — past retention or never accepted.");
    expect(await page.locator("#found-detail").textContent()).toBe(
      "No conversation with that id has messages kept either.",
    );
    expect(await page.locator("#timeline").isHidden()).toBe(true);
    // Chromium logs the 404 it was asked for; it is the only one allowed.
    expect(tab.errors.splice(0)).toEqual([
      "console: Failed to load resource: the server responded with a status of 404 (Not Found)",
    ]);
    await page.locator("#found-close").click();
    expect(await page.locator("#found").isHidden()).toBe(true);
    expect(page.url()).toBe(`${harness.baseUrl}/admin/`);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("search-id");
  });

  it("reads at phone width with a timeline open, and kept its policy", async () => {
    await search("olga");
    await page.locator("#conversation-messages tbody tr").first().getByRole("link").click();
    await page.locator("#timeline").waitFor({ state: "visible" });
    await page.setViewportSize({ width: 360, height: 800 });
    expect(await fitsWidth(page)).toBe(true);
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(tab.errors).toEqual([]);
    expect(tab.foreign).toEqual([]);
  });
});
