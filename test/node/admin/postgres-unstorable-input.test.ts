/**
 * Input Postgres cannot hold or compare (U+0000 in text, a number past bigint) is the client's
 * own mistake: answered 400 or 404 like on every other backend, never 503 `state_unavailable`
 * with `Retry-After`, which a client or a script retries for ever. Found on a real cluster.
 */
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { encodeCursor } from "../../../src/core/admin/dead-letter-cursor.js";
import { type ServiceHarness, startHarness } from "../../support/node-service.js";
import { createTestDatabase } from "../../support/postgres-cluster.js";

const ADMIN = "admin-secret-for-postgres-0123456789";
let harness: ServiceHarness | undefined;

beforeAll(async () => {
  const url = await createTestDatabase(inject("postgresUrl"));
  harness = await startHarness(
    {},
    {},
    { postgres_url_env: "DATABASE_URL", admin: { token_env: "ADMIN_SECRET" } },
    { DATABASE_URL: url, ADMIN_SECRET: ADMIN },
  );
});

afterAll(async () => {
  await harness?.close();
});

function service(): ServiceHarness {
  if (harness === undefined) throw new Error("the service did not start");
  return harness;
}

async function ask(method: string, path: string, body?: unknown) {
  const response = await fetch(`${service().baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, code: text === "" ? undefined : (JSON.parse(text) as { code?: string }).code };
}

const FAR = encodeCursor({ diedAt: 1e20, id: "x" });
const NUL_ID = encodeCursor({ diedAt: 1, id: "a\u0000b" });

it.each([
  ["GET", `/admin/dead-letters?cursor=${FAR}`, 400],
  ["GET", `/admin/messages?cursor=${FAR}`, 400],
  ["GET", `/admin/dead-letters?cursor=${NUL_ID}`, 400],
  ["GET", "/admin/dead-letters?channel=a%00b", 400],
  ["GET", "/admin/messages?conversation_id=a%00b", 400],
  ["GET", "/admin/messages?channel=a%00b", 400],
  ["GET", "/admin/dead-letters/a%00b", 404],
  ["DELETE", "/admin/dead-letters/a%00b", 404],
  ["POST", "/admin/dead-letters/a%00b/replay", 404],
  ["GET", "/admin/messages/a%00b", 404],
] as const)("%s %s answers %i", async (method, path, status) => {
  expect(await ask(method, path)).toEqual({ status, code: status === 400 ? "invalid_message" : "not_found" });
});

it.each<[Record<string, unknown>]>([[{ ids: ["a\u0000b"] }], [{ channel: "a\u0000b" }]])(
  "refuses a bulk replay of %j",
  async (body) => {
    expect(await ask("POST", "/admin/dead-letters/replay", body)).toEqual({ status: 400, code: "invalid_message" });
  },
);

it("refuses a message whose sender_id or conversation_id holds U+0000 with a 400 naming it", async () => {
  for (const body of [
    { sender_id: "a\u0000b", text: "hi" },
    { sender_id: "s", conversation_id: "c\u0000", text: "hi" },
  ]) {
    const response = await service().post(body);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: "invalid_message" });
  }
});
