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

  it.each([
    ["--bind", ["--bind", "nonsense"], {}],
    ["WEBHOOK_CHANNEL_BIND", [], { WEBHOOK_CHANNEL_BIND: "nonsense" }],
  ])("refuses a bad value of %s, naming it and not the file", async (source, args, env) => {
    const config = await writeTempConfig(configDocument());
    const process = spawnNode("dist/node.js", ["--config", config, ...args], { WEBHOOK_SECRET: SECRET, ...env });
    spawned = [process];
    expect(await process.exited).toBe(1);
    const errors = process.lines.map((line) => JSON.parse(line) as { level: string; msg: string });
    expect(errors).toEqual([
      {
        time: expect.any(String),
        level: "error",
        msg: `invalid ${source}: "nonsense" must be "host:port" with a port from 0 to 65535, e.g. "127.0.0.1:8090" or "[::1]:8090". Fix: correct ${source}, which every channel listens on instead of its webhook.bind${source === "--bind" ? "" : ", or unset it to keep the file's binds"}`,
      },
    ]);
  });

  it("takes --bind over WEBHOOK_CHANNEL_BIND, so that a bad variable is not in the way of a good flag", async () => {
    const config = await writeTempConfig(configDocument());
    const port = await freePort();
    const process = spawnNode("dist/node.js", ["--config", config, "--bind", `127.0.0.1:${port}`], {
      WEBHOOK_SECRET: SECRET,
      WEBHOOK_CHANNEL_BIND: "nonsense",
    });
    spawned = [process];
    expect(await listeningUrl(process)).toBe(`http://127.0.0.1:${port}/webhook`);
  });
});
