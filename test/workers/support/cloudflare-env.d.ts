import type * as main from "../../../src/workers/index.js";
import type { WorkerEnv } from "../../../src/workers/worker-env.js";

declare global {
  namespace Cloudflare {
    /** `env` of `cloudflare:workers` in tests: the Worker's environment. */
    interface Env extends WorkerEnv {}
    /** The main module, so `exports.default` of `cloudflare:workers` is typed. */
    interface GlobalProps {
      mainModule: typeof main;
      durableNamespaces: "ConversationObject" | "IdempotencyObject";
    }
  }
}
