/**
 * With `state_dir`, a SIGTERM while the start's resume is still loading a backlog larger than the
 * buffer: the stored messages were accepted too, so the stop goes on loading and running them
 * while its time lasts, and says it finished everything only when nothing is left stored.
 */
import { mkdtemp } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { configDocument } from "../../support/configs.js";
import { freePort } from "../../support/free-port.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../../support/spawn-node.js";

const SECRET = "stop-during-resume-0123456789";
const processes: Spawned[] = [];
let receiver: Server | undefined;

afterEach(async () => {
  for (const spawned of processes.splice(0)) spawned.child.kill("SIGKILL");
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
  receiver = undefined;
});

type Line = { msg: string; count?: number; more?: boolean };
const parsed = (spawned: Spawned): Line[] => spawned.lines.map((line) => JSON.parse(line) as Line);

describe("a stop during a resume larger than the buffer", () => {
  it("loads and runs the rest of the stored messages while its time lasts", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "webhook-channel-stop-resume-"));
    const port = await freePort();
    const config = (capacity: number) =>
      writeTempConfig(
        configDocument(
          {
            bind: "127.0.0.1:0",
            outbound_url: `http://127.0.0.1:${port}/replies`,
            buffer_capacity: capacity,
            delivery: { initial_delay_ms: 50, max_delay_ms: 200, max_attempts: 1000 },
          },
          { state_dir: stateDir, shutdown_timeout_ms: 30_000 },
        ),
      );
    const start = async (capacity: number): Promise<{ spawned: Spawned; url: string }> => {
      const spawned = spawnNode("dist/node.js", ["--config", await config(capacity)], { WEBHOOK_SECRET: SECRET });
      processes.push(spawned);
      return { spawned, url: await listeningUrl(spawned) };
    };
    // Twenty messages stored while no receiver listens, then the process killed.
    const first = await start(50);
    for (let index = 0; index < 20; index += 1) {
      const response = await fetch(first.url, {
        method: "POST",
        headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" },
        body: JSON.stringify({ sender_id: "u1", text: `m${index}` }),
      });
      expect(response.status).toBe(200);
    }
    first.spawned.child.kill("SIGKILL");
    await first.spawned.exited;

    const texts = new Set<string>();
    const server = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk: Buffer) => {
        body += chunk.toString();
      });
      request.on("end", () => {
        texts.add(String((JSON.parse(body) as { text?: unknown }).text));
        response.writeHead(200).end();
      });
    });
    receiver = server;
    await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    const second = await start(5);
    expect(parsed(second.spawned).find((line) => line.msg === "resumed unfinished messages from state_dir")?.more).toBe(
      true,
    );
    second.spawned.child.kill("SIGTERM");
    expect(await second.spawned.exited).toBe(0);
    expect(texts.size).toBe(20);
    expect(
      parsed(second.spawned).some((line) => line.msg === "shutdown complete: every accepted message was finished"),
    ).toBe(true);
  }, 60_000);
});
