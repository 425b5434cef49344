import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type ReceivedReply, type Receiver, startReceiver } from "../../../src/node/receiver/sample-receiver.js";
import { runService } from "../../../src/node/run-service.js";
import { configDocument } from "../../support/configs.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../../support/spawn-node.js";
import { waitFor } from "../../support/wait-for.js";

const SECRET = "file-secret-0123456789";
const RECEIVER_TOKEN = "receiver-token-abcdef";
let spawned: Spawned | undefined;
let receiver: Receiver | undefined;

afterEach(async () => {
  spawned?.child.kill("SIGKILL");
  await receiver?.close();
  spawned = undefined;
  receiver = undefined;
});

async function secretFile(content: string): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), "webhook-channel-secret-"));
  const file = join(folder, "secret");
  await writeFile(file, content);
  return file;
}

/** Runs the service in this process until it fails to start; its log lines, as text. */
async function failedStart(config: string, env: Record<string, string>): Promise<{ code: number; log: string }> {
  const lines: string[] = [];
  const code = await runService({ configPath: config, env, write: (line) => lines.push(line) });
  return { code, log: lines.join("\n") };
}

function post(url: string, secret: string): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    body: JSON.stringify({ sender_id: "alice", text: "hi" }),
  });
}

describe("secrets read from <NAME>_FILE at start", () => {
  it.each([
    ["on the main thread", false],
    ["with delivery_thread", true],
  ])(
    "takes the inbound secret and the outbound token from files, without the trailing newline (%s)",
    async (_, thread) => {
      const replies: ReceivedReply[] = [];
      receiver = await startReceiver({ port: 0, onReply: (reply) => replies.push(reply) });
      const config = await writeTempConfig(
        configDocument(
          { bind: "127.0.0.1:0", outbound_url: receiver.url, outbound_token_env: "RECEIVER_TOKEN" },
          { delivery_thread: thread },
        ),
      );
      spawned = spawnNode("dist/node.js", ["--config", config], {
        WEBHOOK_SECRET_FILE: await secretFile(`${SECRET}\n`),
        RECEIVER_TOKEN_FILE: await secretFile(`${RECEIVER_TOKEN}\r\n`),
      });
      const url = await listeningUrl(spawned);
      expect((await post(url, SECRET)).status).toBe(200);
      const reply = await waitFor(() => replies[0], 10_000, "the reply");
      expect(reply.headers.authorization).toBe(`Bearer ${RECEIVER_TOKEN}`);
      const log = spawned.lines.join("\n");
      expect(log).not.toContain(SECRET);
      expect(log).not.toContain(RECEIVER_TOKEN);
    },
  );

  it("refuses to start when a secret's file is missing, naming the variable and the path", async () => {
    const config = await writeTempConfig(configDocument({ bind: "127.0.0.1:0" }));
    const missing = join(await mkdtemp(join(tmpdir(), "webhook-channel-secret-")), "nope");
    const { code, log } = await failedStart(config, { WEBHOOK_SECRET_FILE: missing });
    expect(code).toBe(1);
    expect(log).toContain(
      `cannot read WEBHOOK_SECRET from the file ${missing} named by WEBHOOK_SECRET_FILE: no such file`,
    );
  });

  it("refuses to start when a brain's key file cannot be read, naming it and never the other secrets", async () => {
    const folder = await mkdtemp(join(tmpdir(), "webhook-channel-secret-"));
    const config = await writeTempConfig(
      configDocument(
        { bind: "127.0.0.1:0" },
        {
          routes: [{ channel: "webhook", brain: "bot" }],
          brains: {
            bot: { type: "openai", model: "m", base_url: "http://127.0.0.1:11434/v1", api_key_env: "BOT_KEY" },
          },
        },
      ),
    );
    const { code, log } = await failedStart(config, { WEBHOOK_SECRET: SECRET, BOT_KEY_FILE: folder });
    expect(code).toBe(1);
    expect(log).toContain(`cannot read BOT_KEY from the file ${folder} named by BOT_KEY_FILE: it is a directory`);
    expect(log).not.toContain(SECRET);
  });

  it("refuses to start when the inbound secret's file is empty, saying which file", async () => {
    const empty = await secretFile("\n");
    const config = await writeTempConfig(configDocument({ bind: "127.0.0.1:0" }));
    const { code, log } = await failedStart(config, { WEBHOOK_SECRET_FILE: empty });
    expect(code).toBe(1);
    expect(log).toContain(`the file ${empty} named by WEBHOOK_SECRET_FILE is empty`);
  });
});
