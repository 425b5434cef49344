import { describe, expect, it } from "vitest";
import { formatProblem } from "../../../src/core/config/config-problem.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { configDocument } from "../../support/configs.js";
import { problemsOf } from "./validate-config-problems.js";

// validateConfig on a channel's webhook fields: outbound_url, bind, path (never under /admin),
// buffer_capacity and the mapping of message fields to JSON keys.

describe("validateConfig", () => {
  it("requires outbound_url and says what to add", () => {
    const document = configDocument();
    const channel = document.channels[0] as { webhook: Record<string, unknown> };
    delete channel.webhook.outbound_url;
    expect(problemsOf(document)).toEqual([
      expect.objectContaining({ path: "channels[0].webhook.outbound_url", message: "is required" }),
    ]);
  });

  it.each([
    [{ bind: "nope" }, "channels[0].webhook.bind", 'write "127.0.0.1:8090" to listen on this machine only'],
    [{ path: "/healthz" }, "channels[0].webhook.path", 'pick a path of its own, e.g. "/webhook"'],
    [{ path: "/metrics" }, "channels[0].webhook.path", 'pick a path of its own, e.g. "/webhook"'],
    [
      { outbound_url: "example.com/replies" },
      "channels[0].webhook.outbound_url",
      "write the whole URL, its scheme included",
    ],
    [
      { signing_secret_env: "bad name" },
      "channels[0].webhook.signing_secret_env",
      'letters, digits and "_", not starting with a digit',
    ],
  ])("says how to fix %j, not only that it is wrong", (webhook, path, fix) => {
    const problem = problemsOf(configDocument(webhook)).find((found) => found.path === path);
    expect(problem?.fix).toContain(fix);
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

  it.each(["/a/../admin", "/./webhook", "/webhook/..", "/hooks/./in"])(
    "refuses path %s, which clients resolve before sending",
    (path) => {
      expect(problemsOf(configDocument({ path })).map(formatProblem)).toEqual([
        'channels[0].webhook.path: must not hold a "." or ".." segment: clients resolve them before sending, so no request would reach the path as written. Fix: write the path as clients send it, e.g. "/webhook"',
      ]);
    },
  );

  it.each(["/webhook", "/hooks/in/", "/v1.2/in", "/", "/hooks//in", "/...", "/.well-known/x"])(
    "takes path %s",
    (path) => {
      expect(validateConfig(configDocument({ path })).ok).toBe(true);
    },
  );

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

  it("rejects a mapping onto __proto__, which a reply's object would take for its prototype and drop", () => {
    const problems = problemsOf(configDocument({ mapping: { text: "__proto__" } }));
    expect(problems).toEqual([
      expect.objectContaining({
        path: "channels[0].webhook.mapping.text",
        message: expect.stringContaining("prototype"),
      }),
    ]);
  });

  it("accepts a mapping that swaps names without collisions", () => {
    expect(validateConfig(configDocument({ mapping: { text: "message", conversation_id: "thread" } })).ok).toBe(true);
  });

  it("warns about a non-loopback bind but accepts it", () => {
    const result = validateConfig(configDocument({ bind: "0.0.0.0:8090" }));
    expect(result.ok && result.warnings[0]?.message).toContain("cleartext");
  });

  it("warns, naming the key and the fix, when a receiver outage could dead-letter before the circuit opens", () => {
    const result = validateConfig(configDocument({ delivery: { max_attempts: 4 } }));
    expect(result.ok && result.warnings).toEqual([
      {
        path: "channels[0].webhook.delivery.max_attempts",
        message:
          "4 is below circuit_failures (5): a receiver outage can dead-letter a message before the receiver circuit opens and holds the replies",
        fix: "raise max_attempts to 5 or more, or lower circuit_failures",
      },
    ]);
    for (const delivery of [{ max_attempts: 5 }, { max_attempts: 2, circuit_failures: 0 }]) {
      const fine = validateConfig(configDocument({ delivery }));
      expect(fine.ok && fine.warnings).toEqual([]);
    }
  });
});
