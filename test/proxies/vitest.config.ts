// `npm run test:proxies`: the nginx and Caddy recipes of docs/deployment.md, run for real. Not part
// of `npm test`, because it needs nginx, caddy and openssl installed (.ci/run installs them).
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "proxies",
    root: fileURLToPath(new URL("../../", import.meta.url)),
    include: ["test/proxies/**/*.test.ts"],
    environment: "node",
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
