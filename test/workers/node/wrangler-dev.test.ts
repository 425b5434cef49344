import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { createRequire } from "node:module";
import { createServer as createNetServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  caseRequest,
  checkAnswer,
  INBOUND_CASES,
  INBOUND_CASES_CONFIG,
  INBOUND_CASES_SECRET,
  INBOUND_CASES_SECRET_ENV,
} from "../../shared/inbound-cases.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../../..");
const WRANGLER = join(dirname(createRequire(import.meta.url).resolve("wrangler/package.json")), "bin/wrangler.js");

/** One POST the receiver got. */
interface Received {
  readonly path: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Record<string, unknown>;
}

let receiver: Server;
let receiverPort = 0;
const received: Received[] = [];
let wrangler: ChildProcess | undefined;
let output = "";
let origin = "";
let workDir = "";

/** A port that was free a moment ago (wrangler needs a number, not 0). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createNetServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (wrangler?.exitCode !== null && wrangler?.exitCode !== undefined) {
      throw new Error(`wrangler dev exited (${wrangler.exitCode}) while waiting for ${what}:\n${output}`);
    }
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; wrangler dev said:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function stopWrangler(): Promise<void> {
  const child = wrangler;
  if (child?.pid === undefined || child.exitCode !== null) return Promise.resolve();
  const pid = child.pid;
  return new Promise((resolve) => {
    const kill = setTimeout(() => {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }, 5000);
    child.once("exit", () => {
      clearTimeout(kill);
      resolve();
    });
    // The whole process group: wrangler and the workerd it started.
    try {
      process.kill(-pid, "SIGTERM");
    } catch {
      clearTimeout(kill);
      resolve();
    }
  });
}

beforeAll(async () => {
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      received.push({
        path: request.url ?? "",
        headers: request.headers,
        body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>,
      });
      response.writeHead(204).end();
    });
  });
  receiverPort = await new Promise<number>((resolve) => {
    receiver.listen(0, "127.0.0.1", () => {
      const address = receiver.address();
      resolve(typeof address === "object" && address !== null ? address.port : 0);
    });
  });

  // The bundled config.json cannot know the receiver's port: CONFIG_JSON replaces it, as
  // the README describes. --env-file also keeps a developer's .dev.vars out of the test.
  workDir = await mkdtemp(join(tmpdir(), "webhook-channel-e2e-"));
  const outbound = `http://127.0.0.1:${receiverPort}/replies`;
  const config = {
    ...INBOUND_CASES_CONFIG,
    channels: INBOUND_CASES_CONFIG.channels.map((channel) => ({
      ...channel,
      webhook: { ...channel.webhook, outbound_url: outbound },
    })),
  };
  const envFile = join(workDir, "test.env");
  await writeFile(
    envFile,
    `${INBOUND_CASES_SECRET_ENV}=${INBOUND_CASES_SECRET}\nCONFIG_JSON='${JSON.stringify(config)}'\n`,
  );

  const port = await freePort();
  const inspectorPort = await freePort();
  origin = `http://127.0.0.1:${port}`;
  wrangler = spawn(
    process.execPath,
    [
      WRANGLER,
      "dev",
      "--config",
      join(ROOT, "wrangler.toml"),
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--inspector-port",
      String(inspectorPort),
      "--persist-to",
      join(workDir, "state"),
      "--env-file",
      envFile,
      "--show-interactive-dev-session=false",
    ],
    {
      cwd: ROOT,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        CI: "true",
        NO_COLOR: "1",
        WRANGLER_SEND_METRICS: "false",
        WRANGLER_HIDE_BANNER: "true",
        WRANGLER_LOG_PATH: join(workDir, "logs"),
        // No network in CI: do not try to download the Request.cf data.
        CLOUDFLARE_CF_FETCH_ENABLED: "false",
      },
    },
  );
  wrangler.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8");
  });
  wrangler.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8");
  });

  await waitFor(
    "GET /healthz",
    async () => {
      try {
        const response = await fetch(`${origin}/healthz`);
        return response.status === 200 ? true : undefined;
      } catch {
        return undefined;
      }
    },
    40_000,
  );
}, 60_000);

afterAll(async () => {
  await stopWrangler();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
  if (workDir !== "") await rm(workDir, { recursive: true, force: true });
});

describe("wrangler dev, end to end", () => {
  it("accepts a message with the Bearer secret and POSTs the reply to the receiver", async () => {
    const response = await fetch(`${origin}/webhook`, {
      method: "POST",
      headers: { authorization: `Bearer ${INBOUND_CASES_SECRET}`, "content-type": "application/json" },
      body: JSON.stringify({ sender_id: "e2e-user", text: "hello from the e2e test", conversation_id: "e2e-1" }),
    });
    expect(response.status).toBe(200);
    const accepted = (await response.json()) as { status: string; message_id: string; conversation_id: string };
    expect(accepted).toMatchObject({ status: "accepted", conversation_id: "e2e-1" });

    const reply = await waitFor(
      "the reply at the receiver",
      () => received.find((entry) => entry.body.in_reply_to === accepted.message_id),
      20_000,
    );
    expect(reply.path).toBe("/replies");
    expect(reply.headers["content-type"]).toBe("application/json");
    expect(reply.headers["user-agent"]).toMatch(/^webhook-channel\//);
    expect(reply.headers["webhook-id"]).toBe(reply.body.message_id);
    expect(reply.body).toMatchObject({
      conversation_id: "e2e-1",
      recipient_id: "e2e-user",
      text: "hello from the e2e test",
      brain: "echo",
      sequence: 1,
    });
    expect(String(reply.body.created_at)).toMatch(/Z$/);
  });

  it("holds to the shared inbound cases over real sockets", async () => {
    const failures: string[] = [];
    for (const testCase of INBOUND_CASES) {
      const problem = await checkAnswer(await fetch(caseRequest(origin, testCase.request)), testCase.expect);
      if (problem !== undefined) failures.push(`${testCase.name}: ${problem}`);
    }
    expect(failures).toEqual([]);
  });
});
