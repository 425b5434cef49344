/**
 * The console of a service that keeps no message timeline: nothing offers a timeline that can
 * only answer 404, and an address naming one says why it is not shown.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReceivedReply } from "../../src/node/receiver/sample-receiver.js";
import { type ServiceHarness, startHarness } from "../support/node-service.js";
import { type ConsolePage, launchChromium, openConsolePage } from "./support/console-browser.js";
import { signIn } from "./support/console-timeline.js";

const ADMIN_SECRET = "browser-timeline-off-admin-secret-012345";

let browser: Browser;
let harness: ServiceHarness;
let tab: ConsolePage;
let page: Page;

const replyText = (reply: ReceivedReply): string => String((reply.body as { text?: unknown }).text);

beforeAll(async () => {
  browser = await launchChromium();
  harness = await startHarness(
    {},
    { status: (reply) => (replyText(reply).startsWith("doomed") ? 400 : 200) },
    { admin: { token_env: "ADMIN_SECRET" }, timeline: { retention_hours: 0 } },
    { ADMIN_SECRET },
  );
  tab = await openConsolePage(browser, harness.baseUrl);
  page = tab.page;
});

afterAll(async () => {
  await tab?.close();
  await browser?.close();
  await harness?.close();
});

describe("the console with the timeline off", () => {
  it("offers no Timeline link for a dead letter, and says why an address's message is not shown", async () => {
    const response = await harness.post({ sender_id: "olive", text: "doomed without a timeline" });
    expect(response.status).toBe(200);
    const { message_id: id } = (await response.json()) as { message_id: string };
    await signIn(page, harness.baseUrl, ADMIN_SECRET);
    const row = page.locator("#dead-letters tbody tr");
    await expect.poll(() => row.count(), { timeout: 10_000 }).toBe(1);
    expect(await row.locator("a").count()).toBe(0);
    await row.getByRole("button", { name: /^Show/ }).click();
    await page.locator("#detail").waitFor({ state: "visible" });
    expect(await page.locator("#detail-fields a").count()).toBe(0);
    expect(await page.locator("#detail-fields").textContent()).toContain(id);

    await page.evaluate((wanted) => {
      location.hash = `#message=${wanted}`;
    }, id);
    await expect
      .poll(() => page.locator("#found-state").textContent())
      .toMatch(
        /^Not shown: this service keeps no message timeline; the API answered 404 not_found: The message timeline is off/,
      );
  });
});
