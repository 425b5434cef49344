import { runtimeFor } from "./runtime-for.js";
import { DEFAULT_DEAD_LETTER_QUEUE, type WorkerEnv } from "./worker-env.js";

/**
 * The Durable Object classes; wrangler.toml binds them as AUTH_FAILURES, CONVERSATIONS,
 * DEAD_LETTER_STORE, IDEMPOTENCY, RECEIVERS and TIMELINE_SHARDS.
 */
export { AuthFailureObject } from "./auth-failures/auth-failure-object.js";
export { ConversationObject } from "./conversation/conversation-object.js";
export { DeadLetterObject } from "./dead-letters/dead-letter-object.js";
export { IdempotencyObject } from "./idempotency/idempotency-object.js";
export { ReceiverObject } from "./receiver/receiver-object.js";
export { TimelineShardObject } from "./timeline/timeline-shard-object.js";

/**
 * The Worker: `fetch` serves the core app (the same routes, checks and error bodies as on
 * Node); `queue` consumes the inbound queue by handing each message to its conversation's
 * Durable Object, which answers it with the core consumer, and the dead-letter queue with a
 * consumer that logs what was lost. Queue bodies are checked, not trusted,
 * hence `unknown`. What `fetch` recorded in the message timeline is written after the answer,
 * under `waitUntil` (without a context, as a test may call it, before the answer).
 */
export default {
  async fetch(request: Request, env: WorkerEnv, ctx?: ExecutionContext): Promise<Response> {
    const runtime = await runtimeFor(env);
    return await runtime.fetch(request, ctx === undefined ? undefined : (work) => ctx.waitUntil(work));
  },
  async queue(batch: MessageBatch<unknown>, env: WorkerEnv): Promise<void> {
    const runtime = await runtimeFor(env);
    if (batch.queue === (env.DEAD_LETTER_QUEUE ?? DEFAULT_DEAD_LETTER_QUEUE)) await runtime.deadLetters(batch);
    else await runtime.inbound(batch);
  },
} satisfies ExportedHandler<WorkerEnv, unknown>;
