import { describe, expect, it } from "vitest";
import type { Config } from "../../../src/core/config/config-schema.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { compareConfigs } from "../../../src/node/service/config-changes.js";

function config(document: Record<string, unknown>): Config {
  const result = validateConfig(document);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.config;
}

function channel(name: string, webhook: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  return {
    type: "webhook",
    name,
    token_env: `${name.toUpperCase()}_SECRET`,
    webhook: { bind: "127.0.0.1:0", path: `/${name}`, outbound_url: "http://127.0.0.1:9/r", ...webhook },
    ...extra,
  };
}

function twoChannels(a = channel("a"), b = channel("b"), extra: Record<string, unknown> = {}): Config {
  return config({
    channels: [a, b],
    routes: [
      { channel: "a", brain: "echo" },
      { channel: "b", brain: "echo" },
    ],
    ...extra,
  });
}

describe("compareConfigs", () => {
  it("finds nothing between a configuration and its channels in another order", () => {
    const reordered = config({
      channels: [channel("b"), channel("a")],
      routes: [
        { channel: "a", brain: "echo" },
        { channel: "b", brain: "echo" },
      ],
    });
    expect(compareConfigs(twoChannels(), reordered)).toEqual({ live: [], restart: [] });
  });

  it("names outbound settings, secrets' variables, brains and the shutdown timeout as live, down to the leaf", () => {
    const next = twoChannels(
      channel("a", { outbound_url: "http://127.0.0.1:10/r", delivery: { max_attempts: 3 }, max_connections: 10 }),
      channel("b", { outbound_token_env: "B_TOKEN", signing_key_env: "B_SIGNING_KEY" }, { token_env: "B_NEW_SECRET" }),
      { brains: { unused: { type: "echo" } }, shutdown_timeout_ms: 5 },
    );
    const changes = compareConfigs(twoChannels(), next);
    expect(changes.restart).toEqual([]);
    expect([...changes.live].sort()).toEqual([
      "brains",
      "channels[0].webhook.delivery.max_attempts",
      "channels[0].webhook.max_connections",
      "channels[0].webhook.outbound_url",
      "channels[1].token_env",
      "channels[1].webhook.outbound_token_env",
      "channels[1].webhook.signing_key_env",
      "shutdown_timeout_ms",
    ]);
  });

  it("names what is built into sockets, routes, queues and loggers as needing a restart", () => {
    const next = twoChannels(
      channel("a", { bind: "127.0.0.1:1", path: "/moved", mapping: { text: "body" }, buffer_capacity: 5 }),
      channel("b"),
      { log_level: "debug" },
    );
    expect([...compareConfigs(twoChannels(), next).restart].sort()).toEqual([
      "channels[0].webhook.bind",
      "channels[0].webhook.buffer_capacity",
      "channels[0].webhook.mapping",
      "channels[0].webhook.path",
      "log_level",
    ]);
  });

  it("names the conversation memory's retention as needing a restart: both threads' stores are built with it", () => {
    const next = twoChannels(channel("a"), channel("b"), { conversation_memory: { retention_hours: 24 } });
    expect(compareConfigs(twoChannels(), next)).toEqual({
      live: [],
      restart: ["conversation_memory.retention_hours"],
    });
  });

  it("names a channel added or removed", () => {
    const one = config({ channels: [channel("a")], routes: [{ channel: "a", brain: "echo" }] });
    expect(compareConfigs(one, twoChannels()).restart).toEqual(['channels[1] (channel "b" added)']);
    expect(compareConfigs(twoChannels(), one).restart).toEqual(['channels (channel "b" removed)']);
  });
});
