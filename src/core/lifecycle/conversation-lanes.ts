/**
 * One lane per conversation: the items of a conversation in acceptance order, of which only
 * the head may run, so a conversation's replies keep their order and its brain never sees
 * two turns at once; different conversations are independent. Both runtimes order work with
 * it: the Node job queue, and the Workers consumer within a batch.
 */
export class ConversationLanes<T> {
  private readonly lanes = new Map<string, T[]>();

  /** Appends an item to its conversation's lane; true when it is the head (the lane was empty). */
  push(key: string, item: T): boolean {
    const lane = this.lanes.get(key);
    if (lane === undefined) {
      this.lanes.set(key, [item]);
      return true;
    }
    lane.push(item);
    return false;
  }

  /** A conversation's items, in order (none: empty). */
  lane(key: string): readonly T[] {
    return this.lanes.get(key) ?? [];
  }

  /** The item of the conversation that may run now. */
  head(key: string): T | undefined {
    return this.lanes.get(key)?.[0];
  }

  /** Replaces the head (a job that made progress). */
  replaceHead(key: string, item: T): void {
    const lane = this.lanes.get(key);
    if (lane !== undefined && lane.length > 0) lane[0] = item;
  }

  /** Removes the head once it is finished; returns the next one, if any. */
  shift(key: string): T | undefined {
    const lane = this.lanes.get(key);
    if (lane === undefined) return undefined;
    lane.shift();
    if (lane.length === 0) {
      this.lanes.delete(key);
      return undefined;
    }
    return lane[0];
  }

  /** Every lane, each in order. */
  all(): IterableIterator<readonly T[]> {
    return this.lanes.values();
  }

  /** Every lane with its key. */
  entries(): IterableIterator<[string, readonly T[]]> {
    return this.lanes.entries();
  }

  /** Replaces a lane's items (none: the lane goes). */
  keep(key: string, items: readonly T[]): void {
    if (items.length === 0) this.lanes.delete(key);
    else this.lanes.set(key, [...items]);
  }
}
