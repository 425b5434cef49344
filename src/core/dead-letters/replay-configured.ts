import { ChannelError } from "../channel-error.js";
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
 * Replays the letters `filter` names, but only those of a channel in `channels` (the store
 * filters them, in its one replay): a letter of a channel the configuration no longer has would
 * leave the list and wait for a queue that does not exist, out of sight of every command that
 * could show, replay or delete it. It stays listed instead. The ids the replay did not take are
 * looked up, to tell a letter left listed from an id that names none. `channels` undefined:
 * every letter, as the store replays them.
 */
export async function replayConfigured(
  store: Pick<DeadLetterStore, "one" | "replay">,
  filter: ReplayFilter,
  channels: readonly string[] | undefined,
): Promise<ConfiguredReplay> {
  if (channels === undefined) return { replayed: await store.replay(filter), unconfigured: [] };
  const known = new Set(channels);
  if (filter.channel !== undefined && !known.has(filter.channel)) throw channelNotConfiguredError([filter.channel]);
  const replayed = await store.replay({ ...filter, channels });
  const unconfigured: UnconfiguredLetter[] = [];
  if (filter.ids !== undefined) {
    const taken = new Set(replayed.map((letter) => letter.id));
    for (const id of filter.ids) {
      if (taken.has(id)) continue;
      const letter = await store.one(id);
      if (letter !== undefined && !known.has(letter.channel)) unconfigured.push({ id, channel: letter.channel });
    }
  }
  return { replayed, unconfigured };
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
    `No channel ${names} is configured here, so no dead letter of it is replayed; any stay listed. Configure the channel again, or delete its letters.`,
    { status: 409, retryable: false },
  );
}
