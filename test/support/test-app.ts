import type { Hono } from "hono";
import { type AppDeps, createApp } from "../../src/core/app/create-app.js";
import { validateConfig } from "../../src/core/config/validate-config.js";
import { configDocument } from "./configs.js";
import { createLogSink } from "./log-sink.js";

/**
 * The core app over the default test configuration, a queue that takes everything, a fixed
 * clock and a silent logger; `extra` sets or replaces any dependency a test is about.
 */
export function createTestApp(extra: Partial<AppDeps> = {}): Hono {
  const result = validateConfig(configDocument());
  if (!result.ok) throw new Error("the default test configuration is invalid");
  return createApp({
    channels: result.config.channels,
    secretsFor: () => ["s"],
    queueFor: () => ({ enqueue: () => undefined }),
    clock: { now: () => 1_000 },
    newId: () => "id",
    logger: createLogSink().logger,
    ...extra,
  });
}
