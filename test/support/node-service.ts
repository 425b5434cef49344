import { type Config, DEFAULT_BUFFER_CAPACITY } from "../../src/core/config/config-schema.js";
import { validateConfig } from "../../src/core/config/validate-config.js";
import { type ReceivedReply, type ReceiverOptions, startReceiver } from "../../src/node/receiver/sample-receiver.js";
import type { ServiceOptions } from "../../src/node/service/service-options.js";
import { type RunningService, startService } from "../../src/node/service/start-service.js";
import { deliveryWorkerEntry } from "./delivery-worker-entry.js";
import { createLogSink } from "./log-sink.js";

/** The shared test secret. */
export const SECRET = "test-secret-0123456789";

/** A started service with a real receiver, both on loopback port 0. */
export interface ServiceHarness {
  readonly baseUrl: string;
  readonly replies: ReceivedReply[];
  readonly logs: Record<string, unknown>[];
  readonly service: RunningService;
  post(body: unknown, headers?: Record<string, string>, path?: string): Promise<Response>;
  close(): Promise<void>;
}

/**
 * Starts the real Node service (in this process) and a real receiver; `tuning` sets what a test
 * may change of the service's own timings (a replica's lease, say).
 */
export async function startHarness(
  webhook: Record<string, unknown> = {},
  receiverOptions: ReceiverOptions = {},
  extra: Record<string, unknown> = {},
  env: Record<string, string> = {},
  tuning: Pick<ServiceOptions, "replicaLeaseMs"> = {},
): Promise<ServiceHarness> {
  const replies: ReceivedReply[] = [];
  const receiver = await startReceiver({
    port: 0,
    ...receiverOptions,
    onReply: (reply) => {
      replies.push(reply);
      receiverOptions.onReply?.(reply);
    },
  });
  const result = validateConfig({
    channels: [
      {
        type: "webhook",
        token_env: "WEBHOOK_SECRET",
        webhook: {
          bind: "127.0.0.1:0",
          outbound_url: receiver.url,
          buffer_capacity: DEFAULT_BUFFER_CAPACITY,
          ...webhook,
        },
      },
    ],
    routes: [{ channel: "webhook", brain: "echo" }],
    ...extra,
  });
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  const config: Config = result.config;
  const { logger, lines } = createLogSink();
  let service: RunningService;
  try {
    service = await startService({
      config,
      secrets: new Map([["webhook", SECRET]]),
      logger,
      env: (name) => env[name],
      ...tuning,
      ...(config.delivery_thread ? { deliveryThread: { entry: deliveryWorkerEntry(), env } } : {}),
    });
  } catch (error) {
    await receiver.close();
    throw error;
  }
  const listener = service.listeners[0];
  if (listener === undefined) throw new Error("no listener");
  const baseUrl = `http://127.0.0.1:${listener.port}`;
  const path = config.channels[0]?.webhook.path ?? "/webhook";
  return {
    baseUrl,
    replies,
    logs: lines,
    service,
    post: (body, headers = {}, at = path) =>
      fetch(`${baseUrl}${at}`, {
        method: "POST",
        headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json", ...headers },
        body: typeof body === "string" ? body : JSON.stringify(body),
      }),
    async close() {
      await service.stop(1_000);
      await receiver.close();
    },
  };
}
