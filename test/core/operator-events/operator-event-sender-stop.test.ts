/**
 * The operator event sender at a stop, against a real operator endpoint on port 0: what waits is
 * tried once more, and an attempt that fails then is the last, so a stop does not wait out the
 * retry schedule.
 */
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { noopMetrics } from "../../../src/core/metrics/noop-metrics.js";
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

let server: JsonTestServer | undefined;
let sender: OperatorEventSender | undefined;

afterEach(async () => {
  await sender?.close(0);
  await server?.close();
  sender = undefined;
  server = undefined;
});

describe("the operator event sender at a stop", () => {
  it("gives up on an event whose last try at the stop fails, instead of holding the stop for its next retry", async () => {
    server = await startJsonServer(() => ({ status: 503 }));
    const config = validateConfig({
      channels: [
        { type: "webhook", token_env: "WEBHOOK_SECRET", webhook: { outbound_url: "http://127.0.0.1:9/replies" } },
      ],
      routes: [{ channel: "webhook", brain: "echo" }],
      operator_events: { url: `${server.origin}/ops`, signing_secret_env: "OPS_SECRET" },
    });
    if (!config.ok) throw new Error(JSON.stringify(config.problems));
    const { logger, lines } = createLogSink();
    const counted: string[] = [];
    sender = createOperatorEventSender({
      routes: await createOperatorEventRoutes(config.config, (name) => ENV[name]),
      poster: createFetchPoster(fetch),
      logger,
      metrics: { ...noopMetrics, operatorEvent: (type, outcome) => counted.push(`${type} ${outcome}`) },
      // Retries far off: only the stop's own try can come before the stop's time is up.
      initialDelayMs: 60_000,
      maxDelayMs: 60_000,
      random: () => 0.99,
    });
    sender.emit({
      type: "receiver.up",
      channel: "webhook",
      data: { outbound_url: "http://127.0.0.1:9/replies", down_ms: 1_000 },
    });
    await waitFor(
      () => (lines.some((line) => line.msg === "operator event attempt failed; tried again later") ? true : undefined),
      5_000,
      "the first attempt's failure",
    );

    await sender.close(3_000);
    expect(server.requests).toHaveLength(2);
    // Given up on after the stop's try (counted as failed), not dropped when the stop's time ran out.
    expect(counted).toEqual(["receiver.up failed"]);
    expect(lines.find((line) => line.msg === "operator event not delivered: its URL did not take it")).toMatchObject({
      attempts: 2,
      status: 503,
    });
  });
});
