import { describe, expect, it } from "vitest";
import { brainsInUse, createBrains } from "../../../src/core/brain/create-brains.js";
import { fallbackChain } from "../../../src/core/brain/fallback-brain.js";
import { nodeUnsupportedBrains } from "../../../src/core/brain/runtime-support.js";
import type { Config } from "../../../src/core/config/config-schema.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";

// Fallback chains as the configuration makes them, before any brain is called: the order the
// chain asks its brains in, which brains are built, and the history limit the chain takes.
// What a chain does when its brains fail is in fallback-brain.test.ts.

/** A configuration with the given brains, `local` routed. */
function configWith(brains: Record<string, unknown>): Config {
  const result = validateConfig({
    channels: [{ type: "webhook", token_env: "T", webhook: { outbound_url: "http://127.0.0.1:1/r" } }],
    routes: [{ channel: "webhook", brain: "local" }],
    brains,
  });
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.config;
}

describe("fallback chains", () => {
  const openai = (fallback: string[] = []) => ({
    type: "openai",
    base_url: "http://127.0.0.1:11434/v1",
    model: "m",
    ...(fallback.length === 0 ? {} : { fallback }),
  });

  it("asks each brain once, depth first, in a diamond", () => {
    const config = configWith({ local: openai(["a", "b"]), a: openai(["b", "echo"]), b: openai() });
    expect(fallbackChain("local", config.brains ?? {})).toEqual(["local", "a", "b", "echo"]);
  });

  it("builds fallback brains that no route names, and leaves unused ones unbuilt", () => {
    const config = configWith({
      local: openai(["hosted"]),
      hosted: { ...openai(), api_key_env: "HOSTED_KEY" },
      unused: { ...openai(), api_key_env: "UNSET_KEY" },
    });
    expect([...brainsInUse(config)].sort()).toEqual(["hosted", "local"]);
    const brains = createBrains(config, { fetch, env: (name) => (name === "HOSTED_KEY" ? "k" : undefined) });
    expect([...brains.keys()].sort()).toEqual(["echo", "hosted", "local"]);
    // The fallback's secret is read at start like a routed brain's.
    expect(() => createBrains(config, { fetch, env: () => undefined })).toThrow(/HOSTED_KEY/);
  });

  it("refuses a workers-ai fallback on Node, and config check warns about it", () => {
    const config = configWith({ local: openai(["cf"]), cf: { type: "workers-ai", model: "@cf/m" } });
    expect(() => createBrains(config, { fetch, env: () => undefined })).toThrow(/"cf" is of type "workers-ai"/);
    expect(nodeUnsupportedBrains(config)).toEqual([expect.objectContaining({ path: "brains.cf.type" })]);
  });

  it("gives the chain the largest history limit of its brains", () => {
    const config = configWith({
      local: { type: "rasa", url: "http://127.0.0.1:5005", fallback: ["hosted"] },
      hosted: { ...openai(), max_history: 6 },
    });
    const chain = createBrains(config, { fetch, env: () => undefined }).get("local");
    expect(chain?.name).toBe("local");
    expect(chain?.historyLimit).toBe(6);
  });
});
