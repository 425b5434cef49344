/**
 * `--bind <host:port>` (or WEBHOOK_CHANNEL_BIND): one configuration file for several replicas on
 * one host, each listening where its command line says.
 */
import { afterEach, describe, expect, it } from "vitest";
import { configDocument } from "../support/configs.js";
import { freePort } from "../support/free-port.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../support/spawn-node.js";

const SECRET = "bind-secret-0123456789abcdefghijklmnop";
let spawned: Spawned[] = [];

afterEach(async () => {
  for (const process of spawned) process.child.kill("SIGKILL");
  await Promise.all(spawned.map((process) => process.exited));
  spawned = [];
});

describe("--bind", () => {
  it("lets two services of one configuration listen on ports of their own, by flag or by variable", async () => {
    const config = await writeTempConfig(configDocument({ bind: "127.0.0.1:8090" }));
    const [first, second] = [await freePort(), await freePort()];
    spawned = [
      spawnNode("dist/node.js", ["--config", config, "--bind", `127.0.0.1:${first}`], { WEBHOOK_SECRET: SECRET }),
      spawnNode("dist/node.js", ["--config", config], {
        WEBHOOK_SECRET: SECRET,
        WEBHOOK_CHANNEL_BIND: `127.0.0.1:${second}`,
      }),
    ];
    const urls = await Promise.all(spawned.map((process) => listeningUrl(process)));
    expect(urls).toEqual([`http://127.0.0.1:${first}/webhook`, `http://127.0.0.1:${second}/webhook`]);
    for (const url of urls) expect((await fetch(`${new URL(url).origin}/healthz`)).status).toBe(200);
  });

  it("refuses a bind that is not host:port, naming the key it stands for", async () => {
    const config = await writeTempConfig(configDocument());
    const process = spawnNode("dist/node.js", ["--config", config, "--bind", "nowhere"], { WEBHOOK_SECRET: SECRET });
    spawned = [process];
    expect(await process.exited).toBe(1);
    expect(process.lines.join("\n")).toMatch(/channels\[0\]\.webhook\.bind/);
  });
});
