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
process.exitCode = await runService({ configPath });
process.exit();
