import { conversationKey } from "../core/conversation/conversation-store.js";
import { ChannelError } from "../core/errors/channel-error.js";
import type { QueuedMessage } from "../core/message/inbound-message.js";
import type { Queue } from "../core/queue/queue.js";

/** Options of the in-memory queue. */
export interface MemoryQueueOptions {
  /** Accepted messages not yet finished (waiting or in progress) that it holds at most. */
  readonly capacity: number;
  /** Messages processed at the same time (each of a different conversation). Default 64. */
  readonly concurrency?: number;
  /** Seconds a refused client is told to wait. Default 1. */
  readonly retryAfterSeconds?: number;
  /** Processes one message. */
  readonly handle: (message: QueuedMessage) => Promise<void>;
  /** Receives what `handle` threw; the message is then finished. */
  readonly onError: (message: QueuedMessage, error: unknown) => void;
}

/** The bounded in-memory queue of the Node runtime. */
export interface MemoryQueue extends Queue {
  /** Accepted messages not yet finished. */
  readonly size: number;
  /**
   * Resolves when every accepted message is finished, or after `timeoutMs`; returns the ids
   * of the messages still unfinished then.
   */
  drain(timeoutMs: number): Promise<string[]>;
}

/**
 * A bounded queue with one lane per conversation: a conversation's messages are processed
 * one at a time in acceptance order, while different conversations run concurrently.
 * When `capacity` messages are unfinished, `enqueue` refuses with `buffer_full`, so a slow
 * receiver pushes back on clients instead of growing memory.
 */
export function createMemoryQueue(options: MemoryQueueOptions): MemoryQueue {
  const { capacity, handle, onError } = options;
  const concurrency = options.concurrency ?? 64;
  const retryAfterSeconds = options.retryAfterSeconds ?? 1;
  const lanes = new Map<string, QueuedMessage[]>();
  // Lanes with waiting work and nothing in progress; a Set keeps insertion order (FIFO).
  const ready = new Set<string>();
  const inProgress = new Map<string, QueuedMessage>();
  let size = 0;
  let idleWaiters: (() => void)[] = [];

  const pump = (): void => {
    for (const key of ready) {
      if (inProgress.size >= concurrency) return;
      ready.delete(key);
      const message = lanes.get(key)?.shift();
      if (message !== undefined) run(key, message);
    }
  };

  const finish = (key: string): void => {
    inProgress.delete(key);
    size -= 1;
    const lane = lanes.get(key);
    if (lane === undefined || lane.length === 0) lanes.delete(key);
    else ready.add(key);
    if (size === 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
    pump();
  };

  const run = (key: string, message: QueuedMessage): void => {
    inProgress.set(key, message);
    let work: Promise<void>;
    try {
      work = handle(message);
    } catch (error) {
      work = Promise.reject(error);
    }
    work
      .catch((error: unknown) => onError(message, error))
      .finally(() => finish(key))
      .catch(() => undefined);
  };

  return {
    get size() {
      return size;
    },
    enqueue(message) {
      if (size >= capacity) {
        return Promise.reject(
          new ChannelError("buffer_full", "The inbound buffer is full; retry shortly.", {
            status: 503,
            retryable: true,
            retryAfterSeconds,
          }),
        );
      }
      size += 1;
      const key = conversationKey(message.channel, message.message.conversationId);
      const lane = lanes.get(key);
      if (lane === undefined) {
        lanes.set(key, [message]);
        ready.add(key);
        pump();
      } else lane.push(message);
      return Promise.resolve();
    },
    async drain(timeoutMs) {
      if (size > 0) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([
          new Promise<void>((resolve) => idleWaiters.push(resolve)),
          new Promise<void>((resolve) => {
            timer = setTimeout(resolve, timeoutMs);
          }),
        ]);
        clearTimeout(timer);
      }
      const left = [...inProgress.values()].map((message) => message.id);
      for (const lane of lanes.values()) for (const message of lane) left.push(message.id);
      return [...new Set(left)];
    },
  };
}
