/**
 * A URL in the configuration that does not parse says why, where the reason is a common one:
 * a space, or a port past 65535.
 */
import { describe, expect, it } from "vitest";
import { webhookProblemsOf as problemsOf } from "./validate-config-problems.js";

describe("a URL that does not parse", () => {
  it.each([
    ["http://127.0.0.1:180911/support", "port 180911 is past 65535"],
    ["http://127.0.0.1:8091 /support", "it holds a space or a line break; remove it"],
  ])("%s: says why", (url, why) => {
    const [problem] = problemsOf({ outbound_url: url });
    expect(problem?.message).toBe(
      `must be an absolute http: or https: URL, e.g. "http://127.0.0.1:8091/replies": ${why}`,
    );
  });
});
