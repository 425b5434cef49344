/**
 * How many Durable Objects hold the message timeline. Each message's row lives in one, chosen
 * by its id, so writes spread evenly whatever the conversations; reading one message asks one
 * shard, and lists and charts ask all of them. Enough for the inbound queue's 5,000 messages a
 * second at two shard requests each, well under an object's soft limit. Changing it sends the
 * later events of messages recorded before to another shard than their first: keep it.
 */
export const TIMELINE_SHARDS = 16;

/** The names the shards are addressed by (`idFromName`), under a prefix: `timeline` in production. */
export function shardName(prefix: string, index: number): string {
  return `${prefix}-${index}`;
}

/**
 * The shard of message `id` among `shards`: FNV-1a over its UTF-16 code units. Stable across
 * isolates and deployments; message ids end in random bits, so shards fill evenly.
 */
export function shardOf(id: string, shards: number): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < id.length; index += 1) {
    hash ^= id.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % shards;
}
