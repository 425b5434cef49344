import { describe, expect, it } from "vitest";
import type { ConfigProblem } from "../../../src/core/config/config-problem.js";
import { preflight } from "../../../src/core/config/preflight/preflight.js";
import { signingProblems } from "../../../src/core/config/preflight/signing-problems.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { configDocument } from "../../support/configs.js";

const SIGNED = { url: "https://ops.example/events", signing_secret_env: "OPS_SECRET" };

function problemsOf(document: unknown): readonly ConfigProblem[] {
  const result = validateConfig(document);
  return result.ok ? [] : result.problems;
}

function valid(document: unknown) {
  const result = validateConfig(document);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.config;
}

describe("operator_events in the configuration", () => {
  it("takes a signed destination at the top level and in a channel, timeout_ms defaulting to 5000", () => {
    const config = valid({
      ...configDocument({}, { operator_events: SIGNED }),
      channels: [{ ...configDocument().channels[0], operator_events: { ...SIGNED, events: ["receiver.down"] } }],
    });
    expect(config.operator_events).toEqual({ ...SIGNED, timeout_ms: 5_000 });
    expect(config.channels[0]?.operator_events?.events).toEqual(["receiver.down"]);
  });

  it("refuses a URL that is not http(s), naming its path", () => {
    expect(problemsOf(configDocument({}, { operator_events: { ...SIGNED, url: "ops.example/events" } }))).toEqual([
      {
        path: "operator_events.url",
        message: 'must be an absolute http: or https: URL, e.g. "https://ops.example.com/webhook-channel/events"',
        fix: 'write the whole URL, its scheme included, e.g. "https://ops.example.com/webhook-channel/events"',
      },
    ]);
  });

  it("refuses a destination that names no signing variable, saying how to add one", () => {
    const [problem] = problemsOf(configDocument({}, { operator_events: { url: SIGNED.url } }));
    expect(problem).toMatchObject({
      path: "operator_events",
      message: "names no signing variable: operator events are always signed",
    });
    expect(problem?.fix).toContain('"signing_secret_env": "OPERATOR_EVENTS_SIGNING_SECRET"');
  });

  it("refuses an event type it does not know, listing those it does", () => {
    const document = configDocument();
    const [channel] = document.channels;
    const [problem] = problemsOf({
      ...document,
      channels: [{ ...channel, operator_events: { ...SIGNED, events: ["message.failed"] } }],
    });
    expect(problem?.path).toBe("channels[0].operator_events.events[0]");
    expect(problem?.message).toContain('"message.dead_lettered"');
  });

  it("refuses an unknown key, a secret in the file among them", () => {
    expect(problemsOf(configDocument({}, { operator_events: { ...SIGNED, secret: "x" } }))).toEqual([
      expect.objectContaining({ path: "operator_events.secret" }),
    ]);
  });

  it("has preflight ask for the signing variable when it is unset, with the whsec_ fix", () => {
    const config = valid(configDocument({}, { operator_events: SIGNED }));
    const problems = preflight(config, (name) => (name === "WEBHOOK_SECRET" ? "channel-secret" : undefined));
    expect(problems).toEqual([
      {
        path: "operator_events.signing_secret_env",
        message: "environment variable OPS_SECRET is not set",
        fix: 'export OPS_SECRET="whsec_$(openssl rand -base64 32)" and give the receiver the same value',
      },
    ]);
  });

  it("has preflight refuse a signing value the service could not sign with, never quoting it", async () => {
    const config = valid({
      ...configDocument(),
      channels: [
        {
          ...configDocument().channels[0],
          operator_events: { url: SIGNED.url, signing_key_env: "OPS_KEY" },
        },
      ],
    });
    const problems = await signingProblems(config, (name) => (name === "OPS_KEY" ? "whsec_c2VjcmV0" : undefined));
    expect(problems).toEqual([
      expect.objectContaining({
        path: "channels[0].operator_events.signing_key_env",
        message: expect.stringContaining("is a whsec_ HMAC secret, not a whsk_ Ed25519 key"),
      }),
    ]);
    expect(JSON.stringify(problems)).not.toContain("c2VjcmV0");
  });
});
