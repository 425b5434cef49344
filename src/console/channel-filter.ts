import { state } from "./console-state.js";
import { byId, el } from "./dom.js";

/**
 * Filters the dead letters (and "Replay all") to `channel`, "" for every channel: the select,
 * the button's words and the list drawn all follow, the list at its next draw.
 */
export function setChannel(channel: string): void {
  state.channel = channel;
  state.letters = "";
  state.listed = null;
  const select = byId("dead-letter-channel", HTMLSelectElement);
  if (select.value !== channel) select.value = channel;
  byId("replay-all", HTMLButtonElement).textContent =
    channel === "" ? "Replay all (every channel)" : `Replay all of ${channel}`;
  renderLetterCount();
}

/**
 * Keeps the filter's options equal to the configured channels. A chosen channel that is gone
 * (renamed or removed, then the service restarted) falls back to every channel, filter and all,
 * rather than keep filtering to a channel the select no longer offers.
 */
export function syncChannelOptions(names: readonly string[]): void {
  const key = names.join("\n");
  if (key === state.channels) return;
  state.channels = key;
  const select = byId("dead-letter-channel", HTMLSelectElement);
  const options = [el("option", { value: "", text: "All channels" })];
  for (const name of names) options.push(el("option", { value: name, text: name }));
  select.replaceChildren(...options);
  if (names.includes(state.channel)) select.value = state.channel;
  else setChannel("");
}

/**
 * The count beside the dead letters' title: the status's total, and with a channel chosen how
 * many of them the list holds, so that the number matches the rows shown.
 */
export function renderLetterCount(): void {
  const total = state.deadLetterTotal;
  const count = byId("dead-letter-count", HTMLSpanElement);
  if (total === undefined) {
    count.textContent = "";
  } else if (total === null) {
    count.textContent = "(the dead-letter store did not answer)";
  } else if (state.channel === "" || state.listed === null) {
    count.textContent = `(${total} listed)`;
  } else {
    const shown = `${state.listed.count}${state.listed.more ? "+" : ""}`;
    count.textContent = `(${shown} on ${state.channel}, ${total} in all)`;
  }
}
