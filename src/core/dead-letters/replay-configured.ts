import { ChannelError, isChannelError } from "../channel-error.js";
import type { DeadLetterStore, ReplayedLetter, ReplayFilter } from "./dead-letter-store.js";

/** A listed letter a replay left where it is, since no configured channel would run it. */
export interface UnconfiguredLetter {
  readonly id: string;
  readonly channel: string;
}

/** What a replay limited to the configured channels did. */
export interface ConfiguredReplay {
  readonly replayed: readonly ReplayedLetter[];
  /** Letters named by id whose channel is not configured: still listed, untouched. */
  readonly unconfigured: readonly UnconfiguredLetter[];
}

/**
 * Replays the letters `filter` names, but only those of a channel in `channels`: a letter of a
 * channel the configuration no longer has would leave the list and wait for a queue that does
 * not exist, out of sight of every command that could show, replay or delete it. It stays
 * listed instead. `channels` undefined: every letter, as the store replays them.
 *
 * A replay of everything is made channel by channel; a channel whose queue is full (503
 * `buffer_full`) keeps its letters and the others go on, and the refusal is thrown only when
 * no letter at all was replayed, as a store's own replay of everything does.
 */
export async function replayConfigured(
  store: Pick<DeadLetterStore, "one" | "replay">,
  filter: ReplayFilter,
  channels: readonly string[] | undefined,
): Promise<ConfiguredReplay> {
  if (channels === undefined) return { replayed: await store.replay(filter), unconfigured: [] };
  const known = new Set(channels);
  if (filter.channel !== undefined && !known.has(filter.channel)) throw channelNotConfiguredError([filter.channel]);
  if (filter.ids !== undefined) {
    const unconfigured: UnconfiguredLetter[] = [];
    const kept: string[] = [];
    for (const id of filter.ids) {
      const letter = await store.one(id);
      if (letter !== undefined && !known.has(letter.channel)) unconfigured.push({ id, channel: letter.channel });
      else kept.push(id);
    }
    const replayed = kept.length === 0 ? [] : await store.replay({ ...filter, ids: kept });
    return { replayed, unconfigured };
  }
  if (filter.channel !== undefined) return { replayed: await store.replay(filter), unconfigured: [] };
  const replayed: ReplayedLetter[] = [];
  let full: ChannelError | undefined;
  for (const channel of known) {
    try {
      replayed.push(...(await store.replay({ channel })));
    } catch (error) {
      if (!isChannelError(error) || error.code !== "buffer_full") throw error;
      full = error;
    }
  }
  if (replayed.length === 0 && full !== undefined) throw full;
  return { replayed, unconfigured: [] };
}

/**
 * The 409 of a replay that names only letters of channels the configuration does not have:
 * they stay listed. Not retryable as it is: the channel must come back first (or the letters
 * be deleted).
 */
export function channelNotConfiguredError(channels: readonly string[]): ChannelError {
  const names = [...new Set(channels)].map((channel) => JSON.stringify(channel)).join(", ");
  return new ChannelError(
    "channel_not_configured",
    `No channel ${names} is configured, so its dead letters cannot be replayed; they stay listed. Configure the channel again, or delete the letters.`,
    { status: 409, retryable: false },
  );
}
