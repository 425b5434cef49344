// Starts a Node child that announces itself with a JSON "listening" log line carrying its
// url (the service, the bare server, the receiver), and stops it with a bounded wait.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";

const START_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 10_000;
const KEPT_LINES = 40;

/**
 * Spawns `node <args>` and resolves once it logs `{"msg":"listening","url":...}`.
 * The last lines of output are kept so that a failure can say why.
 */
export async function startChild(name, args, { env = {}, ipc = false, nodeOptions = [] } = {}) {
  const child = spawn(process.execPath, [...nodeOptions, ...args], {
    env: { ...process.env, ...env },
    stdio: ipc ? ["ignore", "pipe", "pipe", "ipc"] : ["ignore", "pipe", "pipe"],
  });
  const lines = [];
  const keep = (line) => {
    lines.push(line);
    if (lines.length > KEPT_LINES) lines.shift();
  };
  createInterface({ input: child.stderr }).on("line", keep);
  const stdout = createInterface({ input: child.stdout });

  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => fail(`${name} did not log "listening" within ${START_TIMEOUT_MS} ms`),
      START_TIMEOUT_MS,
    );
    const fail = (reason) => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(new Error(`${reason}\n${lines.join("\n")}`));
    };
    child.once("exit", (code, signal) => fail(`${name} exited (${code ?? signal}) before listening`));
    child.once("error", (error) => fail(`${name} could not start: ${error.message}`));
    stdout.on("line", (line) => {
      keep(line);
      if (!line.includes('"listening"')) return;
      try {
        const entry = JSON.parse(line);
        if (entry.msg === "listening" && typeof entry.url === "string") {
          clearTimeout(timer);
          child.removeAllListeners("exit");
          child.removeAllListeners("error");
          resolve(entry.url);
        }
      } catch {
        // Not JSON: ordinary output that merely mentions the word.
      }
    });
  });

  const exited = once(child, "exit");
  return {
    name,
    url,
    pid: child.pid,
    child,
    /** The last lines the child wrote, for error messages. */
    recentOutput: () => lines.join("\n"),
    /** SIGTERM, then SIGKILL if it has not exited within STOP_TIMEOUT_MS. */
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}
