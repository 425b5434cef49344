import { keepSecret } from "./admin-api.js";
import { state } from "./console-state.js";
import { byId } from "./dom.js";
import { notify } from "./notice.js";

/** Shows the sign-in form, with `message` as its error, and stops refreshing. */
export function showSignIn(message = ""): void {
  clearTimeout(state.timer);
  state.timer = undefined;
  byId("console", HTMLDivElement).hidden = true;
  byId("session", HTMLParagraphElement).hidden = true;
  byId("sign-in-section", HTMLElement).hidden = false;
  byId("sign-in-error", HTMLParagraphElement).textContent = message;
  const input = byId("secret", HTMLInputElement);
  input.value = "";
  input.focus();
}

/** Forgets the secret and everything shown with it, and asks for the secret again. */
export function signOut(message: string): void {
  keepSecret(null);
  state.selected.clear();
  state.letters = "";
  state.detail = null;
  state.found = null;
  state.activity = "";
  state.timelineOff = null;
  byId("detail", HTMLElement).hidden = true;
  byId("found", HTMLElement).hidden = true;
  // A question still open would sit over the sign-in form, and its answer go without a secret.
  const question = byId("confirm", HTMLDialogElement);
  if (question.open) question.close();
  notify("");
  showSignIn(message);
}
