#!/usr/bin/env node
// Entry of `node dist/node.js [--config <file>]`.
import { parseServiceArgs } from "./parse-service-args.js";
import { runService } from "./run-service.js";

let configPath: string;
try {
  ({ configPath } = parseServiceArgs(process.argv.slice(2)));
} catch (error) {
  process.stderr.write(
    `${error instanceof Error ? error.message : String(error)}\nusage: node dist/node.js [--config <file>]\n`,
  );
  process.exit(2);
}
// The bundle's delivery thread sits next to it in dist/.
process.exitCode = await runService({ configPath, deliveryWorker: new URL("./delivery-worker.js", import.meta.url) });
process.exit();
