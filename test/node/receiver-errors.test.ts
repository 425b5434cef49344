import { afterEach, describe, expect, it } from "vitest";
import { type Receiver, startReceiver } from "../../src/node/receiver/sample-receiver.js";
import { type Spawned, spawnNode } from "../support/spawn-node.js";

let receiver: Receiver | undefined;
let spawned: Spawned | undefined;

afterEach(async () => {
  spawned?.child.kill("SIGKILL");
  await receiver?.close();
  spawned = undefined;
  receiver = undefined;
});

/** Runs dist/receiver.js to its end; resolves its exit status and what it wrote to stderr. */
async function runReceiver(args: readonly string[]): Promise<{ code: number | null; stderr: string }> {
  spawned = spawnNode("dist/receiver.js", args, {});
  const code = await spawned.exited;
  return { code, stderr: spawned.stderr.join("") };
}

describe("node dist/receiver.js (npm run receiver)", () => {
  it.each([
    [["--bogus"], "Unknown option '--bogus'"],
    [["--port", "eighty"], '--port must be a number from 0 to 65535, not "eighty"'],
    [["--port", "70000"], "--port must be a number from 0 to 65535"],
  ])("on the bad argument %j prints one line, no stack, and exits 2", async (args, message) => {
    const { code, stderr } = await runReceiver(args);
    expect(code).toBe(2);
    expect(stderr).toContain(`receiver: ${message}`);
    expect(stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it("on a busy port prints one line naming the port, no stack, and exits 1", async () => {
    receiver = await startReceiver({ port: 0 });
    const { code, stderr } = await runReceiver(["--port", String(receiver.port)]);
    expect(code).toBe(1);
    expect(stderr).toContain(`receiver: cannot listen on 127.0.0.1:${receiver.port}: the port is in use`);
    expect(stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it("--help prints the usage and exits 0", async () => {
    spawned = spawnNode("dist/receiver.js", ["--help"], {});
    expect(await spawned.exited).toBe(0);
    expect(spawned.lines.join("\n")).toContain("usage: npm run receiver -- [--port <port>] [--host <host>]");
  });
});
