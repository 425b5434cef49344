#!/usr/bin/env node
// Entry of `node dist/node.js [--config <file>] [--bind <host:port>]`.
import { VERSION } from "../core/version.js";
import { parseServiceArgs, type ServiceArgs, serviceHelp } from "./parse-service-args.js";
import { runService } from "./run-service.js";

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
  deliveryWorker: new URL("./delivery-worker.js", import.meta.url),
  timelineWriter: new URL("./timeline-writer.js", import.meta.url),
});
process.exit();
