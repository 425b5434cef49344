import type { Config } from "../config/config-schema.js";
import type { Brain } from "./brain.js";
import { createEchoBrain } from "./echo-brain.js";

/** Builds every brain the configuration can route to, keyed by name (built-ins included). */
export function createBrains(config: Config): ReadonlyMap<string, Brain> {
  const brains = new Map<string, Brain>([["echo", createEchoBrain()]]);
  for (const [name, definition] of Object.entries(config.brains ?? {})) {
    switch (definition.type) {
      case "echo":
        brains.set(name, createEchoBrain(name));
        break;
    }
  }
  return brains;
}
