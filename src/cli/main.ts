#!/usr/bin/env node
// Entry of the `webhook-channel` command.
import { runCli } from "./run-cli.js";

process.exitCode = await runCli(process.argv.slice(2), {
  env: process.env,
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  // `serve` runs delivery, and writes the SQLite timeline, on the bundle's threads next to this file in dist/.
  deliveryWorker: new URL("./delivery-worker.js", import.meta.url),
  timelineWriter: new URL("./timeline-writer.js", import.meta.url),
});
process.exit();
