import type { StatusReport } from "../core/admin/status-report.js";
import { refreshActivity } from "./activity-view.js";
import { api, describe, keepSecret, secret } from "./admin-api.js";
import { state } from "./console-state.js";
import { refreshLetters } from "./dead-letter-list.js";
import { byId } from "./dom.js";
import { refreshFound, route } from "./message-search.js";
import { errorMessage } from "./notice.js";
import { showSignIn, signOut } from "./sign-out.js";
import { REFRESH_MS, renderStatus } from "./status-view.js";

/** Tries the secret on the status endpoint; keeps it for the tab only when the API takes it. */
export async function signIn(value: string): Promise<void> {
  keepSecret(value);
  const answer = await api("GET", "/admin/status");
  if (answer.status !== 200) {
    keepSecret(null);
    showSignIn(`Not signed in: the API answered ${describe(answer)}`);
    return;
  }
  byId("sign-in-section", HTMLElement).hidden = true;
  byId("session", HTMLParagraphElement).hidden = false;
  byId("console", HTMLDivElement).hidden = false;
  renderStatus(answer.data as StatusReport);
  await Promise.all([refreshLetters(), refreshActivity()]);
  schedule();
  byId("channels-title", HTMLHeadingElement).focus();
  // A shared address (#message=<id>) opens what it names once signed in.
  await route();
}

/** The next refresh, in {@link REFRESH_MS}; a failed one says so and tries again. */
function schedule(): void {
  clearTimeout(state.timer);
  state.timer = setTimeout(() => {
    refresh()
      .catch((error: unknown) => {
        byId("refresh-state", HTMLParagraphElement).textContent =
          `Could not reach the service (${errorMessage(error)}); trying again in ${REFRESH_MS / 1000} s.`;
      })
      .finally(() => {
        if (secret() !== null) schedule();
      });
  }, REFRESH_MS);
}

/** One refresh of the live parts; a 401 (the secret was changed) signs out with the API's words. */
export async function refresh(): Promise<void> {
  const answer = await api("GET", "/admin/status");
  if (answer.status === 401) {
    signOut(`Signed out: the API answered ${describe(answer)}`);
    return;
  }
  if (!answer.ok) throw new Error(`the status endpoint answered ${describe(answer)}`);
  renderStatus(answer.data as StatusReport);
  await Promise.all([refreshLetters(), refreshActivity(), refreshFound()]);
}
