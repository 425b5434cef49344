import type { DeadLetterItem } from "../core/admin/dead-letter-item.js";
import type { FoundKind } from "./message-links.js";

/** What the found part shows: a message's timeline or a conversation's messages. */
export interface FoundView {
  readonly kind: FoundKind;
  readonly id: string;
  /** The answer last drawn: a refresh redraws only when it changed. */
  text: string;
  /** Where the conversation's next page starts; null when there is none. */
  cursor: string | null;
  /** Whether older pages were added below the first: the list is then no longer refreshed. */
  paged: boolean;
}

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
  /** Which draw of the dead letters is the latest asked for: an answer to an earlier one is dropped. */
  lettersAsked: number;
  /** How many dead letters the list drawn holds, and whether more follow; null before the first draw. */
  listed: { readonly count: number; readonly more: boolean } | null;
  /** Every channel's dead letters as the status counts them; null when the store did not answer, undefined before. */
  deadLetterTotal: number | null | undefined;
  /** The channel names last put in the filter. */
  channels: string;
  /** What the found part shows, if anything. */
  found: FoundView | null;
  /** The activity answer last drawn. */
  activity: string;
  /** What the API said when it answered that it keeps no timeline; null while it keeps them (or is not asked yet). */
  timelineOff: string | null;
  /** Which search or opening is the latest: an answer to an earlier one is dropped. */
  lookups: number;
}

/** The console's one state: a tab shows one console. */
export const state: ConsoleState = {
  timer: undefined,
  selected: new Set(),
  detail: null,
  letters: "",
  channel: "",
  lettersAsked: 0,
  listed: null,
  deadLetterTotal: undefined,
  channels: "",
  found: null,
  activity: "",
  timelineOff: null,
  lookups: 0,
};
