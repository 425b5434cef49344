import type { StatusReport } from "../core/admin/status-report.js";
import { refreshActivity } from "./activity-view.js";
import { api, describe, keepSecret, secret, sendable } from "./admin-api.js";
import { state } from "./console-state.js";
import { refreshDetail } from "./dead-letter-detail.js";
import { refreshLetters } from "./dead-letter-list.js";
import { byId } from "./dom.js";
import { refreshFound } from "./found-refresh.js";
import { route } from "./message-search.js";
import { errorMessage, notify } from "./notice.js";
import { showSignIn, signOut } from "./sign-out.js";
import { REFRESH_MS, renderStatus } from "./status-view.js";

/**
 * Tries the secret on the status endpoint; keeps it for the tab only when the API takes it.
 * Every way it can fail is said on the sign-in form, and the secret is then forgotten, so that
 * a reload never starts from a secret that did not work.
 */
export async function signIn(value: string): Promise<void> {
  if (!sendable(value)) {
    keepSecret(null);
    showSignIn(
      "Not signed in: the secret holds a character a browser cannot send in a header (a typographic quote or dash, say). Paste it again as plain text.",
    );
    return;
  }
  keepSecret(value);
  let answer: Awaited<ReturnType<typeof api>>;
  try {
    answer = await api("GET", "/admin/status");
  } catch (error) {
    keepSecret(null);
    showSignIn(`Not signed in: could not reach the service (${errorMessage(error)}).`);
    return;
  }
  if (answer.status !== 200 || !answer.ok) {
    keepSecret(null);
    showSignIn(`Not signed in: the API answered ${describe(answer)}`);
    return;
  }
  byId("sign-in-section", HTMLElement).hidden = true;
  byId("session", HTMLParagraphElement).hidden = false;
  byId("console", HTMLDivElement).hidden = false;
  renderStatus(answer.data as StatusReport);
  // The activity first: it tells whether the timeline is on, which the dead letters' links depend on.
  await refreshActivity().catch(() => undefined);
  const failure = await refreshParts([refreshLetters()]);
  if (failure !== undefined) sayFailed(failure);
  schedule();
  if (secret() === null) return;
  byId("channels-title", HTMLHeadingElement).focus();
  // A shared address (#message=<id>) opens what it names once signed in.
  await route().catch((error: unknown) => notify(`Could not open the address's item: ${errorMessage(error)}`, true));
}

/** Waits for every part; resolves to the first failure, if any, once all have settled. */
async function refreshParts(parts: readonly Promise<void>[]): Promise<unknown> {
  const results = await Promise.allSettled(parts);
  return results.find((result): result is PromiseRejectedResult => result.status === "rejected")?.reason;
}

function sayFailed(error: unknown): void {
  byId("refresh-state", HTMLParagraphElement).textContent =
    `Could not refresh (${errorMessage(error)}); trying again in ${REFRESH_MS / 1000} s.`;
}

/** The next refresh, in {@link REFRESH_MS}; a failed one says so and tries again. */
function schedule(): void {
  clearTimeout(state.timer);
  if (secret() === null) return;
  state.timer = setTimeout(() => {
    // refreshNow never rejects: a failure is said in the refresh line.
    void refreshNow().then(schedule);
  }, REFRESH_MS);
}

/** One refresh that never rejects: a failure is said in the refresh line, and the next one tries again. */
export function refreshNow(): Promise<void> {
  return refresh().catch(sayFailed);
}

/**
 * One refresh of the live parts; a 401 (the secret was changed) signs out with the API's words.
 * A part that fails does not keep the others from drawing; the first failure is thrown once all
 * have settled.
 */
async function refresh(): Promise<void> {
  const answer = await api("GET", "/admin/status");
  if (answer.status === 401) {
    signOut(`Signed out: the API answered ${describe(answer)}`);
    return;
  }
  if (!answer.ok) throw new Error(`the status endpoint answered ${describe(answer)}`);
  renderStatus(answer.data as StatusReport);
  // The open timeline after the activity: a 404 of both means the timeline is off, not the message gone.
  const activity = refreshActivity();
  const failure = await refreshParts([refreshLetters(), activity, activity.then(refreshFound), refreshDetail()]);
  if (failure !== undefined) throw failure;
}
