import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { configDocument } from "../../support/configs.js";
import { freePort } from "../../support/free-port.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../../support/spawn-node.js";

const SECRET = "idempotent-secret-12345";
let spawned: Spawned | undefined;

afterEach(() => {
  spawned?.child.kill("SIGKILL");
  spawned = undefined;
});

/** POSTs `body` with `key` as its `Idempotency-Key`; the status and the parsed answer. */
async function send(url: string, key: string, body: string): Promise<{ status: number; json: unknown }> {
  const response = await fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json", "idempotency-key": key },
    body,
  });
  return { status: response.status, json: await response.json() };
}

describe("an Idempotency-Key with state_dir, across kill -9", () => {
  it("still refuses the key with another body 422, and answers the first body with the first message_id", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "webhook-channel-state-"));
    // Nothing listens there: the message stays unfinished in the state file.
    const config = await writeTempConfig(
      configDocument(
        { bind: "127.0.0.1:0", outbound_url: `http://127.0.0.1:${await freePort()}/replies` },
        { state_dir: stateDir },
      ),
    );
    const first = '{"sender_id":"a","text":"order 17"}';
    spawned = spawnNode("dist/node.js", ["--config", config], { WEBHOOK_SECRET: SECRET });
    const accepted = await send(await listeningUrl(spawned), "order-17", first);
    expect(accepted.status).toBe(200);
    spawned.child.kill("SIGKILL");
    await spawned.exited;

    spawned = spawnNode("dist/node.js", ["--config", config], { WEBHOOK_SECRET: SECRET });
    const url = await listeningUrl(spawned);
    const other = await send(url, "order-17", '{"sender_id":"a","text":"order 18"}');
    expect(other.status).toBe(422);
    expect(other.json).toMatchObject({ code: "idempotency_key_reused" });
    const retry = await send(url, "order-17", first);
    expect(retry).toEqual(accepted);
  });
});
