import { describe, expect, it } from "vitest";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { configDocument } from "../../support/configs.js";
import { problemsOf } from "./validate-config-problems.js";

// validateConfig on routes and channels together: each channel needs one route to a brain that
// exists, and two channels may share neither a name nor a bind and path.

describe("validateConfig", () => {
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
});
