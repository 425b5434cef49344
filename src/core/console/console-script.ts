import { CONSOLE_SCRIPT_BASE } from "./console-script-base.js";
import { CONSOLE_SCRIPT_DEAD_LETTERS } from "./console-script-dead-letters.js";
import { CONSOLE_SCRIPT_STATUS } from "./console-script-status.js";

/** Wires the page's controls, then signs in again with a secret this tab kept. */
// biome-ignore lint/complexity/noUselessStringRaw: raw like every part, so that a backslash added later reaches the browser as written
const START = String.raw`
function start() {
  byId("sign-in").addEventListener("submit", guarded(function (event) {
    event.preventDefault();
    byId("sign-in-error").textContent = "";
    return signIn(byId("secret").value);
  }));
  byId("sign-out").addEventListener("click", function () { signOut("Signed out. The secret was forgotten."); });
  byId("dead-letter-channel").addEventListener("change", guarded(chooseChannel));
  byId("replay-selected").addEventListener("click", guarded(replaySelected));
  byId("replay-all").addEventListener("click", guarded(replayAll));
  byId("detail-replay").addEventListener("click", guarded(replayDetail));
  byId("detail-delete").addEventListener("click", guarded(deleteDetail));
  byId("detail-close").addEventListener("click", closeDetail);
  byId("replay-all").textContent = "Replay all (every channel)";
  var kept = secret();
  if (kept !== null) signIn(kept).catch(function (error) { showSignIn("Could not reach the service: " + error.message); });
}
start();
`;

/**
 * The console's script, served at `/admin/console.js`: one strict function scope over its
 * parts, so that nothing leaks into the page's globals. It is text in a core module rather
 * than a file built into `dist/`, so that Node, `wrangler dev` and a deployed Worker serve it
 * with nothing to build.
 */
export const CONSOLE_SCRIPT = `(function () {
"use strict";
${CONSOLE_SCRIPT_BASE}
${CONSOLE_SCRIPT_STATUS}
${CONSOLE_SCRIPT_DEAD_LETTERS}
${START}
})();
`;
