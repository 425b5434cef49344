/**
 * The console's sign-in and message search as a person uses them, and what its open timeline
 * shows, read from the page: shared by the tests that compare the console with the admin API.
 */
import type { Page } from "playwright-core";

/** Opens the console of `origin`, signs in with the admin secret and waits until it shows. */
export async function signIn(page: Page, origin: string, secret: string): Promise<void> {
  await page.goto(`${origin}/admin/`);
  await page.locator("#secret").fill(secret);
  await page.locator("#secret").press("Enter");
  await page.locator("#console").waitFor({ state: "visible" });
}

/** Types `text` (a message or conversation id) into the search box and submits it. */
export async function searchFor(page: Page, text: string): Promise<void> {
  await page.locator("#search-id").fill(text);
  await page.locator("#search-id").press("Enter");
}

/** The status the open timeline shows, in the console's words (its first field). */
export function shownStatus(page: Page): Promise<string | null> {
  return page.locator("#timeline-fields dd").first().textContent();
}

/** The titles of the open timeline's events, oldest first. */
export function shownEventTitles(page: Page): Promise<string[]> {
  return page.locator("#timeline-events li strong").allTextContents();
}

/** The time of each of the open timeline's events, as its `datetime` attribute (UTC, ISO 8601). */
export function shownEventTimes(page: Page): Promise<(string | undefined)[]> {
  return page
    .locator("#timeline-events li")
    .evaluateAll((items) => items.map((item) => item.querySelector("time")?.getAttribute("datetime") ?? undefined));
}
