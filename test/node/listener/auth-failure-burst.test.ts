/**
 * Guesses sent at once, on connections opened beforehand, against the auth-failure limit: in
 * memory the limit is the process's own, and with Postgres (shared by replicas, its answers
 * later) the process's own count stands in front of the shared one. Either way no more than
 * `max` wrong secrets are compared (answered 401) in a window; the rest are refused (429).
 */
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type ServiceHarness, startHarness } from "../../support/node-service.js";
import { emptyDatabase } from "../state/postgres/fresh-postgres.js";

let harness: ServiceHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** Opens `count` connections, then sends one request on each at once; each answer's status. */
async function burst(port: number, count: number, request: (index: number) => string): Promise<number[]> {
  const sockets = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<net.Socket>((resolve, reject) => {
          const socket = net.connect(port, "127.0.0.1", () => resolve(socket));
          socket.once("error", reject);
        }),
    ),
  );
  const answers = sockets.map(
    (socket) =>
      new Promise<number>((resolve) => {
        let data = "";
        socket.on("data", (chunk: Buffer) => {
          data += chunk.toString("latin1");
          const status = /^HTTP\/1\.1 (\d{3})/.exec(data);
          if (status !== null) {
            resolve(Number(status[1]));
            socket.destroy();
          }
        });
        socket.on("close", () => resolve(0));
      }),
  );
  sockets.forEach((socket, index) => {
    socket.write(request(index));
  });
  return Promise.all(answers);
}

const body = JSON.stringify({ sender_id: "u1", text: "x" });
const guess = (secret: string): string =>
  `POST /webhook HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${secret}\r\n` +
  `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

describe("guesses sent at once", () => {
  it.each([
    ["in memory", false],
    ["with Postgres", true],
  ])("are compared at most auth_failure_limit.max times per window (%s)", async (_, onPostgres) => {
    const limit = { auth_failure_limit: { max: 2, window_s: 60 } };
    harness = onPostgres
      ? await startHarness(limit, {}, { postgres_url_env: "DATABASE_URL" }, { DATABASE_URL: await emptyDatabase() })
      : await startHarness(limit);
    const port = Number(new URL(harness.baseUrl).port);
    const statuses = await burst(port, 60, (index) => guess(`wrong-guess-${index}`));
    expect(statuses.filter((status) => status === 401)).toHaveLength(2);
    expect(statuses.filter((status) => status === 429)).toHaveLength(58);
  });
});
