// `npm run demo`: the sample receiver and the service side by side, so a newcomer sees a
// message go in and the echo reply come out. Ctrl-C (or SIGTERM) stops both.
//
// Arguments go to the service (`npm run demo -- --config other.json`). DEMO_RECEIVER_PORT
// moves the receiver off 127.0.0.1:8091 (the outbound_url of config.json).
//
// Signals: the children run in their own process group (`detached`), so a Ctrl-C in the
// terminal reaches only this script, which passes each SIGINT or SIGTERM on to each child
// still running. The service thus sees one signal and drains gracefully. The same signal
// coming again within a second is the same stop reaching the demo twice (npm passes the
// terminal's Ctrl-C on to its script, which got it already) and is not passed on; one
// later than that makes the service exit at once, as a second signal does. The script then
// waits for both children and exits with the service's status.
import { spawn } from "node:child_process";
import { constants } from "node:os";

if (!process.env.WEBHOOK_SECRET) {
  process.stderr.write("WEBHOOK_SECRET is not set. Run for example:\n  WEBHOOK_SECRET=dev-secret npm run demo\n");
  process.exit(1);
}

const receiverArgs = process.env.DEMO_RECEIVER_PORT ? ["--port", process.env.DEMO_RECEIVER_PORT] : [];

/** Starts `node <args>` in its own process group; resolves with its exit status once it has exited. */
function start(name, args) {
  const child = spawn(process.execPath, args, { stdio: ["ignore", "inherit", "inherit"], detached: true });
  const exited = new Promise((resolve) => {
    child.on("error", (error) => {
      process.stderr.write(`demo: cannot start the ${name}: ${error.message}\n`);
      resolve(1);
    });
    child.on("exit", (code, signal) => resolve(code ?? 128 + (constants.signals[signal] ?? 0)));
  });
  const entry = { name, child, exited, running: true, signalled: false };
  void exited.then(() => {
    entry.running = false;
  });
  return entry;
}

const receiver = start("receiver", ["dist/receiver.js", ...receiverArgs]);
const service = start("service", ["dist/node.js", ...process.argv.slice(2)]);
const children = [receiver, service];

/**
 * Sends `signal` to every child that has not exited yet; with `unlessSignalled`, only to those
 * that got no signal so far (so stopping a child never becomes its second, hurried signal).
 */
function forward(signal, unlessSignalled = false) {
  for (const entry of children) {
    if (!entry.running || (unlessSignalled && entry.signalled)) continue;
    entry.signalled = true;
    try {
      entry.child.kill(signal);
    } catch {
      // Exited between the check and the kill: nothing to stop.
    }
  }
}

/** When each signal was last passed on. */
const lastForwarded = new Map();
/** Passes `signal` on, unless the same one was passed on less than a second ago. */
function onSignal(signal) {
  const now = Date.now();
  const last = lastForwarded.get(signal);
  if (last !== undefined && now - last < 1_000) return;
  lastForwarded.set(signal, now);
  forward(signal);
}
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => onSignal(signal));
// Losing the terminal stops the demo like a SIGTERM would.
process.on("SIGHUP", () => onSignal("SIGTERM"));

// When either child ends on its own (the service could not start, the receiver's port is
// busy...), stop the other one too.
const first = await Promise.race(children.map((entry) => entry.exited.then(() => entry)));
forward("SIGTERM", true);
const [receiverStatus, serviceStatus] = await Promise.all([receiver.exited, service.exited]);
// The service's status, unless the receiver failed first while the service stopped cleanly.
process.exitCode = first === receiver && serviceStatus === 0 ? receiverStatus : serviceStatus;
