// Bundles the Node entry points into dist/. Dependencies stay external so that
// `npm ci` decides their versions; only our own code is bundled.
import { build } from "esbuild";

await build({
  entryPoints: {
    node: "src/node/main.ts",
    "delivery-worker": "src/node/delivery-thread/delivery-worker.ts",
    "timeline-writer": "src/node/state/sqlite/timeline-writer.ts",
    cli: "src/cli/main.ts",
    receiver: "src/node/receiver/receiver-main.ts",
  },
  outdir: "dist",
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  packages: "external",
  sourcemap: true,
  logLevel: "warning",
});
