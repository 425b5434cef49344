import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SECRET, type ServiceHarness, startHarness } from "../../support/node-service.js";
import { waitFor } from "../../support/wait-for.js";
import { ADMIN, adminRequest, listDeadLetters, makeDeadLetters } from "./admin-requests.js";

let harness: ServiceHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** A service whose receiver refuses (400) until `accepting.on` is set, with the admin API on. */
async function start(stateDir: boolean, admin: Record<string, unknown> = {}) {
  const accepting = { on: false };
  const extra: Record<string, unknown> = { admin: { token_env: "ADMIN_SECRET", ...admin } };
  if (stateDir) extra.state_dir = await mkdtemp(join(tmpdir(), "webhook-channel-admin-"));
  harness = await startHarness({ delivery: { max_attempts: 1 } }, { status: () => (accepting.on ? 200 : 400) }, extra, {
    ADMIN_SECRET: ADMIN,
  });
  return { harness, accepting };
}

function admin(path: string, init: RequestInit = {}, secret = ADMIN): Promise<Response> {
  if (harness === undefined) throw new Error("no service started");
  return adminRequest(harness, path, init, secret);
}

function list(query = ""): ReturnType<typeof listDeadLetters> {
  if (harness === undefined) throw new Error("no service started");
  return listDeadLetters(harness, query);
}

describe("admin API off", () => {
  it("answers 404 on every /admin/ path without admin.token_env", async () => {
    harness = await startHarness();
    for (const path of ["/admin/dead-letters", "/admin/dead-letters/x", "/admin/"]) {
      const response = await admin(path);
      expect(response.status).toBe(404);
      expect(response.headers.get("content-type")).toContain("application/problem+json");
    }
  });
});

describe("admin API start", () => {
  it("refuses to start when admin.token_env is configured but unset", async () => {
    await expect(startHarness({}, {}, { admin: { token_env: "ADMIN_SECRET" } }, {})).rejects.toThrow(
      /ADMIN_SECRET \(admin.token_env\) is not set/,
    );
  });

  it("refuses to start with an admin secret beyond ASCII, which Node and Workers would read apart", async () => {
    await expect(
      startHarness({}, {}, { admin: { token_env: "ADMIN_SECRET" } }, { ADMIN_SECRET: "s\u00e9cret-admin-0123456789" }),
    ).rejects.toThrow(/ADMIN_SECRET \(admin.token_env\) contains characters an HTTP header cannot carry/);
  });
});

