import { type ConfigProblem, formatJsonPath } from "../config/config-problem.js";
import type { Config } from "../config/config-schema.js";
import { brainsInUse } from "./create-brains.js";

/**
 * The brains in use (routed, or a fallback of a routed one) that cannot run on Node:
 * `workers-ai` brains, which need the Workers runtime's AI binding. `config check` reports
 * them as warnings, since the same file may be meant for a Worker; `serve` on Node refuses
 * such a file (`createBrains` throws). A definition not in use is never built, so it stops
 * nothing.
 */
export function nodeUnsupportedBrains(config: Config): ConfigProblem[] {
  const inUse = brainsInUse(config);
  return Object.entries(config.brains ?? {})
    .filter(([name, definition]) => definition.type === "workers-ai" && inUse.has(name))
    .map(([name]) => ({
      path: formatJsonPath(["brains", name, "type"]),
      message: `brain "${name}" is of type "workers-ai", which needs the Workers runtime (an AI binding): this file is fine for a Worker, but \`npx webhook-channel serve\` on Node refuses it`,
      fix: 'deploy on Cloudflare Workers with an [ai] binding named AI in wrangler.toml, or route to an "openai" brain (e.g. a local Ollama) on Node',
    }));
}
