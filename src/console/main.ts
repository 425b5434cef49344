/**
 * The operator console's script, served at `/admin/console.js` (bundled by
 * scripts/build-console.mjs): it wires the page's controls, then signs in again with a secret
 * this tab kept. Every element it draws is built with `textContent`, never with markup from data.
 */
import { secret } from "./admin-api.js";
import { chooseChannel, deleteDetail, replayAll, replayDetail, replaySelected } from "./dead-letter-actions.js";
import { closeDetail } from "./dead-letter-detail.js";
import { byId } from "./dom.js";
import { moreMessages } from "./found-refresh.js";
import { guarded } from "./guarded.js";
import { signIn } from "./live-refresh.js";
import { closeFound, route, search, showFoundDeadLetter } from "./message-search.js";
import { errorMessage } from "./notice.js";
import { signOut } from "./sign-out.js";

function start(): void {
  byId("sign-in", HTMLFormElement).addEventListener(
    "submit",
    guarded((event: SubmitEvent) => {
      event.preventDefault();
      byId("sign-in-error", HTMLParagraphElement).textContent = "";
      return signIn(byId("secret", HTMLInputElement).value);
    }),
  );
  byId("sign-out", HTMLButtonElement).addEventListener("click", () => signOut("Signed out. The secret was forgotten."));
  byId("dead-letter-channel", HTMLSelectElement).addEventListener("change", guarded(chooseChannel));
  byId("replay-selected", HTMLButtonElement).addEventListener("click", guarded(replaySelected));
  byId("replay-all", HTMLButtonElement).addEventListener("click", guarded(replayAll));
  byId("detail-replay", HTMLButtonElement).addEventListener("click", guarded(replayDetail));
  byId("detail-delete", HTMLButtonElement).addEventListener("click", guarded(deleteDetail));
  byId("detail-close", HTMLButtonElement).addEventListener("click", closeDetail);
  byId("replay-all", HTMLButtonElement).textContent = "Replay all (every channel)";
  byId("search", HTMLFormElement).addEventListener(
    "submit",
    guarded((event: SubmitEvent) => {
      event.preventDefault();
      return search(byId("search-id", HTMLInputElement).value);
    }),
  );
  byId("conversation-more", HTMLButtonElement).addEventListener("click", guarded(moreMessages));
  byId("timeline-dead-letter", HTMLButtonElement).addEventListener("click", guarded(showFoundDeadLetter));
  byId("found-close", HTMLButtonElement).addEventListener("click", closeFound);
  // Links to a timeline or a conversation, and Back and Forward between them.
  window.addEventListener(
    "hashchange",
    guarded(() => (secret() === null ? Promise.resolve() : route())),
  );
  const kept = secret();
  if (kept !== null) {
    signIn(kept).catch((error: unknown) => signOut(`Not signed in: ${errorMessage(error)}`));
  }
}

start();
