import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type JsonTestServer, startJsonServer } from "../support/json-test-server.js";
import { type ConsolePage, launchChromium, openConsolePage } from "./support/console-browser.js";
import { startWranglerDev, type WranglerDev } from "./support/wrangler-dev.js";

const SECRET = "workers-console-channel-secret-0123456789";
const ADMIN_SECRET = "workers-console-admin-secret-0123456789ab";

let browser: Browser;
let receiver: JsonTestServer;
let wrangler: WranglerDev;
let tab: ConsolePage;
let page: Page;
/** While true the receiver refuses every reply with a 400: a dead letter at once. */
let refusing = true;

/** The texts of the replies the receiver took. */
const delivered: string[] = [];
const letterRows = () => page.locator("#dead-letters tbody tr");

beforeAll(async () => {
  browser = await launchChromium();
  receiver = await startJsonServer((request) => {
    if (refusing) return { status: 400 };
    delivered.push(String((request.body as { text?: unknown } | undefined)?.text));
    return { status: 204 };
  });
  const config = {
    channels: [
      { type: "webhook", token_env: "WEBHOOK_SECRET", webhook: { outbound_url: `${receiver.origin}/replies` } },
    ],
    routes: [{ channel: "webhook", brain: "echo" }],
    admin: { token_env: "WEBHOOK_ADMIN_SECRET" },
  };
  wrangler = await startWranglerDev({
    WEBHOOK_SECRET: SECRET,
    WEBHOOK_ADMIN_SECRET: ADMIN_SECRET,
    CONFIG_JSON: JSON.stringify(config),
  });
  tab = await openConsolePage(browser, wrangler.origin);
  page = tab.page;
});

afterAll(async () => {
  await tab?.close();
  await browser?.close();
  await wrangler?.stop();
  await receiver?.close();
});

describe("the console under wrangler dev", () => {
  it("signs in and shows the receiver, saying plainly what a Worker cannot show", async () => {
    const response = await page.goto(`${wrangler.origin}/admin/`);
    expect(response?.headers()["content-security-policy"]).toContain("default-src 'self'");
    await page.locator("#secret").fill(ADMIN_SECRET);
    await page.locator("#secret").press("Enter");
    await page.locator("#console").waitFor({ state: "visible" });
    const row = page.locator("#channels tbody tr").first();
    expect(await row.locator("th").textContent()).toBe("webhook");
    expect(await row.textContent()).toContain("up");
    expect(await row.locator("abbr", { hasText: "n/a" }).count()).toBe(6);
    expect(await page.locator("#unavailable").textContent()).toContain("Analytics Engine");
    expect(await page.locator("#brains-empty").textContent()).toContain("Not available on this runtime");
    expect(await page.locator("#refresh-state").textContent()).toContain("on workers");
  });

  it("shows a dead letter as the dead-letter store keeps it, and replays it to the receiver with a click", async () => {
    const sent = await fetch(`${wrangler.origin}/webhook`, {
      method: "POST",
      headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" },
      body: JSON.stringify({ sender_id: "wanda", text: "refused then replayed" }),
    });
    expect(sent.status).toBe(200);
    await expect.poll(() => letterRows().count(), { timeout: 30_000, interval: 500 }).toBe(1);
    expect(await letterRows().first().textContent()).toContain("wanda");

    refusing = false;
    await letterRows().first().getByRole("button", { name: /^Show/ }).click();
    await page.locator("#detail").waitFor({ state: "visible" });
    expect(await page.locator("#detail-fields").textContent()).toContain("refused then replayed");
    await page.locator("#detail-replay").click();
    await page.locator("#confirm-ok").click();
    await expect.poll(() => page.locator("#notice").textContent()).toMatch(/the API answered 202 \{"replayed":1\}$/);
    await expect.poll(() => delivered, { timeout: 30_000, interval: 500 }).toContain("refused then replayed");
    await expect.poll(() => letterRows().count(), { timeout: 10_000 }).toBe(0);
  });

  it("finds the replayed message by its conversation, shows its timeline from accepted to delivered, and charts it", async () => {
    await page.locator("#search-id").fill("wanda");
    await page.locator("#search-id").press("Enter");
    await expect.poll(() => page.locator("#found-title").textContent()).toBe("Conversation wanda");
    const rows = page.locator("#conversation-messages tbody tr");
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(1);
    await rows.first().getByRole("link").click();
    await expect.poll(() => page.locator("#found-title").textContent()).toMatch(/^Message /);
    const status = page.locator("#timeline-fields dd").first();
    await expect.poll(() => status.textContent(), { timeout: 30_000, interval: 500 }).toBe("delivered");
    const titles = await page.locator("#timeline-events li strong").allTextContents();
    expect(titles[0]).toBe("Accepted");
    expect(titles).toEqual(expect.arrayContaining(["Post failed", "Dead-lettered", "Replayed", "Posted"]));
    expect(titles.at(-1)).toBe("Delivered");

    await page.locator("#activity-charts").waitFor({ state: "visible" });
    await expect
      .poll(async () => (await page.locator("#chart-counts-legend li").allTextContents())[0], { timeout: 10_000 })
      .toBe("Accepted: 1 in the hour");
    expect(await page.locator("#chart-counts svg.chart-svg path.line").count()).toBe(4);
  });

  it("kept its policy: no console error and no request to another origin", () => {
    expect(tab.errors).toEqual([]);
    expect(tab.foreign).toEqual([]);
  });
});
