import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServiceHarness, startHarness } from "../support/node-service.js";
import { type ConsolePage, fitsWidth, launchChromium, openConsolePage } from "./support/console-browser.js";

const ADMIN_SECRET = "browser-charts-admin-secret-0123456789ab";

interface Bucket {
  readonly start: string;
  readonly accepted: number;
  readonly delivered: number;
  readonly p50_ms: number | null;
}

let browser: Browser;
let harness: ServiceHarness;
let off: ServiceHarness;
let tab: ConsolePage;
let page: Page;

const admin = async (service: ServiceHarness, path: string): Promise<Response> =>
  fetch(`${service.baseUrl}${path}`, { headers: { authorization: `Bearer ${ADMIN_SECRET}` } });
const buckets = async (): Promise<Bucket[]> =>
  ((await (await admin(harness, "/admin/activity")).json()) as { buckets: Bucket[] }).buckets;
const acceptedInTheHour = async (): Promise<number> =>
  (await buckets()).reduce((total, bucket) => total + bucket.accepted, 0);
const send = async (count: number): Promise<void> => {
  for (let index = 0; index < count; index += 1) {
    expect((await harness.post({ sender_id: `chart-${index}`, text: `hello ${index}` })).status).toBe(200);
  }
};
const legend = (chart: string) => page.locator(`#${chart}-legend li`).allTextContents();
const signIn = async (page: Page, origin: string): Promise<void> => {
  await page.goto(`${origin}/admin/`);
  await page.locator("#secret").fill(ADMIN_SECRET);
  await page.locator("#secret").press("Enter");
  await page.locator("#console").waitFor({ state: "visible" });
};

beforeAll(async () => {
  browser = await launchChromium();
  harness = await startHarness({}, {}, { admin: { token_env: "ADMIN_SECRET" } }, { ADMIN_SECRET });
  off = await startHarness(
    {},
    {},
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
  await off?.close();
});

describe("the console's charts of the last hour on Node", () => {
  it("draws the messages per minute and the end-to-end time from GET /admin/activity, as SVG of its own", async () => {
    await send(3);
    await expect.poll(acceptedInTheHour, { timeout: 10_000 }).toBe(3);
    await signIn(page, harness.baseUrl);
    await page.locator("#activity-charts").waitFor({ state: "visible" });
    await expect
      .poll(() => legend("chart-counts"), { timeout: 10_000 })
      .toEqual([
        "Accepted: 3 in the hour",
        "Delivered: 3 in the hour",
        "Retrying: 0 in the hour",
        "Dead-lettered: 0 in the hour",
      ]);
    const counts = page.locator("#chart-counts svg.chart-svg");
    expect(await counts.getAttribute("role")).toBe("img");
    expect(await counts.getAttribute("aria-labelledby")).toBe("chart-counts-title");
    expect(await counts.getAttribute("aria-describedby")).toBe("chart-counts-summary");
    expect(await counts.locator("path.line").count()).toBe(4);
    // One band a minute, each with its numbers as a tooltip; the newest says what was sent.
    const bands = counts.locator("rect.band");
    expect(await bands.count()).toBe(60);
    // Compared with the API's newest minute, which a run across a minute's turn splits.
    await expect
      .poll(async () => {
        const newest = (await buckets()).at(-1);
        const title = (await bands.last().locator("title").textContent()) ?? "";
        return title.includes(`: ${newest?.accepted} accepted, ${newest?.delivered} delivered, 0 retrying`);
      })
      .toBe(true);

    // Delivered messages have an end-to-end time.
    expect((await buckets()).some((bucket) => bucket.p50_ms !== null)).toBe(true);
    expect(await page.locator("#chart-latency svg.chart-svg path.line").count()).toBeGreaterThan(0);
    expect(await page.locator("#chart-latency-summary").textContent()).toMatch(
      /^The latest minute with deliveries \(from \d\d:\d\d\): p50 \d+ ms, p99 \d+ ms\.$/,
    );

    // Every minute as numbers, newest first.
    await page.locator("#activity-details summary").click();
    const rows = page.locator("#activity-table tbody tr");
    expect(await rows.count()).toBe(60);
    await expect
      .poll(async () => {
        const last = (await buckets()).at(-1);
        const start = await rows.first().locator("th time").getAttribute("datetime");
        const accepted = await rows.first().locator("td").first().textContent();
        return start === last?.start && accepted === String(last?.accepted);
      })
      .toBe(true);
  });

  it("updates by itself as messages flow", async () => {
    await send(2);
    await expect
      .poll(async () => (await legend("chart-counts"))[0], { timeout: 10_000 })
      .toBe("Accepted: 5 in the hour");
    await expect
      .poll(async () => {
        const last = (await buckets()).at(-1);
        const summary = (await page.locator("#chart-counts-summary").textContent()) ?? "";
        return summary.includes(`: ${last?.accepted} accepted, ${last?.delivered} delivered, `);
      })
      .toBe(true);
  });

  it("reads at phone width, and kept its policy", async () => {
    await page.setViewportSize({ width: 360, height: 800 });
    expect(await fitsWidth(page)).toBe(true);
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(tab.errors).toEqual([]);
    expect(tab.foreign).toEqual([]);
  });

  it("says so once, and stops asking, when the service keeps no timeline", async () => {
    // A tab of its own: the service is another origin.
    const other = await openConsolePage(browser, off.baseUrl);
    const { page } = other;
    const activity: string[] = [];
    page.on("request", (request) => {
      if (new URL(request.url()).pathname === "/admin/activity") activity.push(request.url());
    });
    await signIn(page, off.baseUrl);
    await expect
      .poll(() => page.locator("#activity-state").textContent())
      .toMatch(/^No charts: the API answered 404 not_found: The message timeline is off/);
    expect(await page.locator("#activity-charts").isHidden()).toBe(true);
    expect(await page.locator("#search-id").isDisabled()).toBe(true);
    expect(await page.locator("#search-off").textContent()).toMatch(
      /^Searching needs the message timeline, which this service does not keep: 404 not_found: The message timeline is off/,
    );
    // Two refreshes later the activity was still asked only once.
    for (let refreshes = 0; refreshes < 2; refreshes += 1) {
      await page.waitForRequest((request) => new URL(request.url()).pathname === "/admin/status", { timeout: 10_000 });
    }
    expect(activity).toHaveLength(1);
    expect(other.errors).toEqual([
      "console: Failed to load resource: the server responded with a status of 404 (Not Found)",
    ]);
    expect(other.foreign).toEqual([]);
    await other.close();
  });
});
