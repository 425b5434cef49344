import { ChannelError } from "../channel-error.js";
import type { Config } from "../config/config-schema.js";
import type { Brain } from "./brain.js";
import type { BrainDeps } from "./brain-deps.js";
import { createEchoBrain } from "./echo-brain.js";
import { createHttpBrain } from "./http-brain.js";
import { createOpenAiBrain } from "./openai-brain.js";
import { createRasaBrain } from "./rasa-brain.js";
import { createWorkersAiBrain } from "./workers-ai-brain.js";

/**
 * Builds every brain that a route names, keyed by name (the built-in `echo`
 * included). Secrets are read from `deps.env` here, once. Throws a `config_invalid`
 * ChannelError, naming the brain, when a secret variable is unset or empty, or when a
 * `workers-ai` brain is defined but the runtime has no AI binding (Node).
 */
export function createBrains(config: Config, deps: BrainDeps): ReadonlyMap<string, Brain> {
  const brains = new Map<string, Brain>([["echo", createEchoBrain()]]);
  // Only brains a route names are built: an unused definition (say a workers-ai brain in a
  // file shared with a Worker) must not stop the service.
  const routed = new Set(config.routes.map((route) => route.brain));
  for (const [name, definition] of Object.entries(config.brains ?? {})) {
    if (!routed.has(name)) continue;
    switch (definition.type) {
      case "echo":
        brains.set(name, createEchoBrain(name));
        break;
      case "openai":
        brains.set(name, createOpenAiBrain(name, definition, deps));
        break;
      case "http":
        brains.set(name, createHttpBrain(name, definition, deps));
        break;
      case "rasa":
        brains.set(name, createRasaBrain(name, definition, deps));
        break;
      case "workers-ai":
        if (deps.ai === undefined) {
          throw new ChannelError(
            "config_invalid",
            `brain "${name}" is of type "workers-ai", which needs the Workers runtime and its AI binding; this runtime has none (on Node, use an "openai" brain instead)`,
            { retryable: false, brain: name },
          );
        }
        brains.set(name, createWorkersAiBrain(name, definition, deps.ai));
        break;
      default:
        assertNever(definition);
    }
  }
  return brains;
}

function assertNever(value: never): never {
  throw new Error(`unknown brain definition ${JSON.stringify(value)}`);
}
