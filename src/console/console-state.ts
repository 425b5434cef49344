import type { DeadLetterItem } from "../core/admin/dead-letter-item.js";

/** What the console remembers between refreshes, for this tab. */
export interface ConsoleState {
  /** The next refresh, while signed in. */
  timer: ReturnType<typeof setTimeout> | undefined;
  /** Dead letters ticked for "Replay selected", by id. */
  readonly selected: Set<string>;
  /** The dead letter open in the detail, if any. */
  detail: DeadLetterItem | null;
  /** The channel and text of the dead-letter page last drawn: the table is redrawn only when it changes. */
  letters: string;
  /** The channel the dead letters are filtered to; "" for all. */
  channel: string;
  /** The channel names last put in the filter. */
  channels: string;
}

/** The console's one state: a tab shows one console. */
export const state: ConsoleState = {
  timer: undefined,
  selected: new Set(),
  detail: null,
  letters: "",
  channel: "",
  channels: "",
};
