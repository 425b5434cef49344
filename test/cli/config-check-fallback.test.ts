import { describe, expect, it } from "vitest";
import { runService } from "../../src/node/run-service.js";
import { configDocument } from "../support/configs.js";
import { runCliCaptured } from "../support/run-cli-captured.js";
import { writeTempConfig } from "../support/spawn-node.js";

const ollama = { type: "openai", base_url: "http://127.0.0.1:11434/v1", model: "llama3.2" };

/** A file whose routed brain "local" falls back on "hosted", which falls back on `hostedFallback`. */
function chainDocument(hostedFallback: string[]) {
  return configDocument(
    {},
    {
      routes: [{ channel: "webhook", brain: "local" }],
      brains: {
        local: { ...ollama, fallback: ["hosted"] },
        hosted: { ...ollama, base_url: "https://api.openai.com/v1", fallback: hostedFallback },
      },
    },
  );
}

describe("config check and serve: fallback brains", () => {
  it("config check accepts a chain and refuses a cycle and an unknown name, each with its path and fix", async () => {
    expect((await runCliCaptured(["config", "check", await writeTempConfig(chainDocument(["echo"]))])).code).toBe(0);

    const file = await writeTempConfig(chainDocument(["local", "gpt"]));
    const { code, err } = await runCliCaptured(["config", "check", file]);
    expect(code).toBe(1);
    expect(err).toContain('brains.hosted.fallback[0]: the fallbacks form a cycle: "local" → "hosted" → "local". Fix:');
    expect(err).toContain('brains.hosted.fallback[1]: no brain is named "gpt". Fix: use one of');
  });

  it("serve refuses to start with a cycle and names its path", async () => {
    const file = await writeTempConfig(chainDocument(["local"]));
    const lines: string[] = [];
    const code = await runService({
      configPath: file,
      env: { WEBHOOK_SECRET: "s".repeat(32) },
      write: (line) => lines.push(line),
    });
    expect(code).toBe(1);
    expect(lines.join("\n")).toContain("brains.hosted.fallback[0]");
  });
});
