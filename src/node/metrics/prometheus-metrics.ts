import { Counter, collectDefaultMetrics, Gauge, Registry } from "prom-client";
import type { Metrics } from "../../core/metrics/metrics.js";
import { createBucketHistogram, type HistogramChild } from "./bucket-histogram.js";
import { type QueueGaugeOptions, registerDeadLettersGauge, registerQueueGauges } from "./queue-gauges.js";

export type { QueueGaugeSource } from "./queue-gauges.js";

/** What the Prometheus metrics read at scrape time. */
export interface PrometheusMetricsOptions extends QueueGaugeOptions {
  /** The configured channels, whose counters start at 0 before their first event. */
  readonly channels: readonly string[];
}

/** The Node metrics: the core's events in a prom-client registry of the service's own. */
export interface PrometheusMetrics extends Metrics {
  readonly registry: Registry;
  /** The exposition of `GET /metrics`. */
  respond(): Promise<Response>;
}

/** Seconds buckets from 5 ms to a minute: brains and receivers range from local to slow LLMs. */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** End to end includes retries, so its buckets reach an hour. */
const END_TO_END_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];

/**
 * One channel's counts and histogram children. Counters are plain numbers, copied into
 * prom-client at scrape time, and the histograms are {@link createBucketHistogram}'s: prom-client's
 * `inc` and `observe` hash and check the labels on every call, which the hot path is spared
 * (each message costs a few additions and three bucket scans).
 */
interface ChannelSeries {
  readonly requests: Map<number, number>;
  accepted: number;
  delivered: number;
  retries: number;
  deadLetters: number;
  readonly deliveryDuration: HistogramChild;
  readonly endToEnd: HistogramChild;
  readonly brains: Map<string, { ok: number; error: number; readonly duration: HistogramChild }>;
  /** 1 while the receiver is up (the default), 0 while it is down. */
  receiverUp: number;
  readonly receiverChanges: { up: number; down: number };
  /** Tokens reported, by brain. */
  readonly tokens: Map<string, { prompt: number; completion: number }>;
}

/**
 * Builds the Node metrics with the series of docs/operations.md, and the default process
 * metrics, in a registry of their own (so that two services in one process never collide).
 * Queue gauges and stored dead letters are read at scrape time, costing the hot path nothing.
 */
