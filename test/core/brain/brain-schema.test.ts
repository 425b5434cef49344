import { describe, expect, it } from "vitest";
import { brainSchema } from "../../../src/core/config/brain-schema.js";
import { configJsonSchema } from "../../../src/core/config/config-json-schema.js";
import { preflight } from "../../../src/core/config/preflight/preflight.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";

function document(brains: Record<string, unknown>) {
  return {
    channels: [{ type: "webhook", token_env: "WEBHOOK_SECRET", webhook: { outbound_url: "http://127.0.0.1:8091/r" } }],
    routes: [{ channel: "webhook", brain: Object.keys(brains)[0] ?? "echo" }],
    brains,
  };
}

function problems(brains: Record<string, unknown>): { path: string; message: string }[] {
  const result = validateConfig(document(brains));
  return result.ok ? [] : result.problems.map(({ path, message }) => ({ path, message }));
}

describe("brain definitions", () => {
  it("applies the documented defaults", () => {
    const result = validateConfig(
      document({
        gpt: { type: "openai", base_url: "http://127.0.0.1:11434/v1", model: "llama3.2" },
        mybot: { type: "http", url: "http://127.0.0.1:5000/bot" },
        rasa: { type: "rasa", url: "http://127.0.0.1:5005" },
        cf: { type: "workers-ai", model: "@cf/meta/llama-3.1-8b-instruct" },
      }),
    );
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    expect(result.config.brains).toEqual({
      gpt: {
        type: "openai",
        base_url: "http://127.0.0.1:11434/v1",
        model: "llama3.2",
        send_images: true,
        timeout_ms: 60_000,
        max_history: 20,
        max_concurrency: 16,
      },
      mybot: {
        type: "http",
        url: "http://127.0.0.1:5000/bot",
        timeout_ms: 30_000,
        max_history: 20,
        max_concurrency: 16,
      },
      rasa: { type: "rasa", url: "http://127.0.0.1:5005", timeout_ms: 30_000, max_concurrency: 16 },
      cf: { type: "workers-ai", model: "@cf/meta/llama-3.1-8b-instruct", max_history: 20, max_concurrency: 16 },
    });
  });

  it("explains what is wrong, with the JSON path", () => {
    expect(problems({ x: { type: "gpt" } })).toEqual([
      {
        path: "brains.x.type",
        message: 'must have a "type" naming a known brain type: "echo", "openai", "http", "rasa", "workers-ai"',
      },
    ]);
    expect(problems({ x: { type: "openai", base_url: "http://h/v1", model: "m", temprature: 1 } })).toEqual([
      { path: "brains.x.temprature", message: 'unknown key "temprature"' },
    ]);
    expect(
      problems({ x: { type: "openai", base_url: "http://h/v1/chat/completions", model: "m" } })[0]?.message,
    ).toContain('must be the API root without "/chat/completions"');
    expect(problems({ x: { type: "openai", base_url: "localhost:11434", model: "m" } })[0]?.message).toContain(
      "must be an absolute http: or https: URL",
    );
    expect(problems({ x: { type: "http", url: "https://me:pw@bot.example/" } })[0]?.message).toContain(
      "must not contain a user name or password",
    );
    expect(problems({ x: { type: "openai", base_url: "http://h/v1", model: "m", temperature: 3 } })).toEqual([
      { path: "brains.x.temperature", message: "must be a number from 0 to 2" },
    ]);
    expect(problems({ x: { type: "openai", base_url: "http://h/v1", model: "" } })[0]?.path).toBe("brains.x.model");
    expect(problems({ x: { type: "http", url: "http://h/", max_history: 101 } })).toEqual([
      { path: "brains.x.max_history", message: "must be at most 100" },
    ]);
    expect(problems({ x: { type: "rasa", url: "http://h:5005", max_history: 5 } })).toEqual([
      { path: "brains.x.max_history", message: 'unknown key "max_history"' },
    ]);
    expect(
      problems({ x: { type: "openai", base_url: "http://h/v1", model: "m", api_key_env: "my-key" } })[0]?.message,
    ).toContain("must be an environment variable name");
  });

  it("refuses a key in the file and sends preflight after every *_env a brain names", () => {
    expect(
      problems({ x: { type: "openai", base_url: "http://h/v1", model: "m", api_key: "sk-1" } })[0]?.message,
    ).toContain("secrets belong in the environment");
    const result = validateConfig(
      document({
        gpt: {
          type: "openai",
          base_url: "https://api.openai.com/v1",
          model: "gpt-4o-mini",
          api_key_env: "OPENAI_API_KEY",
        },
        mybot: { type: "http", url: "http://127.0.0.1:5000/bot", token_env: "BOT_TOKEN" },
      }),
    );
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    const env: Record<string, string> = { WEBHOOK_SECRET: "s", BOT_TOKEN: "" };
    expect(preflight(result.config, (name) => env[name]).map((problem) => problem.path)).toEqual([
      "brains.gpt.api_key_env",
      "brains.mybot.token_env",
    ]);
  });

  it("describes every field in the JSON Schema", () => {
    const schema = JSON.stringify(configJsonSchema());
    for (const text of ["OpenAI-compatible", "Rasa", "Workers AI", "Default 20", "Default 60000"]) {
      expect(schema).toContain(text);
    }
    const json = JSON.parse(JSON.stringify(brainSchema.toJSONSchema({ io: "input", unrepresentable: "any" }))) as {
      oneOf?: { properties: Record<string, { description?: string }> }[];
      anyOf?: { properties: Record<string, { description?: string }> }[];
    };
    const variants = json.oneOf ?? json.anyOf ?? [];
    expect(variants).toHaveLength(5);
    for (const variant of variants) {
      for (const [key, property] of Object.entries(variant.properties)) {
        expect(property.description, key).toBeTruthy();
      }
    }
  });
});
