import { Gauge, type Registry } from "prom-client";

/** What a scrape reads from one channel's job queue. */
export interface QueueGaugeSource {
  /** Accepted messages not yet finished. */
  readonly size: number;
  readonly capacity: number;
  /** When the oldest unfinished message was accepted (epoch ms); undefined when none is. */
  oldestAcceptedAt(): number | undefined;
}

/** What the queue gauges read at scrape time. */
export interface QueueGaugeOptions {
  /** The job queue of each channel, by name. */
  readonly queues: () => ReadonlyMap<string, QueueGaugeSource>;
  /** Dead letters stored now, by channel; undefined: those counted since start. */
  readonly storedDeadLetters?: () => ReadonlyMap<string, number>;
  readonly now: () => number;
}

/**
 * The gauges of the channels' queues (depth, capacity, the oldest unfinished message's age),
 * read from the queues when `/metrics` is scraped: they cost the hot path nothing.
 */
export function registerQueueGauges(registry: Registry, options: QueueGaugeOptions): void {
  const registers = [registry];
  new Gauge({
    name: "webhook_channel_queue_depth",
    help: "Accepted messages not yet finished (waiting, running or waiting to retry).",
    labelNames: ["channel"],
    registers,
    collect() {
      for (const [channel, queue] of options.queues()) this.set({ channel }, queue.size);
    },
  });
  new Gauge({
    name: "webhook_channel_queue_capacity",
    help: "Unfinished messages a channel holds at most (buffer_capacity).",
    labelNames: ["channel"],
    registers,
    collect() {
      for (const [channel, queue] of options.queues()) this.set({ channel }, queue.capacity);
    },
  });
  new Gauge({
    name: "webhook_channel_oldest_pending_seconds",
    help: "Age of the oldest accepted message not yet finished; 0 when none.",
    registers,
    collect() {
      let oldest: number | undefined;
      for (const queue of options.queues().values()) {
        const at = queue.oldestAcceptedAt();
        if (at !== undefined && (oldest === undefined || at < oldest)) oldest = at;
      }
      this.set(oldest === undefined ? 0 : Math.max(0, (options.now() - oldest) / 1000));
    },
  });
}

/**
 * The dead letters of each channel: stored now (a durable state), or, without one, dead-lettered
 * since start (`sinceStart`).
 */
export function registerDeadLettersGauge(
  registry: Registry,
  options: QueueGaugeOptions,
  sinceStart: (channel: string) => number,
): void {
  const { storedDeadLetters } = options;
  new Gauge({
    name: "webhook_channel_dead_letters",
    help: "Dead letters stored now (state_dir), or dead-lettered since start without one.",
    labelNames: ["channel"],
    registers: [registry],
    collect() {
      const stored = storedDeadLetters?.();
      for (const channel of options.queues().keys()) {
        const count = stored === undefined ? sinceStart(channel) : (stored.get(channel) ?? 0);
        this.set({ channel }, count);
      }
    },
  });
}
