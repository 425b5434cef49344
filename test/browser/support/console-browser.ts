import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { requireTool } from "../../support/test-tools.js";

/** A page of the console and what it did that a strict policy forbids or a person would notice. */
export interface ConsolePage {
  readonly page: Page;
  readonly context: BrowserContext;
  /** Console errors, uncaught exceptions and policy violations, in order. */
  readonly errors: string[];
  /** Requests the page made to any origin but the service's. */
  readonly foreign: string[];
  close(): Promise<void>;
}

/** Launches headless Chromium, failing plainly, with how to install it, when the Debian package is missing. */
export async function launchChromium(): Promise<Browser> {
  return await chromium.launch({ executablePath: requireTool("chromium", "browser"), headless: true });
}

/**
 * Opens a tab on `origin` that records every console error, uncaught exception and request to
 * another origin, so that a test can say the policy held. Times show in a fixed zone other
 * than UTC, so that a test can tell local time from the UTC on hover.
 */
export async function openConsolePage(
  browser: Browser,
  origin: string,
  viewport = { width: 1280, height: 900 },
): Promise<ConsolePage> {
  const context = await browser.newContext({ viewport, locale: "en-GB", timezoneId: "Europe/Berlin" });
  const page = await context.newPage();
  const errors: string[] = [];
  const foreign: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(`console: ${message.text()}`);
  });
  page.on("pageerror", (error) => errors.push(`page: ${error.message}`));
  page.on("request", (request) => {
    if (new URL(request.url()).origin !== origin) foreign.push(request.url());
  });
  return { page, context, errors, foreign, close: () => context.close() };
}

/** Presses Tab until the focused element matches `selector`; fails after `limit` presses. */
export async function tabTo(page: Page, selector: string, limit = 60): Promise<void> {
  for (let presses = 0; presses < limit; presses += 1) {
    if (await page.evaluate((wanted) => document.activeElement?.matches(wanted) === true, selector)) return;
    await page.keyboard.press("Tab");
  }
  throw new Error(`${selector} was not reached with ${limit} presses of Tab`);
}

/** Whether the page fits its viewport's width (tables may scroll inside their own box). */
export function fitsWidth(page: Page): Promise<boolean> {
  return page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth + 1);
}
