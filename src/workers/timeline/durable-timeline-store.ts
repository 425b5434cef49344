import type { Logger } from "../../core/log/logger.js";
import type { TimelineEvent } from "../../core/timeline/timeline-event.js";
import type {
  ActivityCount,
  TimelineStore,
  TimelineSummary,
  TimelineWrite,
} from "../../core/timeline/timeline-store.js";
import type { TimelineShardObject } from "./timeline-shard-object.js";
import { shardName, shardOf, TIMELINE_SHARDS } from "./timeline-shards.js";

/**
 * Longest message or reply text the timeline keeps on Workers (with `timeline.keep_text`), in
 * UTF-16 code units: a Durable Object stores at most 2 MB in one value, and a message's events
 * are one value, so each text is cut to this; a batch of them also stays far below an RPC's limit.
 */
export const MAX_TEXT_CHARS = 50_000;

/** Where the shards are: how many, and the prefix of their names. */
export interface DurableTimelineOptions {
  /** Default {@link TIMELINE_SHARDS}. */
  readonly shards?: number;
  /** Default `timeline`; a test uses a prefix of its own to get shards of its own. */
  readonly prefix?: string;
  /** Where a message whose events could not be stored is reported; default nowhere. */
  readonly logger?: Logger;
}

/**
 * The message timeline on Workers: a {@link TimelineStore} over the shard objects. A batch's
 * writes are grouped by shard, one call per shard (the batch's minute counts ride with the
 * first); one message is one call to its shard; a page asks every shard for the page and merges
 * them, newest first; minute counts are summed over the shards. `prune` gives each shard its
 * share of `keep` (rounded up), so the whole keeps at most `keep` rounded up to the shards: ids
 * are random, so the shares are the most recent messages but for a few at the edge.
 */
export function createDurableTimelineStore(
  namespace: DurableObjectNamespace<TimelineShardObject>,
  options: DurableTimelineOptions = {},
): TimelineStore {
  const shards = options.shards ?? TIMELINE_SHARDS;
  const prefix = options.prefix ?? "timeline";
  // A fresh stub per call: a stub that saw certain errors cannot be used again.
  const shard = (index: number) => namespace.get(namespace.idFromName(shardName(prefix, index)));
  const everyShard = <T>(ask: (stub: DurableObjectStub<TimelineShardObject>) => Promise<T>): Promise<T[]> =>
    Promise.all(Array.from({ length: shards }, async (_, index) => await ask(shard(index))));

  return {
    async write(writes, activity) {
      const groups = new Map<number, TimelineWrite[]>();
      for (const write of writes) {
        const index = shardOf(write.id, shards);
        groups.set(index, [...(groups.get(index) ?? []), withTextsCut(write)]);
      }
      if (groups.size === 0 && activity.length > 0) groups.set(0, []);
      // Every call is made and awaited, so that a failed shard does not hide the others' outcome.
      const results = await Promise.allSettled(
        [...groups].map(
          async ([index, group], position) => await shard(index).write(group, position === 0 ? activity : []),
        ),
      );
      const refused = results.flatMap((result) => (result.status === "fulfilled" ? result.value : []));
      if (refused.length > 0) {
        options.logger?.warn(
          "message timeline: these messages' rows hold all they can; their new events are not kept",
          {
            message_ids: refused,
          },
        );
      }
      const failed = results.find((result) => result.status === "rejected");
      if (failed !== undefined) throw failed.reason;
    },
    async one(id) {
      return (await shard(shardOf(id, shards)).one(id)) ?? undefined;
    },
    async page(query) {
      const pages = await everyShard(async (stub) => await stub.page(query));
      return newestFirst(pages.flat()).slice(0, query.limit);
    },
    async activity(since) {
      const sums = new Map<string, ActivityCount>();
      for (const { minute, series, count } of (await everyShard(async (stub) => await stub.activity(since))).flat()) {
        const key = `${minute} ${series}`;
        sums.set(key, { minute, series, count: (sums.get(key)?.count ?? 0) + count });
      }
      return [...sums.values()];
    },
    async prune(limits) {
      const share = { ...limits, keep: Math.ceil(limits.keep / shards) };
      await everyShard(async (stub) => await stub.prune(share));
    },
  };
}

function newestFirst(rows: TimelineSummary[]): TimelineSummary[] {
  return rows.sort((a, b) => b.acceptedAt - a.acceptedAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
}

/** The write with each text cut to {@link MAX_TEXT_CHARS}. */
function withTextsCut(write: TimelineWrite): TimelineWrite {
  if (!write.events.some((event) => (textOf(event)?.length ?? 0) > MAX_TEXT_CHARS)) return write;
  return {
    ...write,
    events: write.events.map((event) => {
      const text = textOf(event);
      return text === undefined || text.length <= MAX_TEXT_CHARS || !("text" in event)
        ? event
        : { ...event, text: cut(text) };
    }),
  };
}

function textOf(event: TimelineEvent): string | undefined {
  return "text" in event ? event.text : undefined;
}

/** The first {@link MAX_TEXT_CHARS} code units, never half of a surrogate pair. */
function cut(text: string): string {
  const last = text.charCodeAt(MAX_TEXT_CHARS - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? MAX_TEXT_CHARS - 1 : MAX_TEXT_CHARS);
}
