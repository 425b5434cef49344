// A SIGHUP while `postgres_url_env`'s value (here from `<NAME>_FILE`) names another database, or
// carries a rotated password: the pool was opened with the start's URL, so the reload is refused
// as a change that needs a restart, and the service goes on with the database it has.
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type ReceivedReply, type Receiver, startReceiver } from "../../../src/node/receiver/sample-receiver.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../../support/spawn-node.js";
import { waitFor } from "../../support/wait-for.js";
import { migratedDatabase } from "../state/postgres/fresh-postgres.js";

const SECRET = "abcdefghijklmnopqrstuvwxyz0123456789AB";
let spawned: Spawned | undefined;
let receiver: Receiver | undefined;

afterEach(async () => {
  spawned?.child.kill("SIGKILL");
  await receiver?.close();
  spawned = undefined;
  receiver = undefined;
});

type LogLine = { level: string; msg: string } & Record<string, unknown>;
const logLines = (process: Spawned): LogLine[] => process.lines.map((line) => JSON.parse(line) as LogLine);

describe("a reload with another Postgres URL", () => {
  it("is refused as needing a restart, and the service keeps the database it started with", async () => {
    const first = await migratedDatabase();
    const second = await migratedDatabase();
    const replies: ReceivedReply[] = [];
    receiver = await startReceiver({ port: 0, onReply: (reply) => replies.push(reply) });
    const urlFile = join(await mkdtemp(join(tmpdir(), "webhook-channel-pg-url-")), "database-url");
    await writeFile(urlFile, `${first.url}\n`);
    const config = await writeTempConfig({
      channels: [
        { type: "webhook", token_env: "WEBHOOK_SECRET", webhook: { bind: "127.0.0.1:0", outbound_url: receiver.url } },
      ],
      routes: [{ channel: "webhook", brain: "echo" }],
      postgres_url_env: "DATABASE_URL",
      shutdown_timeout_ms: 2_000,
    });
    const running = spawnNode("dist/node.js", ["--config", config], {
      WEBHOOK_SECRET: SECRET,
      DATABASE_URL_FILE: urlFile,
    });
    spawned = running;
    const url = await listeningUrl(running);

    await writeFile(urlFile, `${second.url}\n`);
    const before = running.lines.length;
    running.child.kill("SIGHUP");
    const verdict = await waitFor(
      () =>
        logLines(running)
          .slice(before)
          .find((line) => line.msg === "configuration reloaded" || line.msg.startsWith("reload refused")),
      10_000,
      "the reload's verdict",
    );
    expect(verdict).toMatchObject({
      level: "error",
      msg: expect.stringContaining("change only with a restart"),
      keys: ["postgres_url_env (the value of DATABASE_URL)"],
    });
    expect(JSON.stringify(verdict)).not.toContain(second.url);

    const response = await fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" },
      body: JSON.stringify({ sender_id: "alice", text: "after the reload" }),
    });
    expect(response.status).toBe(200);
    await waitFor(() => replies[0], 10_000, "the reply");
    const lanes = async (database: typeof first) =>
      Number((await database.pool.query<{ n: string }>("SELECT count(*) AS n FROM webhook_channel.lanes")).rows[0]?.n);
    expect({ first: await lanes(first), second: await lanes(second) }).toEqual({ first: 1, second: 0 });
  });
});
