/**
 * The limited brains the brain-limits*.test.ts files ask: their configuration, asking them as the
 * consumer would (one conversation, or a storm of them at once), and what they report.
 */
import type { Brain, BrainCall } from "../../../../src/core/brain/brain.js";
import type { BrainDeps } from "../../../../src/core/brain/brain-deps.js";
import { ChannelError } from "../../../../src/core/channel-error.js";
import type { Config } from "../../../../src/core/config/config-schema.js";
import { validateConfig } from "../../../../src/core/config/validate-config.js";
import type { BrainReply } from "../../../../src/core/message/outbound-reply.js";
import type { Metrics } from "../../../../src/core/metrics/metrics.js";
import { noopMetrics } from "../../../../src/core/metrics/noop-metrics.js";

/** A configuration with these brains, `routed` taking the channel's messages. */
export function configWith(brains: Record<string, unknown>, routed = "local"): Config {
  const result = validateConfig({
    channels: [{ type: "webhook", token_env: "T", webhook: { outbound_url: "http://127.0.0.1:1/r" } }],
    routes: [{ channel: "webhook", brain: routed }],
    brains,
  });
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.config;
}

/** An openai brain on the model server at `baseUrl`, with `more` of its settings. */
export function openai(baseUrl: string, more: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: "openai", base_url: baseUrl, model: "test-model", ...more };
}

/** What createBrains needs, no secrets in the environment; `more` adds the clock, metrics, limiters. */
export function deps(more: Partial<BrainDeps> = {}): BrainDeps {
  return { fetch, env: () => undefined, ...more };
}

/** The brain built under `name`; a test that names one that is not there fails here. */
export function brainOf(brains: ReadonlyMap<string, Brain>, name: string): Brain {
  const brain = brains.get(name);
  if (brain === undefined) throw new Error(`no brain ${name}`);
  return brain;
}

/** Asks `brain` as the consumer would, for one conversation of the channel "webhook". */
export function ask(
  brain: Brain,
  conversationId: string,
  onCall?: (call: BrainCall) => void,
): Promise<readonly BrainReply[]> {
  return brain.reply({
    message: { senderId: conversationId, conversationId, text: `hi from ${conversationId}` },
    history: [],
    channel: "webhook",
    ...(onCall === undefined ? {} : { onCall }),
  });
}

/** Conversations c0 ... c(n-1) asking at once. */
export function storm(
  brain: Brain,
  conversations: number,
  prefix = "c",
): Promise<PromiseSettledResult<readonly BrainReply[]>[]> {
  return Promise.allSettled(Array.from({ length: conversations }, (_, index) => ask(brain, `${prefix}${index}`)));
}

/** The errors of the calls that failed; anything else than a ChannelError fails the test. */
export function errorsOf(results: readonly PromiseSettledResult<unknown>[]): ChannelError[] {
  return results.flatMap((result) => {
    if (result.status === "fulfilled") return [];
    if (result.reason instanceof ChannelError) return [result.reason];
    throw result.reason;
  });
}

/** A brain event as {@link recordingMetrics} keeps it; a pause with its end. */
export type BrainEvent = [string, string, number | boolean] | [string, string, boolean, number];

/** Metrics that keep the brain events, in order. */
export function recordingMetrics(): { metrics: Metrics; events: BrainEvent[] } {
  const events: BrainEvent[] = [];
  return {
    events,
    metrics: {
      ...noopMetrics,
      brainInFlight: (brain, calls) => events.push(["in_flight", brain, calls]),
      brainPaused: (brain, paused, untilMs) =>
        events.push(untilMs === undefined ? ["paused", brain, paused] : ["paused", brain, paused, untilMs]),
    },
  };
}

/** Whether the limiter refused the call because the brain is paused, rather than its server failing it. */
export const isPaused = (error: ChannelError): boolean =>
  error.upstreamStatus === undefined && /is paused/.test(error.message);
