#!/usr/bin/env node
// Entry of `node dist/node.js [--config <file>] [--bind <host:port>]`.
import { holdHangUps, holdStops } from "./held-signals.js";
import type { ServiceArgs } from "./parse-service-args.js";

// The signals first, the rest loaded after (a static import would load it all before this line
// runs): a reload or a stop asked for while the modules load must not end the process.
const heldHangUps = holdHangUps();
const heldStops = holdStops();
const [{ VERSION }, { parseServiceArgs, serviceHelp }, { runService }] = await Promise.all([
  import("../core/version.js"),
  import("./parse-service-args.js"),
  import("./run-service.js"),
]);

const COMMAND = "node dist/node.js";

let args: ServiceArgs;
try {
  args = parseServiceArgs(process.argv.slice(2));
} catch (error) {
  process.stderr.write(
    `${COMMAND}: ${error instanceof Error ? error.message : String(error)}\n${serviceHelp(COMMAND)}`,
  );
  process.exit(2);
}
if (args.help || args.version) {
  process.stdout.write(args.help ? serviceHelp(COMMAND) : `${VERSION}\n`);
  process.exit(0);
}
// The bundle's delivery thread sits next to it in dist/.
process.exitCode = await runService({
  configPath: args.configPath,
  bind: args.bind,
  heldHangUps,
  heldStops,
  deliveryWorker: new URL("./delivery-worker.js", import.meta.url),
  timelineWriter: new URL("./timeline-writer.js", import.meta.url),
});
process.exit();
