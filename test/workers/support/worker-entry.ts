/**
 * The Worker as the `workers` vitest project runs it (its `main`, see vitest.config.ts): the
 * Worker of src/workers/index.ts, unchanged, with Durable Objects that work with the test's
 * environment once a test gave them one (`replaceObjectEnvironment`). So production code
 * carries no test hook: the objects only read their environment through `environment()`.
 */
import {
  ConversationObject as WorkerConversationObject,
  DeadLetterObject as WorkerDeadLetterObject,
  ReceiverObject as WorkerReceiverObject,
  TimelineShardObject as WorkerTimelineShardObject,
} from "../../../src/workers/index.js";
import type { WorkerEnv } from "../../../src/workers/worker-env.js";
import { type ObjectWaits, objectEnvironment, objectWaits } from "./object-environment.js";

export { AuthFailureObject, default, IdempotencyObject } from "../../../src/workers/index.js";

/** The conversation object, answering from the test's environment when one is set. */
export class ConversationObject extends WorkerConversationObject {
  protected override environment(): WorkerEnv {
    return objectEnvironment(this.env);
  }

  protected override waits(): ObjectWaits {
    return objectWaits(super.waits());
  }
}

/** The receiver circuit, with the test's configuration (its delivery policy) when one is set. */
export class ReceiverObject extends WorkerReceiverObject {
  protected override environment(): WorkerEnv {
    return objectEnvironment(this.env);
  }
}

/** The dead-letter store, keeping and replaying with the test's environment when one is set. */
export class DeadLetterObject extends WorkerDeadLetterObject {
  protected override environment(): WorkerEnv {
    return objectEnvironment(this.env);
  }
}

/** A timeline shard, pruning by the test's configuration when one is set. */
export class TimelineShardObject extends WorkerTimelineShardObject {
  protected override environment(): WorkerEnv {
    return objectEnvironment(this.env);
  }
}
