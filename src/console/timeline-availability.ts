import { state } from "./console-state.js";
import { byId } from "./dom.js";

/**
 * Says whether the service keeps timelines. With the timeline off (`timeline` at 0 in the
 * configuration, or a runtime without it) every timeline route answers 404 saying so: the
 * search is then disabled with the API's words beside it, and the activity is not asked again
 * until the next sign-in, instead of logging a 404 every few seconds.
 */
export function setTimelineOff(words: string | null): void {
  state.timelineOff = words;
  const note = byId("search-off", HTMLParagraphElement);
  note.textContent =
    words === null ? "" : `Searching needs the message timeline, which this service does not keep: ${words}`;
  note.hidden = words === null;
  byId("search-id", HTMLInputElement).disabled = words !== null;
  byId("search-submit", HTMLButtonElement).disabled = words !== null;
}
