#!/usr/bin/env node
// Entry of the `webhook-channel` command.
import type { Writable } from "node:stream";
import { holdHangUps, holdStops } from "../node/held-signals.js";

// `serve` takes the signals over first, as `node dist/node.js` does: a reload or a stop asked
// for while the commands load (loaded after, below) must not end the service.
const held = process.argv[2] === "serve" ? { heldHangUps: holdHangUps(), heldStops: holdStops() } : {};
const { runCli } = await import("./run-cli.js");

/** Resolves once `stream` has handed on everything written to it before. */
function flushed(stream: Writable): Promise<void> {
  return new Promise((resolve) => {
    stream.write("", () => resolve());
  });
}

// A reader that stops early (`| head`) closes the pipe: the rest is not wanted, and a stack trace
// is not either. The status is the one a tool stopped by SIGPIPE has, as Node ignores that signal.
// Not for `serve`: a service whose log pipe broke must not end without a word.
const SIGPIPE_STATUS = 141;
if (process.argv[2] !== "serve") {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "EPIPE") throw error;
      process.exit(SIGPIPE_STATUS);
    });
  }
}

const code = await runCli(process.argv.slice(2), {
  env: process.env,
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  // `serve` runs delivery, and writes the SQLite timeline, on the bundle's threads next to this file in dist/.
  deliveryWorker: new URL("./delivery-worker.js", import.meta.url),
  timelineWriter: new URL("./timeline-writer.js", import.meta.url),
  ...held,
});
// A pipe takes a large write a piece at a time: an exit before it has taken the rest cuts the
// output short. The exit itself stays, as open connections (a database's pool) must not hold it.
await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
process.exit(code);
