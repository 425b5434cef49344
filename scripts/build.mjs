// Bundles the Node entry points into dist/. Dependencies stay external so that
// `npm ci` decides their versions; only our own code is bundled. The console's script and
// style come first: the core's console routes import them as generated text.
import { build } from "esbuild";
import { buildConsole } from "./build-console.mjs";

await buildConsole();

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
