import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StatusReport } from "../../src/core/admin/status-report.js";
import { type JsonTestServer, startJsonServer } from "../support/json-test-server.js";
import { type ServiceHarness, startHarness } from "../support/node-service.js";
import { type ConsolePage, launchChromium, openConsolePage } from "./support/console-browser.js";

// A brain that calls out, on its own service: node-console.test.ts runs echo (no brains to show)
// and makes the screenshot, which a paused brain would change.

const ADMIN_SECRET = "browser-brains-admin-secret-0123456789";

let browser: Browser;
let model: JsonTestServer;
/** While true the brain's server answers 429 with Retry-After: 60. */
let limited = false;
let harness: ServiceHarness;
let tab: ConsolePage;

beforeAll(async () => {
  browser = await launchChromium();
  model = await startJsonServer(() =>
    limited ? { status: 429, headers: { "retry-after": "60" }, body: {} } : { status: 200, body: { text: "ok" } },
  );
  harness = await startHarness(
    {},
    {},
    {
      admin: { token_env: "ADMIN_SECRET" },
      brains: { local: { type: "http", url: `${model.origin}/bot` } },
      routes: [{ channel: "webhook", brain: "local" }],
    },
    { ADMIN_SECRET },
  );
  tab = await openConsolePage(browser, harness.baseUrl);
});

afterAll(async () => {
  await tab?.close();
  await browser?.close();
  await harness?.close();
  await model?.close();
});

/** The brain's `paused_until` as `GET /admin/status` gives it. */
async function pausedUntil(): Promise<string | null | undefined> {
  const response = await fetch(`${harness.baseUrl}/admin/status`, {
    headers: { authorization: `Bearer ${ADMIN_SECRET}` },
  });
  const report = (await response.json()) as StatusReport;
  return report.brains?.find((brain) => brain.brain === "local")?.paused_until;
}

describe("the console on Node, with a brain that calls out", () => {
  it("shows a paused brain until when (local time, UTC on hover) and since when", async () => {
    const { page } = tab;
    await page.goto(`${harness.baseUrl}/admin/`);
    await page.keyboard.type(ADMIN_SECRET);
    await page.keyboard.press("Enter");
    await page.locator("#console").waitFor({ state: "visible" });
    const row = page.locator("#brains tbody tr").first();
    await expect.poll(() => row.textContent()).toBe("local0no");

    // Its server answers 429 with Retry-After: 60: the brain pauses for everyone for a minute.
    limited = true;
    expect((await harness.post({ sender_id: "alice", text: "hi" })).status).toBe(200);
    await expect.poll(() => pausedUntil(), { timeout: 10_000 }).toMatch(/^\d{4}-\d\d-\d\dT/);
    const until = await pausedUntil();
    const cell = row.locator("td").nth(1);
    await expect.poll(() => cell.textContent(), { timeout: 10_000 }).toMatch(/^paused until .+ \(since .+\)$/);
    const times = cell.locator("time");
    expect(await times.count()).toBe(2);
    expect(await times.first().getAttribute("datetime")).toBe(until);
    expect(await times.first().getAttribute("title")).toBe(`${String(until).replace("T", " ").replace(/Z$/, "")} UTC`);
    expect(await times.first().textContent()).toBe(
      new Date(String(until)).toLocaleString("en-GB", { timeZone: "Europe/Berlin" }),
    );
    expect(tab.errors).toEqual([]);
    expect(tab.foreign).toEqual([]);
  });
});
