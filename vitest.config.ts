import { availableParallelism } from "node:os";
import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

/**
 * workerd reports every test file's closing runner socket as "WebSocket peer disconnected", and
 * vitest-pool-workers 0.15 prints it to stderr on green runs. The pool filters its siblings
 * ("WebSocket was aborted", ...) and filters this one too from 0.16 (workers-sdk PR 13833), but
 * 0.16 needs a wrangler that no longer runs on Node 20. Until the pin moves, drop exactly that
 * line here, in the process the pool writes from (to stdout or stderr); anything else workerd says still shows.
 */
const WORKERD_NOISE = "disconnected: WebSocket peer disconnected";
for (const stream of [process.stdout, process.stderr]) {
  const write = stream.write.bind(stream) as (chunk: string | Uint8Array, ...rest: unknown[]) => boolean;
  stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
    if (text.includes(WORKERD_NOISE)) return true;
    return write(chunk, ...rest);
  }) as typeof stream.write;
}

export default defineConfig({
  test: {
    // Vitest's default for a run is one worker fewer than the cores: a single worker on the
    // 2-core machines CI runs on. The test files mostly wait (on spawned services, sockets and
    // timers), so two workers there took `npm test` from 5.5 to about 3.5 minutes.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // `npm run coverage` only: it runs the `node` and `workers-node` projects. The `workers`
    // project runs inside workerd, where vitest-pool-workers cannot collect v8 coverage, so
    // code that only runs there (src/workers) shows as uncovered; its tests are in test/workers.
    coverage: {
      provider: "v8",
      include: ["src/**/*.ts"],
      reporter: ["text", "html"],
      reportsDirectory: "coverage",
      // A failing test still prints the table (and npm run coverage still fails).
      reportOnFailure: true,
    },
    projects: [
      {
        test: {
          name: "node",
          include: [
            "test/core/**/*.test.ts",
            "test/node/**/*.test.ts",
            "test/cli/**/*.test.ts",
            "test/console/**/*.test.ts",
          ],
          environment: "node",
          // A private Postgres cluster for the postgres_url_env tests.
          globalSetup: ["test/support/console-bundle-global-setup.ts", "test/support/postgres-global-setup.ts"],
          testTimeout: 20_000,
          hookTimeout: 20_000,
        },
      },
      {
        // Inside workerd, with the bindings of wrangler.toml (queues, Durable Object).
        plugins: [
          cloudflareTest({
            wrangler: { configPath: "./wrangler.toml" },
            // Instead of wrangler.toml's main: the same Worker, with Durable Objects that a test
            // can point at its own environment (test/workers/support/worker-entry.ts).
            main: "./test/workers/support/worker-entry.ts",
            miniflare: {
              // The bundled config.json names WEBHOOK_SECRET; tests that need another
              // configuration pass CONFIG_JSON in their own environment.
              bindings: { WEBHOOK_SECRET: "workers-test-secret" },
              // Same settings as wrangler.toml, but batches leave after 50 ms, not 1 s.
              queueConsumers: {
                "webhook-channel-inbound": {
                  maxBatchSize: 10,
                  maxBatchTimeout: 0.05,
                  maxRetries: 100,
                  retryDelay: 30,
                  deadLetterQueue: "webhook-channel-dead-letters",
                },
                "webhook-channel-dead-letters": { maxBatchSize: 10, maxBatchTimeout: 0.05, maxRetries: 100 },
              },
            },
          }),
        ],
        test: {
          name: "workers",
          include: ["test/workers/*.test.ts"],
          // A real HTTP upstream on Node (receivers, brains' servers) that the tests inside
          // workerd script over HTTP: test/workers/support/scripted-upstream-client.ts.
          globalSetup: [
            "test/support/console-bundle-global-setup.ts",
            "test/support/scripted-upstream-global-setup.ts",
          ],
          testTimeout: 20_000,
          hookTimeout: 20_000,
        },
      },
      {
        // On Node: the wrangler dev end-to-end test, and the CLI's .dev.vars support.
        test: {
          name: "workers-node",
          include: ["test/workers/node/*.test.ts"],
          environment: "node",
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
