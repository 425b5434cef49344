import { describe, expect, it } from "vitest";
import { formatProblem } from "../../../src/core/config/config-problem.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { configDocument } from "../../support/configs.js";
import { problemsOf } from "./validate-config-problems.js";

// validateConfig on the document as a whole: the defaults it fills in, the keys it refuses
// (unknown ones, `mode`, secrets), and how a problem says what was expected and what was found.
// The webhook's own fields are in validate-config-webhook.test.ts, routes and channels in
// validate-config-routes.test.ts.

describe("validateConfig", () => {
  it("fills in every default of a minimal channel", () => {
    const result = validateConfig(configDocument());
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const [channel] = result.config.channels;
    expect(channel?.webhook).toMatchObject({ bind: "127.0.0.1:8090", path: "/webhook", buffer_capacity: 1000 });
    expect(channel?.webhook.delivery.timeout_ms).toBe(10_000);
    expect(result.config.shutdown_timeout_ms).toBe(30_000);
    expect(result.config.log_level).toBe("info");
    expect(result.warnings).toEqual([]);
  });

  it("accepts the repository's config.json", async () => {
    const { readFile } = await import("node:fs/promises");
    const document: unknown = JSON.parse(await readFile("config.json", "utf8"));
    expect(validateConfig(document).ok).toBe(true);
  });

  it("rejects an unknown key with its JSON path", () => {
    const problems = problemsOf(configDocument({ bnd: "127.0.0.1:1" }));
    expect(problems).toEqual([
      expect.objectContaining({ path: "channels[0].webhook.bnd", message: 'unknown key "bnd"' }),
    ]);
  });

  it("rejects unknown keys at the top level and in routes", () => {
    const document = { ...configDocument(), extra: 1, routes: [{ channel: "webhook", brain: "echo", x: 1 }] };
    expect(
      problemsOf(document)
        .map((problem) => problem.path)
        .sort(),
    ).toEqual(["extra", "routes[0].x"]);
  });

  it("rejects a mode key with the contract's sentence", () => {
    const document = configDocument();
    const channel = document.channels[0] as Record<string, unknown>;
    channel.mode = "polling";
    expect(problemsOf(document)).toEqual([
      expect.objectContaining({ path: "channels[0].mode", message: "The webhook channel takes no `mode` field" }),
    ]);
  });

  it("rejects a mode key inside webhook too", () => {
    const problems = problemsOf(configDocument({ mode: "push" }));
    expect(problems).toEqual([
      expect.objectContaining({
        path: "channels[0].webhook.mode",
        message: "The webhook channel takes no `mode` field",
      }),
    ]);
  });

  it.each(["token", "secret", "password", "api_key", "apikey", "Token"])(
    "rejects a key named %s at any depth, saying secrets belong in the environment",
    (key) => {
      const problems = problemsOf(configDocument({ mapping: { [key]: "x" } }));
      expect(problems).toEqual([
        expect.objectContaining({
          path: `channels[0].webhook.mapping.${key}`,
          message: expect.stringContaining("secrets belong in the environment"),
        }),
      ]);
    },
  );

  it("rejects a token_env that is not a variable name", () => {
    const document = configDocument();
    (document.channels[0] as Record<string, unknown>).token_env = "1BAD-NAME";
    expect(problemsOf(document)[0]?.path).toBe("channels[0].token_env");
  });

  it("rejects an admin.token_env that is not a variable name, as every other *_env key", () => {
    const problems = problemsOf(configDocument({}, { admin: { token_env: "bad name" } }));
    expect(problems).toEqual([
      expect.objectContaining({
        path: "admin.token_env",
        message: expect.stringContaining("must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*)"),
      }),
    ]);
  });

  it("rejects a channel type other than webhook", () => {
    const document = configDocument();
    (document.channels[0] as Record<string, unknown>).type = "telegram";
    expect(problemsOf(document)[0]).toMatchObject({
      path: "channels[0].type",
      message: expect.stringContaining("webhook"),
    });
  });

  it("rejects a document that is not an object", () => {
    expect(problemsOf([])[0]?.path).toBe("");
    expect(problemsOf({ channels: [], routes: [] })[0]).toMatchObject({ path: "channels" });
  });

  it("says what was expected and what was found for a value of the wrong type, not that it is required", () => {
    const [problem] = problemsOf(configDocument({ bind: 8090 }));
    expect(problem).toMatchObject({
      path: "channels[0].webhook.bind",
      message: "expected a string, found the number 8090",
    });
    expect(formatProblem(problem ?? { path: "", message: "", fix: "" })).toBe(
      'channels[0].webhook.bind: expected a string, found the number 8090. Fix: it must be a "host:port" string, e.g. "127.0.0.1:8090"',
    );
  });

  it.each([
    [[], "an array"],
    [null, "null"],
    ["config", 'the string "config"'],
    [42, "the number 42"],
  ])("says a top-level %j is not the JSON object expected", (document, found) => {
    const problems = problemsOf(document);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({
      path: "",
      message: `expected a JSON object at the top level, found ${found}`,
      fix: expect.stringContaining('"channels"'),
    });
    expect(formatProblem(problems[0] ?? { path: "", message: "", fix: "" })).not.toContain('add ""');
  });

  it.each([
    [{ buffer_capacity: "10" }, "channels[0].webhook.buffer_capacity", 'expected a number, found the string "10"'],
    [{ buffer_capacity: 1.5 }, "channels[0].webhook.buffer_capacity", "expected a whole number, found the number 1.5"],
    [{ delivery: [] }, "channels[0].webhook.delivery", "expected a JSON object, found an array"],
    [{ path: null }, "channels[0].webhook.path", "expected a string, found null"],
  ])("reports the wrong type in %j with what was expected and found", (webhook, path, message) => {
    expect(problemsOf(configDocument(webhook))).toEqual([expect.objectContaining({ path, message })]);
  });

  it("reports wrong top-level types and unknown enum values with what was found", () => {
    const problems = problemsOf({ ...configDocument(), routes: "echo", delivery_thread: "yes", log_level: "verbose" });
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: "routes", message: 'expected an array, found the string "echo"' }),
        expect.objectContaining({ path: "delivery_thread", message: 'expected true or false, found the string "yes"' }),
        expect.objectContaining({ path: "log_level", message: expect.stringContaining('found the string "verbose"') }),
      ]),
    );
  });

  it("still says a missing key is required, with the rule it must follow", () => {
    expect(problemsOf({ routes: [] })).toEqual([
      expect.objectContaining({ path: "channels", message: "is required", fix: 'add "channels" (an array)' }),
    ]);
  });

  it("formats a problem with its path and fix", () => {
    expect(formatProblem({ path: "a.b", message: "is wrong", fix: "make it right" })).toBe(
      "a.b: is wrong. Fix: make it right",
    );
  });
});
