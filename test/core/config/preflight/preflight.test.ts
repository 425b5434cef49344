import { describe, expect, it } from "vitest";
import { envValueProblem, preflight } from "../../../../src/core/config/preflight/preflight.js";
import { validateConfig } from "../../../../src/core/config/validate-config.js";

const config = (() => {
  const result = validateConfig({
    channels: [
      {
        type: "webhook",
        token_env: "WEBHOOK_SECRET",
        webhook: { outbound_url: "http://127.0.0.1:9000/replies", outbound_token_env: "OUT_TOKEN" },
      },
    ],
    routes: [{ channel: "webhook", brain: "echo" }],
  });
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.config;
})();

describe("preflight", () => {
  it("passes when every variable holds a usable value", () => {
    expect(preflight(config, (name) => ({ WEBHOOK_SECRET: "s3cret", OUT_TOKEN: "t0ken" })[name])).toEqual([]);
  });

  it("lets a database URL hold a letter beyond ASCII (it never travels in a header), not a trailing newline", () => {
    const result = validateConfig({
      channels: [
        { type: "webhook", token_env: "WEBHOOK_SECRET", webhook: { outbound_url: "http://127.0.0.1:9000/r" } },
      ],
      routes: [{ channel: "webhook", brain: "echo" }],
      postgres_url_env: "DATABASE_URL",
    });
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    const env = (url: string) => (name: string) => ({ WEBHOOK_SECRET: "s3cret", DATABASE_URL: url })[name];
    expect(preflight(result.config, env("postgres://w:p\u00e4ss@db/webhook"))).toEqual([]);
    expect(preflight(result.config, env("postgres://w:pass@db/webhook\n"))).toMatchObject([
      { path: "postgres_url_env", message: expect.stringContaining("starts or ends with whitespace") },
    ]);
    expect(preflight(result.config, env("postgres://w:pass@db/web\thook"))).toMatchObject([
      { path: "postgres_url_env", fix: "remove the control characters from the URL in DATABASE_URL" },
    ]);
  });

  it("names a missing and an empty variable with the JSON path and the fix", () => {
    const problems = preflight(config, (name) => ({ OUT_TOKEN: "" })[name]);
    expect(problems).toMatchObject([
      { path: "channels[0].token_env", message: "environment variable WEBHOOK_SECRET is not set" },
      { path: "channels[0].webhook.outbound_token_env", message: "environment variable OUT_TOKEN is empty" },
    ]);
    expect(problems[0]?.fix).toContain("npx webhook-channel secret");
  });

  it("tells to export the provider's API key for a brain's api_key_env, not to make a channel secret", () => {
    const result = validateConfig({
      channels: [
        {
          type: "webhook",
          token_env: "WEBHOOK_SECRET",
          webhook: { outbound_url: "http://127.0.0.1:9000/replies", signing_secret_env: "SIGNING" },
        },
      ],
      brains: {
        gpt: {
          type: "openai",
          base_url: "https://api.openai.com/v1",
          model: "gpt-4o-mini",
          api_key_env: "OPENAI_API_KEY",
        },
        bot: { type: "http", url: "http://127.0.0.1:5000/bot", token_env: "BOT_TOKEN" },
      },
      routes: [{ channel: "webhook", brain: "gpt" }],
    });
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    const problems = preflight(result.config, (name) => ({ WEBHOOK_SECRET: "s3cret" })[name]);
    const fixOf = (variable: string) => problems.find((problem) => problem.message.includes(variable))?.fix;
    expect(fixOf("OPENAI_API_KEY")).toContain("API key from your model provider");
    expect(fixOf("BOT_TOKEN")).toContain("token your bot expects");
    expect(fixOf("SIGNING")).toContain("whsec_");
    for (const problem of problems) expect(problem.fix).not.toContain("webhook-channel secret");
  });

  it("flags a value with a trailing newline without printing the value", () => {
    const problems = preflight(config, (name) => ({ WEBHOOK_SECRET: "s3cret\n", OUT_TOKEN: "t0ken" })[name]);
    expect(problems).toHaveLength(1);
    expect(problems[0]?.message).toBe(
      "environment variable WEBHOOK_SECRET starts or ends with whitespace (a trailing newline?)",
    );
    expect(JSON.stringify(problems)).not.toContain("s3cret");
  });
});

describe("envValueProblem", () => {
  it("accepts header-safe values, inner spaces included", () => {
    for (const value of ["a", "whsec_abc+/=", "two words", "Bearer-ish.token~1"]) {
      expect(envValueProblem(value)).toBeUndefined();
    }
  });

  it("refuses surrounding whitespace, control characters and characters beyond ASCII", () => {
    expect(envValueProblem(" lead")).toMatch(/whitespace/);
    expect(envValueProblem("trail\r\n")).toMatch(/whitespace/);
    expect(envValueProblem("in\u0000side")).toMatch(/control characters/);
    expect(envValueProblem("emoji🙂")).toMatch(/beyond ASCII/);
    // Latin-1 travels in a header, but Node and workerd read it differently.
    expect(envValueProblem("s\u00e9cret")).toMatch(/beyond ASCII/);
  });

  it("gives the fix each problem needs: the same value again without whitespace, or a new ASCII one", () => {
    const result = validateConfig({
      channels: [{ type: "webhook", token_env: "WEBHOOK_SECRET", webhook: { outbound_url: "http://127.0.0.1:9/r" } }],
      routes: [{ channel: "webhook", brain: "echo" }],
    });
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    const fixFor = (value: string) => preflight(result.config, (name) => ({ WEBHOOK_SECRET: value })[name])[0]?.fix;
    expect(fixFor("s3cret-value\n")).toMatch(/without surrounding whitespace/);
    expect(fixFor("s3cret-v\u00e4lue")).toMatch(/printable ASCII only.*`webhook-channel secret`/);
  });
});