describe.each([
  ["in memory", false],
  ["with state_dir", true],
])("admin API %s", (_name, stateDir) => {
  it("refuses requests without the admin secret, with a wrong one and with a channel secret", async () => {
    await start(stateDir);
    const none = await fetch(`${harness?.baseUrl}/admin/dead-letters`);
    expect(none.status).toBe(401);
    expect(((await none.json()) as { type: string }).type).toMatch(/#error-unauthorized$/);
    expect((await admin("/admin/dead-letters", {}, "wrong-secret")).status).toBe(401);
    expect((await admin("/admin/dead-letters", {}, SECRET)).status).toBe(401);
    expect((await admin("/admin/dead-letters/unknown", { method: "DELETE" }, SECRET)).status).toBe(401);
  });

  it("lists a dead letter with the documented shape, and gets it by id", async () => {
    const { harness: h } = await start(stateDir);
    const [id] = await makeDeadLetters(h, ["hello"]);
    const page = await list();
    expect(page.next_cursor).toBeNull();
    const item = page.items[0];
    expect(Object.keys(item ?? {}).sort()).toEqual(
      [
        "attempts",
        "channel",
        "conversation_id",
        "error",
        "failed_at",
        "id",
        "message",
        "message_id",
        "replies",
        "stage",
      ].sort(),
    );
    expect(item).toMatchObject({
      id,
      channel: "webhook",
      conversation_id: "conv-hello",
      message_id: id,
      attempts: 1,
      stage: "reply",
      error: { code: expect.any(String), message: expect.any(String), status: 400 },
      message: { sender_id: "user-hello", text: "hello" },
    });
    expect(item?.failed_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(item?.replies).toEqual([expect.objectContaining({ delivered: false })]);
    const one = await admin(`/admin/dead-letters/${id}`);
    expect(one.status).toBe(200);
    expect(await one.json()).toEqual(item);
    // A dead letter holds message text: no cache may keep it.
    expect(one.headers.get("cache-control")).toBe("no-store");
    expect((await admin("/admin/dead-letters")).headers.get("cache-control")).toBe("no-store");
    const unknown = await admin("/admin/dead-letters/no-such-id");
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("content-type")).toContain("application/problem+json");
    expect(unknown.headers.get("cache-control")).toBe("no-store");
  });

  it("pages oldest first with limit and next_cursor, and refuses a bad limit or cursor", async () => {
    const { harness: h } = await start(stateDir);
    const ids = await makeDeadLetters(h, ["a", "b"]);
    const first = await list("?limit=1");
    expect(first.items.map((item) => item.id)).toEqual([ids[0]]);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await list(`?limit=1&cursor=${first.next_cursor}`);
    expect(second.items.map((item) => item.id)).toEqual([ids[1]]);
    expect(second.next_cursor).toBeNull();
    expect((await list("?channel=other")).items).toEqual([]);
    for (const query of ["limit=0", "limit=501", "limit=x", "cursor=not-one-of-ours", "cursor=a%2Fb"]) {
      const response = await admin(`/admin/dead-letters?${query}`);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { type: string }).type).toMatch(/#error-invalid_message$/);
    }
  });

  it("replays one dead letter: the same reply (same webhook-id) is posted again with the conversation's next sequence, and it leaves the list", async () => {
    const { harness: h, accepting } = await start(stateDir);
    const [id] = await makeDeadLetters(h, ["again"]);
    const firstTry = h.replies.at(-1);
    accepting.on = true;
    const before = h.replies.length;
    const response = await admin(`/admin/dead-letters/${id}/replay`, { method: "POST" });
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ replayed: 1 });
    const again = await waitFor(() => h.replies[before], 5_000, "the replayed reply");
    expect(again.headers["webhook-id"]).toBe(firstTry?.headers["webhook-id"]);
    // Byte for byte the same reply but for its place in the conversation: it joined the end of the lane.
    const first = JSON.parse(firstTry?.raw ?? "{}") as Record<string, unknown>;
    expect(JSON.parse(again.raw)).toEqual({ ...first, sequence: Number(first.sequence) + 1 });
    expect((await list()).items).toEqual([]);
    expect((await admin(`/admin/dead-letters/${id}/replay`, { method: "POST" })).status).toBe(404);
  });

  it("replays in bulk by channel, and deletes one (204, then 404)", async () => {
    const { harness: h, accepting } = await start(stateDir);
    const ids = await makeDeadLetters(h, ["x", "y", "z"]);
    const removed = await admin(`/admin/dead-letters/${ids[2]}`, { method: "DELETE" });
    expect(removed.status).toBe(204);
    expect((await admin(`/admin/dead-letters/${ids[2]}`, { method: "DELETE" })).status).toBe(404);
    expect((await admin(`/admin/dead-letters/${ids[2]}`)).status).toBe(404);
    accepting.on = true;
    const before = h.replies.length;
    const none = await admin("/admin/dead-letters/replay", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ channel: "other" }),
    });
    // A channel this service does not have (a typo, or one removed): said so, nothing replayed.
    expect(none.status).toBe(409);
    expect(await none.json()).toMatchObject({ code: "channel_not_configured" });
    const bulk = await admin("/admin/dead-letters/replay", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ channel: "webhook" }),
    });
    expect(bulk.status).toBe(202);
    expect(await bulk.json()).toEqual({ replayed: 2 });
    await waitFor(() => h.replies[before + 1], 5_000, "both replayed replies");
    expect((await list()).items).toEqual([]);
  });

  it("keeps at most admin.max_dead_letters per channel, dropping the oldest with a warning", async () => {
    const { harness: h } = await start(stateDir, { max_dead_letters: 2 });
    const ids = await makeDeadLetters(h, ["one", "two", "three"]);
    expect((await list()).items.map((item) => item.id)).toEqual(ids.slice(1));
    expect(h.logs).toContainEqual(
      expect.objectContaining({ level: "warn", channel: "webhook", max_dead_letters: 2, dropped: 1, dropped_total: 1 }),
    );
  });
});
