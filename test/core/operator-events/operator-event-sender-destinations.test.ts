/**
 * The operator event sender with two destinations (a channel's own operator_events and the top
 * level's): one URL that does not answer must not hold up the events of the other, whose team
 * would otherwise hear of its own channel's trouble only after the other URL's time limits, or
 * not at all when a stop comes first.
 */
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { noopMetrics } from "../../../src/core/metrics/noop-metrics.js";
import type { OperatorEventInput } from "../../../src/core/operator-events/operator-event.js";
import { createOperatorEventRoutes } from "../../../src/core/operator-events/operator-event-routes.js";
import {
  createOperatorEventSender,
  type OperatorEventSender,
} from "../../../src/core/operator-events/operator-event-sender.js";
import { createFetchPoster } from "../../../src/core/outbound/fetch-poster.js";
import { type JsonTestServer, startJsonServer } from "../../support/json-test-server.js";
import { createLogSink } from "../../support/log-sink.js";
import { waitFor } from "../../support/wait-for.js";

const ENV: Record<string, string> = { OPS_SECRET: `whsec_${randomBytes(32).toString("base64")}` };

let sender: OperatorEventSender | undefined;
const servers: JsonTestServer[] = [];

afterEach(async () => {
  await sender?.close(0);
  await Promise.all(servers.splice(0).map((server) => server.close()));
  sender = undefined;
});

function deadLetter(channel: string, messageId: string): OperatorEventInput {
  return {
    type: "message.dead_lettered",
    channel,
    data: {
      message_id: messageId,
      conversation_id: "carol",
      step: "delivery",
      error_code: "delivery_failed",
      error: "outbound_url answered 400",
      status: 400,
      attempts: 1,
      received_at: new Date(0).toISOString(),
      died_at: new Date(1).toISOString(),
    },
  };
}

async function twoDestinations() {
  // The first team's URL takes requests and answers none within the 10 s time limit.
  const hanging = await startJsonServer(() => ({ status: 200, delayMs: 10_000 }));
  const healthy = await startJsonServer(() => ({ status: 204 }));
  servers.push(hanging, healthy);
  const result = validateConfig({
    channels: [
      {
        type: "webhook",
        name: "alpha",
        token_env: "WEBHOOK_SECRET",
        webhook: { bind: "127.0.0.1:8301", outbound_url: "http://127.0.0.1:9/alpha" },
        operator_events: { url: `${hanging.origin}/ops`, signing_secret_env: "OPS_SECRET", timeout_ms: 10_000 },
      },
      {
        type: "webhook",
        name: "beta",
        token_env: "WEBHOOK_SECRET",
        webhook: { bind: "127.0.0.1:8302", outbound_url: "http://127.0.0.1:9/beta" },
      },
    ],
    routes: [
      { channel: "alpha", brain: "echo" },
      { channel: "beta", brain: "echo" },
    ],
    operator_events: { url: `${healthy.origin}/ops`, signing_secret_env: "OPS_SECRET" },
  });
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  const { logger, lines } = createLogSink();
  const counted: string[] = [];
  sender = createOperatorEventSender({
    routes: await createOperatorEventRoutes(result.config, (name) => ENV[name]),
    poster: createFetchPoster(fetch),
    logger,
    metrics: { ...noopMetrics, operatorEvent: (type, outcome) => counted.push(`${type} ${outcome}`) },
  });
  return { hanging, healthy, sender, lines, counted };
}

describe("the operator event sender with a URL that does not answer", () => {
  it("sends another destination's event at once, while the first URL's POSTs are still unanswered", async () => {
    const { hanging, healthy, sender } = await twoDestinations();
    for (const id of ["a1", "a2", "a3", "a4"]) sender.emit(deadLetter("alpha", id));
    await waitFor(() => (hanging.requests.length === 4 ? true : undefined), 5_000, "four POSTs at the hanging URL");
    sender.emit(deadLetter("beta", "b1"));
    // Well within the hanging URL's 10 s time limit.
    await waitFor(() => (healthy.requests.length === 1 ? true : undefined), 3_000, "beta's event at its own URL");
    expect(healthy.requests[0]?.body).toMatchObject({ data: { message_id: "b1" } });
  });

  it("at a stop, tries another destination's waiting event rather than dropping it behind the hanging URL", async () => {
    const { hanging, healthy, sender, counted } = await twoDestinations();
    for (const id of ["a1", "a2", "a3", "a4"]) sender.emit(deadLetter("alpha", id));
    await waitFor(() => (hanging.requests.length === 4 ? true : undefined), 5_000, "four POSTs at the hanging URL");
    sender.emit(deadLetter("beta", "b1"));
    await sender.close(1_000);
    expect(healthy.requests).toHaveLength(1);
    expect(counted.filter((entry) => entry.endsWith("sent"))).toEqual(["message.dead_lettered sent"]);
  });
});
