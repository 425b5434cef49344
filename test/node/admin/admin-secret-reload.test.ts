import { afterEach, describe, expect, it } from "vitest";
import type { Config } from "../../../src/core/config/config-schema.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { compareConfigs } from "../../../src/node/service/config-changes.js";
import { type RunningService, startService } from "../../../src/node/service/start-service.js";
import { configDocument } from "../../support/configs.js";
import { type JsonTestServer, startJsonServer } from "../../support/json-test-server.js";
import { createLogSink } from "../../support/log-sink.js";
import { waitFor } from "../../support/wait-for.js";

const CHANNEL = "channel-secret-0123456789";
const OLD = "old-admin-secret-0123456789";
const NEW = "new-admin-secret-9876543210";

let service: RunningService | undefined;
let receiver: JsonTestServer | undefined;

afterEach(async () => {
  await service?.stop(1_000);
  await receiver?.close();
  service = undefined;
  receiver = undefined;
});

/** The configuration with `admin` as given; null: without `admin`. `webhook` adds to the channel's. */
function configOf(
  admin: Record<string, unknown> | null = { token_env: "ADMIN_SECRET" },
  webhook: Record<string, unknown> = {},
): Config {
  const result = validateConfig(configDocument({ bind: "127.0.0.1:0", ...webhook }, admin === null ? {} : { admin }));
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.config;
}

async function start(env: Record<string, string>, config = configOf()) {
  const { logger, lines } = createLogSink();
  service = await startService({
    config,
    secrets: new Map([["webhook", CHANNEL]]),
    logger,
    env: (name) => env[name],
  });
  const running = service;
  const base = `http://127.0.0.1:${running.listeners[0]?.port}`;
  return {
    logs: lines,
    /** The status of a message posted to the channel with `secret`. */
    post: async (secret: string) =>
      (
        await fetch(`${base}/webhook`, {
          method: "POST",
          headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
          body: JSON.stringify({ sender_id: "alice", text: "hello" }),
        })
      ).status,
    /** The status of GET /admin/dead-letters with `secret`. */
    status: async (secret: string) =>
      (await fetch(`${base}/admin/dead-letters`, { headers: { authorization: `Bearer ${secret}` } })).status,
    reload: (env: Record<string, string>, config = configOf(), channel = CHANNEL) =>
      running.reload({ config, secrets: new Map([["webhook", channel]]), env: (name) => env[name] }),
  };
}

describe("the admin secret at a reload", () => {
  it("swaps in a new admin secret: the old one gets 401 from the next request, the new one 200", async () => {
    const { status, reload, logs } = await start({ ADMIN_SECRET: OLD });
    expect(await status(OLD)).toBe(200);
    expect(await reload({ ADMIN_SECRET: NEW })).toEqual({ ok: true, changed: [], secrets: ["ADMIN_SECRET"] });
    expect(await status(OLD)).toBe(401);
    expect(await status(NEW)).toBe(200);
    expect(logs).toContainEqual(
      expect.objectContaining({ msg: "configuration reloaded", secrets_changed: ["ADMIN_SECRET"] }),
    );
    expect(JSON.stringify(logs)).not.toContain(OLD);
    expect(JSON.stringify(logs)).not.toContain(NEW);
  });

  it.each([
    ["is unset", {}, CHANNEL, /ADMIN_SECRET \(admin.token_env\) is not set or empty/],
    ["is empty", { ADMIN_SECRET: "" }, CHANNEL, /ADMIN_SECRET \(admin.token_env\) is not set or empty/],
    ["equals the channel secret", { ADMIN_SECRET: CHANNEL }, CHANNEL, /holds the same secret as WEBHOOK_SECRET/],
    [
      "equals either of two rotating channel secrets",
      { ADMIN_SECRET: NEW },
      `${NEW} ${CHANNEL}`,
      /holds the same secret as WEBHOOK_SECRET/,
    ],
  ])("refuses the whole reload when the new admin secret %s, and keeps the old one", async (_, env, channel, why) => {
    const { status, post, reload, logs } = await start({ ADMIN_SECRET: OLD });
    const result = await reload(env, configOf(), channel);
    expect(result).toEqual({ ok: false, reason: "unusable", message: expect.stringMatching(why) });
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: "error",
        msg: expect.stringMatching(/^reload refused: .*; the service carries on with the configuration it had$/),
      }),
    );
    expect(await status(OLD)).toBe(200);
    expect(await status(NEW)).toBe(401);
    // Nothing else was applied either: a rotated channel secret waits for a reload that succeeds.
    expect(await post(NEW)).toBe(401);
    expect(JSON.stringify(logs)).not.toContain(OLD);
    expect(JSON.stringify(logs)).not.toContain(CHANNEL);
  });

  it("takes a renamed admin.token_env live, and needs a restart to turn the admin API on or off", async () => {
    const { status, reload } = await start({ ADMIN_SECRET: OLD });
    const renamed = configOf({ token_env: "OTHER_ADMIN_SECRET" });
    expect(await reload({ OTHER_ADMIN_SECRET: NEW }, renamed)).toEqual({
      ok: true,
      changed: ["admin.token_env"],
      secrets: ["OTHER_ADMIN_SECRET"],
    });
    expect(await status(NEW)).toBe(200);
    expect(await reload({}, configOf(null))).toEqual({ ok: false, reason: "restart_needed", keys: ["admin"] });
    expect(compareConfigs(configOf(null), configOf()).restart).toEqual(["admin"]);
    expect(compareConfigs(configOf(), configOf({ token_env: "ADMIN_SECRET", max_dead_letters: 5 })).restart).toEqual([
      "admin.max_dead_letters",
    ]);
    expect(await status(NEW)).toBe(200);
  });

  it("names the renamed admin.token_env in a later dead letter's replay command", async () => {
    receiver = await startJsonServer(() => ({ status: 400, body: { error: "refused" } }));
    const webhook = { outbound_url: `${receiver.origin}/replies`, delivery: { max_attempts: 1 } };
    const { post, reload, logs } = await start({ ADMIN_SECRET: OLD }, configOf(undefined, webhook));
    const renamed = configOf({ token_env: "OTHER_ADMIN_SECRET" }, webhook);
    expect(await reload({ OTHER_ADMIN_SECRET: NEW }, renamed)).toMatchObject({ ok: true });
    expect(await post(CHANNEL)).toBe(200);
    const letter = await waitFor(() => logs.find((line) => String(line.msg).startsWith("dead letter:")));
    expect(String(letter.replay)).toContain("--admin-token-env OTHER_ADMIN_SECRET");
  });
});

describe("the admin secret at a start", () => {
  it("refuses to start with an admin secret equal to a channel secret, naming the variables only", async () => {
    await expect(start({ ADMIN_SECRET: CHANNEL })).rejects.toThrow(
      /ADMIN_SECRET \(admin.token_env\) holds the same secret as WEBHOOK_SECRET/,
    );
  });
});
