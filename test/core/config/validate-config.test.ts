import { describe, expect, it } from "vitest";
import { formatProblem } from "../../../src/core/config/config-problem.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { configDocument } from "../../support/configs.js";

function problemsOf(document: unknown): { path: string; message: string; fix: string }[] {
  const result = validateConfig(document);
  if (result.ok) throw new Error("expected the configuration to be rejected");
  return [...result.problems];
}

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

  it("requires outbound_url and says what to add", () => {
    const document = configDocument();
    const channel = document.channels[0] as { webhook: Record<string, unknown> };
    delete channel.webhook.outbound_url;
    expect(problemsOf(document)).toEqual([
      expect.objectContaining({ path: "channels[0].webhook.outbound_url", message: "is required" }),
    ]);
  });

  it.each(["ftp://example.com/x", "/relative", "not a url"])("rejects outbound_url %s", (url) => {
    expect(problemsOf(configDocument({ outbound_url: url }))[0]?.path).toBe("channels[0].webhook.outbound_url");
  });

  it.each(["127.0.0.1", "127.0.0.1:99999", "[::1:8090", "::1:8090", "host:port", ":8090"])(
    "rejects bind %s",
    (bind) => {
      expect(problemsOf(configDocument({ bind }))[0]?.path).toBe("channels[0].webhook.bind");
    },
  );

  it.each(["[::1]:8090", "localhost:0", "0.0.0.0:8090", "example.internal:80"])("accepts bind %s", (bind) => {
    expect(validateConfig(configDocument({ bind })).ok).toBe(true);
  });

  it.each(["webhook", "/healthz", "/a?b", "/a b", "/:param"])("rejects path %s", (path) => {
    expect(problemsOf(configDocument({ path }))[0]?.path).toBe("channels[0].webhook.path");
  });

  it.each([
    ["/admin", {}],
    ["/admin/", {}],
    ["/admin/hooks", {}],
    ["/admin/dead-letters", { admin: { token_env: "WEBHOOK_ADMIN_SECRET" } }],
  ])("refuses path %s, the admin API's, whether or not admin is on (%o)", (path, extra) => {
    expect(problemsOf(configDocument({ path }, extra)).map(formatProblem)).toEqual([
      'channels[0].webhook.path: "/admin" and every path under it are reserved for the admin API, even when admin is off. Fix: pick a path outside /admin, e.g. "/webhook"',
    ]);
  });

  it.each(["/administrator", "/hooks/admin", "/admins/x"])("accepts path %s, which only looks like /admin", (path) => {
    expect(validateConfig(configDocument({ path })).ok).toBe(true);
  });

  it.each([0, -1, 1.5, "10"])("rejects buffer_capacity %s", (capacity) => {
    expect(problemsOf(configDocument({ buffer_capacity: capacity }))[0]?.path).toBe(
      "channels[0].webhook.buffer_capacity",
    );
  });

  it("rejects a token_env that is not a variable name", () => {
    const document = configDocument();
    (document.channels[0] as Record<string, unknown>).token_env = "1BAD-NAME";
    expect(problemsOf(document)[0]?.path).toBe("channels[0].token_env");
  });

  it("rejects a channel type other than webhook", () => {
    const document = configDocument();
    (document.channels[0] as Record<string, unknown>).type = "telegram";
    expect(problemsOf(document)[0]).toMatchObject({
      path: "channels[0].type",
      message: expect.stringContaining("webhook"),
    });
  });

  it("rejects a mapping key that is not a message field", () => {
    expect(problemsOf(configDocument({ mapping: { body: "msg" } }))[0]?.path).toBe("channels[0].webhook.mapping.body");
  });

  it("rejects two fields mapped to the same key", () => {
    const problems = problemsOf(configDocument({ mapping: { text: "body", media_url: "body" } }));
    expect(problems).toEqual([expect.objectContaining({ path: "channels[0].webhook.mapping.media_url" })]);
  });

  it("rejects a field mapped onto another field's default key", () => {
    const problems = problemsOf(configDocument({ mapping: { text: "sender_id" } }));
    expect(problems[0]?.message).toContain('"sender_id" and "text"');
  });

  it("rejects a mapping onto a fixed key of the reply", () => {
    const problems = problemsOf(configDocument({ mapping: { text: "message_id" } }));
    expect(problems[0]).toMatchObject({
      path: "channels[0].webhook.mapping.text",
      message: expect.stringContaining("fixed key"),
    });
  });

  it("accepts a mapping that swaps names without collisions", () => {
    expect(validateConfig(configDocument({ mapping: { text: "message", conversation_id: "thread" } })).ok).toBe(true);
  });

  it("rejects a channel without a route", () => {
    const problems = problemsOf({ ...configDocument(), routes: [] });
    expect(problems).toEqual([
      expect.objectContaining({ path: "routes", message: expect.stringContaining("has no route") }),
    ]);
  });

  it("rejects a route to an unknown channel and to an unknown brain", () => {
    const document = {
      ...configDocument(),
      routes: [
        { channel: "webhook", brain: "gpt" },
        { channel: "nope", brain: "echo" },
      ],
    };
    expect(problemsOf(document).map((problem) => problem.path)).toEqual(["routes[0].brain", "routes[1].channel"]);
  });

  it("rejects a second route for the same channel", () => {
    const document = {
      ...configDocument(),
      routes: [
        { channel: "webhook", brain: "echo" },
        { channel: "webhook", brain: "echo" },
      ],
    };
    expect(problemsOf(document)).toEqual([expect.objectContaining({ path: "routes[1]" })]);
  });

  it("accepts a route to a brain defined under brains", () => {
    const document = {
      ...configDocument(),
      brains: { parrot: { type: "echo" } },
      routes: [{ channel: "webhook", brain: "parrot" }],
    };
    expect(validateConfig(document).ok).toBe(true);
  });

  it("rejects two channels with the same name", () => {
    const base = configDocument();
    const channel = base.channels[0];
    const document = { ...base, channels: [channel, { ...channel, webhook: { ...channel?.webhook, path: "/other" } }] };
    expect(problemsOf(document)).toEqual([expect.objectContaining({ path: "channels[1].name" })]);
  });

  it("rejects two channels on the same bind and path", () => {
    const base = configDocument();
    const channel = base.channels[0];
    const document = {
      ...base,
      channels: [channel, { ...channel, name: "second", webhook: { ...channel?.webhook, bind: "localhost:8090" } }],
      routes: [...base.routes, { channel: "second", brain: "echo" }],
    };
    expect(problemsOf(document)).toEqual([expect.objectContaining({ path: "channels[1].webhook.path" })]);
  });

  it("accepts two channels that share a bind on different paths", () => {
    const base = configDocument();
    const channel = base.channels[0];
    const document = {
      ...base,
      channels: [channel, { ...channel, name: "second", webhook: { ...channel?.webhook, path: "/second" } }],
      routes: [...base.routes, { channel: "second", brain: "echo" }],
    };
    expect(validateConfig(document).ok).toBe(true);
  });

  it("warns about a non-loopback bind but accepts it", () => {
    const result = validateConfig(configDocument({ bind: "0.0.0.0:8090" }));
    expect(result.ok && result.warnings[0]?.message).toContain("cleartext");
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
