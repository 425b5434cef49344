/**
 * A database that cannot be reached: writes refuse with `state_unavailable`, `writeProblem`
 * says why, and everything works again once it answers, without a restart. The shared cluster
 * is never stopped: the connection goes through a TCP proxy of the test's own, which is cut
 * (its listener closed, its connections destroyed) and restored on the same port.
 */
import { connect, createServer, type Server, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { ChannelError } from "../../../../src/core/channel-error.js";
import { systemClock } from "../../../../src/core/clock.js";
import type { Job } from "../../../../src/core/lifecycle/job.js";
import { openPostgresBackend } from "../../../../src/node/state/postgres/postgres-backend.js";
import { createPostgresLaneStore } from "../../../../src/node/state/postgres/postgres-lane-store.js";
import { freePort } from "../../../support/free-port.js";
import { createLogSink } from "../../../support/log-sink.js";
import { waitFor } from "../../../support/wait-for.js";
import { emptyDatabase, poolOn } from "./fresh-postgres.js";
import { claimTicket, storedJob } from "./lane-tickets.js";

/** A TCP proxy on a fixed loopback port to `target`, which can be cut and restored. */
async function tcpProxy(target: number) {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  const listen = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const next = createServer((client) => {
        const upstream = connect(target, "127.0.0.1");
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on("close", () => sockets.delete(socket));
          socket.on("error", () => undefined);
        }
        client.pipe(upstream).pipe(client);
      });
      next.once("error", reject);
      next.listen(port, "127.0.0.1", () => resolve());
      server = next;
    });
  await listen();
  return {
    port,
    async cut() {
      const closing = server;
      server = undefined;
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => (closing === undefined ? resolve() : closing.close(() => resolve())));
    },
    restore: listen,
  };
}

function job(): Job {
  return {
    message: {
      id: crypto.randomUUID(),
      channel: "webhook",
      receivedAt: Date.now(),
      message: { senderId: "u1", conversationId: "c1", text: "hello" },
    },
    delivered: 0,
    attempts: 0,
  };
}

async function refusal(write: Promise<unknown>): Promise<ChannelError> {
  const error: unknown = await write.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  if (!(error instanceof ChannelError)) throw new Error(`expected a ChannelError, got ${String(error)}`);
  return error;
}

describe("Postgres unreachable", () => {
  it("a write to a port where nothing listens rejects with state_unavailable, 503, Retry-After", async () => {
    const url = `postgres://webhook:secret-password@127.0.0.1:${await freePort()}/nothing`;
    const store = createPostgresLaneStore(poolOn(url), "runreachable", createLogSink().logger);
    const error = await refusal(store.add(job()));
    expect(error).toMatchObject({ code: "state_unavailable", status: 503, retryable: true, retryAfterSeconds: 5 });
    expect(error.cause).toBeDefined();
    const { logger, lines } = createLogSink();
    await expect(openPostgresBackend(url, logger, systemClock)).rejects.toThrow(
      /^cannot open the postgres state \(webhook@127\.0\.0\.1:\d+\/nothing\): connect ECONNREFUSED/,
    );
    expect(JSON.stringify(lines)).not.toContain("secret-password");
  });

  it("refuses writes while the database is cut off, says so, and recovers by itself when it is back", async () => {
    const direct = new URL(await emptyDatabase());
    const proxy = await tcpProxy(Number(direct.port));
    const through = new URL(direct);
    through.port = String(proxy.port);
    const { logger, lines } = createLogSink();
    const backend = await openPostgresBackend(through.toString(), logger, systemClock);
    try {
      const kept = job();
      const finished = job();
      await backend.lanes.add(kept);
      await backend.lanes.add(finished);
      const ticket = await claimTicket(backend.postgres.pool, backend.postgres.replica, finished);
      expect(backend.writeProblem()).toBeUndefined();

      await proxy.cut();
      const error = await refusal(backend.postgres.lanes.add(job()));
      expect(error).toMatchObject({ code: "state_unavailable", status: 503, retryAfterSeconds: 5 });
      // A finished job's delete fails too, and is retried.
      expect(await refusal(Promise.resolve(backend.postgres.lanes.finish(ticket, finished)))).toMatchObject({
        code: "state_unavailable",
      });
      expect(await waitFor(() => backend.writeProblem(), 5_000, "the probe to fail")).toMatch(
        /^postgres unreachable: /,
      );
      expect(lines).toContainEqual(expect.objectContaining({ level: "error", msg: "postgres cannot take writes" }));

      await proxy.restore();
      await waitFor(() => (backend.writeProblem() === undefined ? true : undefined), 5_000, "the probe to succeed");
      const after = job();
      await backend.postgres.lanes.add(after);
      // Nothing accepted before is lost.
      expect(await storedJob(backend.postgres.pool, kept.message.id)).toEqual(kept);
      expect(await storedJob(backend.postgres.pool, after.message.id)).toEqual(after);
      const others = poolOn(direct.toString());
      await waitFor(
        async () =>
          (await others.query("SELECT 1 FROM webhook_channel.jobs WHERE id = $1", [finished.message.id])).rowCount === 0
            ? true
            : undefined,
        5_000,
        "the finished job's delete to be retried",
      );
    } finally {
      await backend.close();
      await proxy.cut();
    }
  });
});

describe("openPostgresPool", () => {
  it("honours the URL's TLS parameters (sslmode), and names its sessions", async () => {
    const plain = await emptyDatabase();
    // The test cluster speaks no TLS: a URL that asks for it must fail, not fall back to plain text.
    // verify-full, as the docs advise: pg warns at the other modes that ask for TLS.
    const tls = new URL(plain);
    tls.searchParams.set("sslmode", "verify-full");
    await expect(poolOn(tls.toString()).query("SELECT 1")).rejects.toThrow(/does not support SSL/);
    const disabled = new URL(plain);
    disabled.searchParams.set("sslmode", "disable");
    const named = await poolOn(disabled.toString()).query<{ name: string }>(
      "SELECT current_setting('application_name') AS name",
    );
    expect(named.rows[0]?.name).toBe("webhook-channel");
  });
});
