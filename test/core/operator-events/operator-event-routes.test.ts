import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { brainPausedEvent, receiverEvent } from "../../../src/core/operator-events/operator-event.js";
import { createOperatorEventRoutes } from "../../../src/core/operator-events/operator-event-routes.js";

const ENV: Record<string, string> = {
  GLOBAL_SECRET: `whsec_${randomBytes(32).toString("base64")}`,
  TEAM_SECRET: `whsec_${randomBytes(32).toString("base64")}`,
};
const env = (name: string) => ENV[name];

function channel(name: string, extra: Record<string, unknown> = {}) {
  return {
    type: "webhook",
    name,
    token_env: "T",
    webhook: { path: `/${name}`, outbound_url: "http://127.0.0.1:9/r" },
    ...extra,
  };
}

function config(document: Record<string, unknown>) {
  const result = validateConfig(document);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.config;
}

const GLOBAL = { url: "https://ops.example/all", signing_secret_env: "GLOBAL_SECRET" };
const TEAM = {
  url: "https://team.example/events",
  signing_secret_env: "TEAM_SECRET",
  events: ["receiver.down", "brain.paused"],
};

const down = (name: string) => receiverEvent("down", name, "http://127.0.0.1:9/r", { failures: 5 }, 0);
const up = (name: string) => receiverEvent("up", name, "http://127.0.0.1:9/r", { failures: 0 }, 0);

describe("operator event routes", () => {
  it("send a channel's events to its own operator_events, else to the top level's", async () => {
    const routes = await createOperatorEventRoutes(
      config({
        channels: [channel("a"), channel("b", { operator_events: TEAM })],
        routes: [
          { channel: "a", brain: "echo" },
          { channel: "b", brain: "echo" },
        ],
        operator_events: GLOBAL,
      }),
      env,
    );
    expect(routes.destinationsOf(down("a")).map((destination) => destination.url)).toEqual([GLOBAL.url]);
    expect(routes.destinationsOf(down("b")).map((destination) => destination.url)).toEqual([TEAM.url]);
    // The team's destination takes only the types it lists.
    expect(routes.destinationsOf(up("b"))).toEqual([]);
  });

  it("send a brain's events to the destination of every channel whose route asks it, fallbacks included, each once", async () => {
    const brain = { type: "http", url: "http://127.0.0.1:5000/brain" };
    const routes = await createOperatorEventRoutes(
      config({
        channels: [channel("a"), channel("b", { operator_events: TEAM }), channel("c")],
        routes: [
          { channel: "a", brain: "main" },
          { channel: "b", brain: "main" },
          { channel: "c", brain: "spare" },
        ],
        brains: { main: { ...brain, fallback: ["spare"] }, spare: brain },
        operator_events: GLOBAL,
      }),
      env,
    );
    const urls = (name: string) =>
      routes
        .destinationsOf(brainPausedEvent(name, 0, 429))
        .map((destination) => destination.url)
        .sort();
    expect(urls("main")).toEqual([GLOBAL.url, TEAM.url].sort());
    // Asked by a and b as their fallback, and by c directly: the top level's once.
    expect(urls("spare")).toEqual([GLOBAL.url, TEAM.url].sort());
    expect(
      routes.destinationsOf({ type: "brain.resumed", brain: "main", data: { brain: "main", paused_ms: 1 } }),
    ).toHaveLength(1);
  });

  it("are empty without operator_events anywhere", async () => {
    const routes = await createOperatorEventRoutes(
      config({ channels: [channel("a")], routes: [{ channel: "a", brain: "echo" }] }),
      env,
    );
    expect(routes.empty).toBe(true);
    expect(routes.destinationsOf(down("a"))).toEqual([]);
  });

  it("refuse a signing variable that is unset, naming it and never a value", async () => {
    const document = {
      channels: [channel("a")],
      routes: [{ channel: "a", brain: "echo" }],
      operator_events: { url: "https://ops.example/all", signing_secret_env: "NOT_SET" },
    };
    await expect(createOperatorEventRoutes(config(document), env)).rejects.toMatchObject({
      code: "config_invalid",
      message: "environment variable NOT_SET (operator_events) is not set",
    });
    await expect(createOperatorEventRoutes(config(document), () => "whsec_not base64 at all")).rejects.toMatchObject({
      code: "config_invalid",
      message: expect.stringContaining("NOT_SET"),
    });
  });
});
