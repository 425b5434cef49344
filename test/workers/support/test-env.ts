import { env } from "cloudflare:workers";
import type { WorkerEnv } from "../../../src/workers/worker-env.js";
import { createFakeQueue, type FakeQueue } from "./fake-queue.js";

/** A Worker environment for one test: its own configuration and fake queue producers. */
export interface TestEnv extends WorkerEnv {
  readonly INBOUND: FakeQueue;
  readonly DEAD_LETTERS: FakeQueue;
}

/**
 * The test's environment: the real Durable Object namespace of the pool, fake producers that
 * record what is sent, `config` as CONFIG_JSON, and `variables` (secrets) on top. A new
 * object each time, so the Worker builds a fresh runtime for it.
 */
export function testEnv(
  config: unknown,
  variables: Readonly<Record<string, unknown>> = {},
  queues: { inbound?: FakeQueue; deadLetters?: FakeQueue } = {},
): TestEnv {
  return {
    CONVERSATIONS: env.CONVERSATIONS,
    IDEMPOTENCY: env.IDEMPOTENCY,
    AUTH_FAILURES: env.AUTH_FAILURES,
    RECEIVERS: env.RECEIVERS,
    DEAD_LETTER_STORE: env.DEAD_LETTER_STORE,
    TIMELINE_SHARDS: env.TIMELINE_SHARDS,
    DEAD_LETTER_QUEUE: "webhook-channel-dead-letters",
    CONFIG_JSON: JSON.stringify(config),
    ...variables,
    INBOUND: queues.inbound ?? createFakeQueue(),
    DEAD_LETTERS: queues.deadLetters ?? createFakeQueue(),
  };
}
