import { describe, expect, it } from "vitest";
import { formatProblem } from "../../../src/core/config/config-problem.js";
import type { ConfigInput } from "../../../src/core/config/config-schema.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { problemsOf } from "./validate-config-problems.js";

// validateConfig on the binds of several channels: two binds that cannot both listen are refused
// before the start finds out, and two spellings of one address are one bind.

/** Channels named a, b, … with these binds (and paths, /webhook unless given), each routed to echo. */
function channelsOn(...binds: (string | [string, string])[]): ConfigInput {
  const names = binds.map((_bind, index) => String.fromCharCode(97 + index));
  return {
    channels: binds.map((entry, index) => {
      const [bind, path] = typeof entry === "string" ? [entry, "/webhook"] : entry;
      return {
        type: "webhook",
        name: names[index],
        token_env: "WEBHOOK_SECRET",
        webhook: { bind, path, outbound_url: "http://127.0.0.1:8091/replies" },
      };
    }),
    routes: names.map((name) => ({ channel: name, brain: "echo" })),
  } as ConfigInput;
}

describe("validateConfig: overlapping binds", () => {
  it("refuses 0.0.0.0:P beside 127.0.0.1:P, naming both channels' paths", () => {
    expect(problemsOf(channelsOn("0.0.0.0:8090", "127.0.0.1:8090")).map(formatProblem)).toEqual([
      "channels[1].webhook.bind: 127.0.0.1:8090 cannot listen beside 0.0.0.0:8090 of channels[0].webhook.bind: 0.0.0.0 listens on every IPv4 address of port 8090. Fix: give one of the two channels another port, or the same bind as the other (channels with one bind share its listener)",
    ]);
  });

  it.each([
    ["127.0.0.1:8090", "0.0.0.0:8090"],
    ["0:8090", "127.0.0.1:8090"],
    ["0.0.0.0:8090", "[::ffff:10.0.0.1]:8090"],
    ["[::]:8090", "127.0.0.1:8090"],
    ["[::]:8090", "[::1]:8090"],
    ["[::1]:8090", "[0::0]:8090"],
    ["[::]:8090", "0.0.0.0:8090"],
    ["[::]:8090", "example.internal:8090"],
  ])("refuses %s beside %s", (first, second) => {
    const [problem] = problemsOf(channelsOn(first, second));
    expect(problem?.path).toBe("channels[1].webhook.bind");
    expect(problem?.message).toContain("of channels[0].webhook.bind");
  });

  it("says that [::] takes every address, IPv4 and IPv6", () => {
    expect(problemsOf(channelsOn("[::]:8090", "10.0.0.1:8090"))[0]?.message).toContain(
      ": [::] listens on every address, IPv4 and IPv6, of port 8090",
    );
  });

  it.each([
    ["0.0.0.0:8090", "[::1]:8090"],
    // localhost may listen on ::1, the resolver's first answer on some hosts.
    ["0.0.0.0:8090", "localhost:8090"],
    ["127.0.0.1:8090", "127.0.0.2:8090"],
    ["0.0.0.0:8090", "127.0.0.1:8091"],
    ["0.0.0.0:0", "127.0.0.1:0"],
    ["0.0.0.0:8090", "example.internal:8090"],
  ])("accepts %s beside %s", (first, second) => {
    const result = validateConfig(channelsOn(first, second));
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
  });

  it("refuses each later channel that overlaps, once", () => {
    const problems = problemsOf(channelsOn("0.0.0.0:8090", "127.0.0.1:8090", "127.0.0.2:8090"));
    expect(problems.map((problem) => problem.path)).toEqual(["channels[1].webhook.bind", "channels[2].webhook.bind"]);
  });
});

describe("validateConfig: spellings of one address", () => {
  it.each([
    ["[::1]:8090", "[0:0:0:0:0:0:0:1]:8090"],
    ["127.1:8090", "127.0.0.1:8090"],
    ["localhost:8090", "[::ffff:127.0.0.1]:8090"],
  ])("refuses %s and %s with the same path, saying they are one address", (first, second) => {
    expect(problemsOf(channelsOn(first, second)).map(formatProblem)).toEqual([
      `channels[1].webhook.path: bind ${second} and path /webhook are already used by channels[0] (its bind ${first} is the same address). Fix: give this channel another path or another bind`,
    ]);
  });

  it("accepts them with different paths: they share one listener", () => {
    const result = validateConfig(channelsOn(["[::1]:8090", "/a"], ["[0:0:0:0:0:0:0:1]:8090", "/b"]));
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
  });

  it.each(["127.1:8090", "[0:0:0:0:0:0:0:1]:8090", "[::ffff:127.0.0.1]:8090", "0x7f.0.0.1:8090"])(
    "does not warn about %s, a loopback address",
    (bind) => {
      const result = validateConfig(channelsOn(bind));
      expect(result.ok && result.warnings).toEqual([]);
    },
  );
});
