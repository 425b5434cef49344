import { byId } from "./dom.js";

/** Says what an action did, or why it failed, in the notice above the tables (a polite live region). */
export function notify(text: string, failed = false): void {
  const notice = byId("notice", HTMLParagraphElement);
  notice.textContent = text;
  notice.classList.toggle("failed", failed);
}

/** An error's message, for a sentence. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
