#!/usr/bin/env node
// Entry of the `webhook-channel` command.
import { runCli } from "./run-cli.js";

process.exitCode = await runCli(process.argv.slice(2), {
  env: process.env,
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  // `serve` runs delivery on the bundle's thread next to this file in dist/.
  deliveryWorker: new URL("./delivery-worker.js", import.meta.url),
});
process.exit();
