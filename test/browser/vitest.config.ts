// `npm run test:browser`: the operator console in a real browser, headless Chromium from Debian
// (/usr/bin/chromium) driven by playwright-core, against the Node service and `wrangler dev`.
// Not part of `npm test`, because it needs the chromium package (.ci/run installs it).
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "browser",
    root: fileURLToPath(new URL("../../", import.meta.url)),
    include: ["test/browser/**/*.test.ts"],
    environment: "node",
    // The console's script and style, as src/console/ is now (the service runs from sources), and
    // a private Postgres cluster for the timeline readers' Postgres backend.
    globalSetup: ["test/support/console-bundle-global-setup.ts", "test/support/postgres-global-setup.ts"],
    // One browser at a time: the Workers file also runs wrangler dev and workerd.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 90_000,
  },
});
