/**
 * A queue that hands items out in turn per key: the first item of the key that has waited
 * longest since its last turn, then that key goes to the back. One key with many items
 * therefore cannot hold back another key's single item for more than one turn.
 */
export interface FairQueue<T> {
  /** Items waiting, over all keys. */
  readonly size: number;
  /** Adds an item at the end of its key's queue; a key new to the queue takes the last turn. */
  push(key: string, item: T): void;
  /** The item whose turn it is, left in place; undefined when empty. */
  peek(): T | undefined;
  /** Takes out the item whose turn it is; undefined when empty. */
  shift(): T | undefined;
  /** Takes out every item, in turn order, leaving the queue empty. */
  drain(): T[];
}

/**
 * A round-robin queue over keys. A `Map` keeps the keys in turn order: a key that has had its
 * turn is deleted and set again, which moves it to the end, so a turn costs O(1) besides the
 * key's own array (a conversation rarely has more than one call waiting).
 */
export function createFairQueue<T>(): FairQueue<T> {
  const queues = new Map<string, T[]>();
  let size = 0;

  const first = (): [string, T[]] | undefined => queues.entries().next().value;

  const shift = (): T | undefined => {
    const entry = first();
    if (entry === undefined) return undefined;
    const [key, items] = entry;
    const item = items.shift();
    queues.delete(key);
    if (items.length > 0) queues.set(key, items);
    size -= 1;
    return item;
  };

  return {
    get size() {
      return size;
    },
    push(key, item) {
      const items = queues.get(key);
      if (items === undefined) queues.set(key, [item]);
      else items.push(item);
      size += 1;
    },
    peek: () => first()?.[1][0],
    shift,
    drain() {
      const items: T[] = [];
      while (size > 0) {
        const item = shift();
        if (item !== undefined) items.push(item);
      }
      return items;
    },
  };
}
