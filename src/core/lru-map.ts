interface Entry<V> {
  readonly key: string;
  value: V;
  older: Entry<V> | undefined;
  newer: Entry<V> | undefined;
}

/**
 * A map that knows which key was used least recently, and forgets it in constant time when it
 * holds more than it may: a Map for lookups and a doubly linked list for the order. (A bare
 * Map re-inserted on every use would keep the order too, but finding its oldest key means
 * iterating from the start of its table past every deleted slot: minutes for a million keys.)
 */
export class LruMap<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private oldest: Entry<V> | undefined;
  private newest: Entry<V> | undefined;

  /** How many keys are held. */
  get size(): number {
    return this.entries.size;
  }

  /** The value of `key`, without counting it as a use. */
  get(key: string): V | undefined {
    return this.entries.get(key)?.value;
  }

  /** Sets `key` and makes it the most recently used. */
  set(key: string, value: V): void {
    const entry = this.entries.get(key);
    if (entry === undefined) {
      const added: Entry<V> = { key, value, older: this.newest, newer: undefined };
      if (this.newest === undefined) this.oldest = added;
      else this.newest.newer = added;
      this.newest = added;
      this.entries.set(key, added);
      return;
    }
    entry.value = value;
    this.unlink(entry);
    entry.older = this.newest;
    entry.newer = undefined;
    if (this.newest === undefined) this.oldest = entry;
    else this.newest.newer = entry;
    this.newest = entry;
  }

  /** Forgets `key`. */
  delete(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.unlink(entry);
  }

  /** Forgets the least recently used keys until at most `limit` are held. */
  trimTo(limit: number): void {
    while (this.entries.size > limit && this.oldest !== undefined) this.delete(this.oldest.key);
  }

  private unlink(entry: Entry<V>): void {
    if (entry.older === undefined) this.oldest = entry.newer;
    else entry.older.newer = entry.newer;
    if (entry.newer === undefined) this.newest = entry.older;
    else entry.newer.older = entry.older;
  }
}
