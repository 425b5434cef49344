// Bundles the Node entry points into dist/. Dependencies stay external so that
// `npm ci` decides their versions; only our own code is bundled. The console's script and
// style come first: the core's console routes import them as generated text.
import { readdirSync, rmSync } from "node:fs";
import { basename } from "node:path";
import { build } from "esbuild";
import { buildConsole } from "./build-console.mjs";

await buildConsole();

const { metafile } = await build({
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
  // Modules loaded only on demand (the Postgres and SQLite backends, and their drivers) go to
  // chunks of their own beside the entries, so that an entry loads only what it runs.
  splitting: true,
  sourcemap: true,
  logLevel: "warning",
  metafile: true,
});

// A chunk's name holds a hash of its content: the chunks of an earlier build are removed, so
// that dist/ holds only what this build wrote. A process started from dist/ before the build
// may still import a chunk it removed: rebuild while nothing is starting from it.
const written = new Set(Object.keys(metafile.outputs).map((path) => basename(path)));
for (const name of readdirSync("dist")) {
  if (/\.js(\.map)?$/.test(name) && !written.has(name)) rmSync(`dist/${name}`);
}
