import { errorMessage } from "../../core/channel-error.js";
import { randomId, systemClock } from "../../core/clock.js";
import { type Consumer, createConsumer } from "../../core/consumer/create-consumer.js";
import type { ConversationStore } from "../../core/conversation/conversation-store.js";
import { type EnvironmentParts, partsFor } from "../environment-parts.js";
import type { WorkerEnv } from "../worker-env.js";

/** A conversation's own memory, as the core consumer reads it. */
export interface ObjectMemory {
  readonly store: ConversationStore;
}

/**
 * The consumer that runs a conversation's jobs inside its Durable Object, from the parts the
 * Worker answers with, and with the object's own memory (no RPC back to itself).
 */
export async function createObjectConsumer(parts: EnvironmentParts, memory: ObjectMemory): Promise<Consumer> {
  return await createConsumer({
    config: parts.config,
    brains: parts.brains,
    poster: parts.poster,
    store: memory.store,
    clock: systemClock,
    random: Math.random,
    newId: randomId,
    logger: parts.logger,
    env: parts.lookup,
    metrics: parts.metrics,
  });
}

/**
 * The consumer of one conversation object, built on first use and again only when the object
 * is handed another environment. Undefined while the configuration is unusable (the Worker
 * logs why) or the consumer cannot be built (logged here): jobs then wait.
 */
export class ObjectConsumer {
  private built: { readonly env: WorkerEnv; readonly consumer: Promise<Consumer | undefined> } | undefined;

  /** `memory` is called when a consumer is built, not before. */
  constructor(private readonly memory: () => ObjectMemory) {}

  /** The consumer for `env`. */
  for(env: WorkerEnv): Promise<Consumer | undefined> {
    if (this.built?.env !== env) {
      const consumer = partsFor(env).then((built) => {
        if (!built.ok) return undefined;
        return createObjectConsumer(built.parts, this.memory()).catch((error: unknown) => {
          built.parts.logger.error(`cannot answer messages: ${errorMessage(error)}`);
          return undefined;
        });
      });
      this.built = { env, consumer };
    }
    return this.built.consumer;
  }
}
