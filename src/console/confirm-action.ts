import { byId } from "./dom.js";

/** Asks before an action; resolves true only for the dialog's confirm button. Cancel has the focus. */
export function confirmAction(text: string, label: string): Promise<boolean> {
  return new Promise((resolve) => {
    const dialog = byId("confirm", HTMLDialogElement);
    byId("confirm-text", HTMLParagraphElement).textContent = text;
    byId("confirm-ok", HTMLButtonElement).textContent = label;
    dialog.returnValue = "";
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
    dialog.showModal();
    byId("confirm-cancel", HTMLButtonElement).focus();
  });
}
