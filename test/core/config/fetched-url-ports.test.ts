import { describe, expect, it } from "vitest";
import { formatProblem } from "../../../src/core/config/config-problem.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { configDocument } from "../../support/configs.js";
import { problemsOf } from "./validate-config-problems.js";

// The URLs the service calls with `fetch` (the brains', the operator events') refuse a port on
// the Fetch standard's bad-port list: fetch refuses to connect there, so every call would fail
// with "bad port". outbound_url is posted with undici on Node, which has no such list, and
// Workers' fetch connects there too, so it takes any port.

const SIGNED = { signing_secret_env: "OPS_SECRET" };

/** A document whose channel is routed to the brain `b`. */
function withBrain(brain: Record<string, unknown>): unknown {
  return configDocument({}, { brains: { b: brain }, routes: [{ channel: "webhook", brain: "b" }] });
}

const FETCHED: readonly [string, (url: string) => unknown][] = [
  ["brains.b.url", (url) => withBrain({ type: "http", url })],
  ["brains.b.url", (url) => withBrain({ type: "rasa", url })],
  ["brains.b.base_url", (url) => withBrain({ type: "openai", base_url: url, model: "m" })],
  ["operator_events.url", (url) => configDocument({}, { operator_events: { url, ...SIGNED } })],
  [
    "channels[0].operator_events.url",
    (url) => ({
      ...configDocument(),
      channels: [{ ...configDocument().channels[0], operator_events: { url, ...SIGNED } }],
    }),
  ],
];

describe("URLs called with fetch", () => {
  it("refuse port 6000 with the path and the fix", () => {
    expect(problemsOf(withBrain({ type: "http", url: "http://127.0.0.1:6000/bot" })).map(formatProblem)).toEqual([
      'brains.b.url: port 6000 is a "bad port" of the Fetch standard: fetch refuses to connect to it, so every call would fail with "bad port". Fix: use another port: move the server to one fetch allows (e.g. 8000), or put a proxy on one in front of it',
    ]);
  });

  it.each(FETCHED)("%s refuses every bad port", (path, document) => {
    for (const port of [1, 22, 25, 587, 1719, 4190, 6000, 6666, 6679, 10080]) {
      const problems = problemsOf(document(`http://127.0.0.1:${port}/x`));
      expect(problems.map((problem) => problem.path)).toEqual([path]);
      expect(problems[0]?.message).toContain(`port ${port} is a "bad port"`);
    }
    expect(problemsOf(document("https://example.com:993/x"))[0]?.path).toBe(path);
  });

  it.each(FETCHED)("%s takes other ports, and a default port however written", (_path, document) => {
    for (const url of ["http://127.0.0.1:6001/x", "http://127.0.0.1:8000/x", "http://h/x", "https://h:443/x"]) {
      const result = validateConfig(document(url));
      if (!result.ok) throw new Error(`${url}: ${JSON.stringify(result.problems)}`);
    }
  });
});

describe("outbound_url, posted with undici on Node", () => {
  it("takes a port that fetch refuses", () => {
    expect(validateConfig(configDocument({ outbound_url: "http://127.0.0.1:6000/replies" })).ok).toBe(true);
  });
});