export function createPrometheusMetrics(options: PrometheusMetricsOptions): PrometheusMetrics {
  const registry = new Registry();
  const registers = [registry];
  collectDefaultMetrics({ register: registry });
  // Gauges named as counters fail `promtool check metrics`; each is the sum of the
  // `nodejs_active_*` gauge by type that stays.
  for (const name of ["nodejs_active_handles_total", "nodejs_active_requests_total", "nodejs_active_resources_total"])
    registry.removeSingleMetric(name);
  const series = new Map<string, ChannelSeries>();
  /** A counter whose samples are copied from `series` when scraped. */
  const counter = (
    name: string,
    help: string,
    labelNames: string[],
    copy: (set: (labels: Record<string, string>, value: number) => void) => void,
  ): void => {
    new Counter({
      name,
      help,
      labelNames,
      registers,
      collect() {
        this.reset();
        copy((labels, value) => this.inc(labels, value));
      },
    });
  };
  const perChannel = (name: string, help: string, read: (bound: ChannelSeries) => number): void =>
    counter(name, help, ["channel"], (set) => {
      for (const [channel, bound] of series) set({ channel }, read(bound));
    });
  const histogram = (name: string, help: string, labelNames: string[], buckets: number[]) =>
    createBucketHistogram({ name, help, labelNames, buckets, registry });

  counter(
    "webhook_channel_requests_total",
    "Answers on a channel's path, by HTTP status.",
    ["channel", "code"],
    (set) => {
      for (const [channel, bound] of series) {
        for (const [code, value] of bound.requests) set({ channel, code: String(code) }, value);
      }
    },
  );
  perChannel("webhook_channel_messages_accepted_total", "Messages accepted.", (bound) => bound.accepted);
  perChannel("webhook_channel_replies_delivered_total", "Reply POSTs that succeeded.", (bound) => bound.delivered);
  perChannel("webhook_channel_reply_retries_total", "Reply POSTs that will be tried again.", (bound) => bound.retries);
  counter(
    "webhook_channel_brain_calls_total",
    "Brain calls, by result (ok or error).",
    ["channel", "brain", "result"],
    (set) => {
      for (const [channel, bound] of series) {
        for (const [brain, calls] of bound.brains) {
          set({ channel, brain, result: "ok" }, calls.ok);
          set({ channel, brain, result: "error" }, calls.error);
        }
      }
    },
  );
  perChannel("webhook_channel_dead_letters_total", "Messages dead-lettered since start.", (bound) => bound.deadLetters);
  const brainDuration = histogram(
    "webhook_channel_brain_duration_seconds",
    "Time to answer a message with the brain (memory, call, rendering).",
    ["channel", "brain"],
    BUCKETS,
  );
  const deliveryDuration = histogram(
    "webhook_channel_delivery_duration_seconds",
    "Time of one successful reply POST.",
    ["channel"],
    BUCKETS,
  );
  const endToEnd = histogram(
    "webhook_channel_end_to_end_seconds",
    "From a message's acceptance to its last reply delivered.",
    ["channel"],
    END_TO_END_BUCKETS,
  );

  // Most services run one busy channel: the last one looked up answers without hashing its name.
  let lastChannel: string | undefined;
  let lastSeries: ChannelSeries | undefined;
  const seriesOf = (channel: string): ChannelSeries => {
    if (channel === lastChannel && lastSeries !== undefined) return lastSeries;
    let found = series.get(channel);
    if (found === undefined) {
      found = {
        requests: new Map(),
        accepted: 0,
        delivered: 0,
        retries: 0,
        deadLetters: 0,
        deliveryDuration: deliveryDuration.child(channel),
        endToEnd: endToEnd.child(channel),
        brains: new Map(),
        receiverUp: 1,
        receiverChanges: { up: 0, down: 0 },
        tokens: new Map(),
      };
      series.set(channel, found);
    }
    lastChannel = channel;
    lastSeries = found;
    return found;
  };
  // Every configured channel shows its counters at 0 from the start, so rate() and alerts see the first event.
  for (const channel of options.channels) seriesOf(channel);

  registerQueueGauges(registry, options);
  new Gauge({
    name: "webhook_channel_receiver_up",
    help: "1 while the channel's receiver (outbound_url) is up, 0 while its circuit holds replies.",
    labelNames: ["channel"],
    registers,
    collect() {
      for (const [channel, bound] of series) this.set({ channel }, bound.receiverUp);
    },
  });
  counter(
    "webhook_channel_receiver_state_changes_total",
    "Times the channel's receiver went down or came back up.",
    ["channel", "state"],
    (set) => {
      for (const [channel, bound] of series) {
        set({ channel, state: "down" }, bound.receiverChanges.down);
        set({ channel, state: "up" }, bound.receiverChanges.up);
      }
    },
  );
  counter(
    "webhook_channel_brain_tokens_total",
    "Tokens the brain reported (usage), by kind (prompt or completion).",
    ["channel", "brain", "kind"],
    (set) => {
      for (const [channel, bound] of series) {
        for (const [brain, tokens] of bound.tokens) {
          set({ channel, brain, kind: "prompt" }, tokens.prompt);
          set({ channel, brain, kind: "completion" }, tokens.completion);
        }
      }
    },
  );
  // Brains are shared by channels: their gauges are labelled by brain only.
  const brainsInFlight = new Map<string, number>();
  const brainsPaused = new Map<string, number>();
  new Gauge({
    name: "webhook_channel_brain_in_flight",
    help: "Calls to the brain in flight now, across all conversations (at most its max_concurrency).",
    labelNames: ["brain"],
    registers,
    collect() {
      for (const [brain, calls] of brainsInFlight) this.set({ brain }, calls);
    },
  });
  new Gauge({
    name: "webhook_channel_brain_paused",
    help: "1 while the brain is paused for everyone after a 429 or 503, else 0.",
    labelNames: ["brain"],
    registers,
    collect() {
      for (const [brain, paused] of brainsPaused) this.set({ brain }, paused);
    },
  });
  registerDeadLettersGauge(registry, options, (channel) => series.get(channel)?.deadLetters ?? 0);
  // Keyed "type outcome": a few series at most, created as events happen (they are rare).
  const operatorEvents = new Map<string, number>();
  counter(
    "webhook_channel_operator_events_total",
    "Operator events by type and outcome.",
    ["type", "outcome"],
    (set) => {
      for (const [key, count] of operatorEvents) {
        const [type = "", outcome = ""] = key.split(" ");
        set({ type, outcome }, count);
      }
    },
  );

  return {
    registry,
    async respond() {
      const body = await registry.metrics();
      return new Response(body, { headers: { "content-type": registry.contentType } });
    },
    request(channel, code) {
      const { requests } = seriesOf(channel);
      requests.set(code, (requests.get(code) ?? 0) + 1);
    },
    accepted(channel) {
      seriesOf(channel).accepted += 1;
    },
    delivered(channel, seconds) {
      const bound = seriesOf(channel);
      bound.delivered += 1;
      bound.deliveryDuration.observe(seconds);
    },
    retry(channel) {
      seriesOf(channel).retries += 1;
    },
    brainCall(channel, brain, ok, seconds) {
      const { brains } = seriesOf(channel);
      let bound = brains.get(brain);
      if (bound === undefined) {
        bound = { ok: 0, error: 0, duration: brainDuration.child(channel, brain) };
        brains.set(brain, bound);
      }
      if (ok) bound.ok += 1;
      else bound.error += 1;
      bound.duration.observe(seconds);
    },
    deadLetter(channel) {
      seriesOf(channel).deadLetters += 1;
    },
    endToEnd(channel, seconds) {
      seriesOf(channel).endToEnd.observe(seconds);
    },
    receiverState(channel, up) {
      const bound = seriesOf(channel);
      bound.receiverUp = up ? 1 : 0;
      if (up) bound.receiverChanges.up += 1;
      else bound.receiverChanges.down += 1;
    },
    brainInFlight(brain, calls) {
      brainsInFlight.set(brain, calls);
    },
    // The gauge says only whether: when a pause ends is the console's to show (GET /admin/status),
    // and a timestamp as a value would be one more series for nothing an alert needs.
    brainPaused(brain, paused) {
      brainsPaused.set(brain, paused ? 1 : 0);
      if (!brainsInFlight.has(brain)) brainsInFlight.set(brain, 0);
    },
    brainTokens(channel, brain, prompt, completion) {
      const { tokens } = seriesOf(channel);
      let bound = tokens.get(brain);
      if (bound === undefined) {
        bound = { prompt: 0, completion: 0 };
        tokens.set(brain, bound);
      }
      bound.prompt += prompt;
      bound.completion += completion;
    },
    operatorEvent(type, outcome) {
      const key = `${type} ${outcome}`;
      operatorEvents.set(key, (operatorEvents.get(key) ?? 0) + 1);
    },
  };
}
