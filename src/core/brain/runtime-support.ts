import { type ConfigProblem, formatJsonPath } from "../config/config-problem.js";
import type { Config } from "../config/config-schema.js";

/**
 * The brains that cannot run on Node: every `workers-ai` brain, which needs the Workers
 * runtime's AI binding. `config check` reports them (a warning, since the same file may be
 * meant for Workers); the Node service refuses to start with them, as `createBrains`
 * throws. `routed` says whether a route uses the brain.
 */
export function nodeUnsupportedBrains(
  config: Config,
): (ConfigProblem & { readonly brain: string; readonly routed: boolean })[] {
  const routed = new Set(config.routes.map((route) => route.brain));
  return Object.entries(config.brains ?? {})
    .filter(([, definition]) => definition.type === "workers-ai")
    .map(([name]) => ({
      brain: name,
      routed: routed.has(name),
      path: formatJsonPath(["brains", name, "type"]),
      message: `brain "${name}" is of type "workers-ai", which needs the Workers runtime (an AI binding); it cannot run on Node`,
      fix: 'deploy on Cloudflare Workers with an [ai] binding named AI in wrangler.toml, or use an "openai" brain (e.g. a local Ollama) on Node',
    }));
}
