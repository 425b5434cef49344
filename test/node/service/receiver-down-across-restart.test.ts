/**
 * With `state_dir`, a receiver known down stays known down across a restart: the resumed replies
 * keep waiting, spending no attempts, and the first POST after the restart is the probe on the
 * schedule the circuit had, rather than a new round of failures that would find the outage again
 * (and, restart after restart, spend every attempt of the oldest messages).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type Receiver, startReceiver } from "../../../src/node/receiver/sample-receiver.js";
import { configDocument } from "../../support/configs.js";
import { type ServiceHarness, startHarness } from "../../support/node-service.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../../support/spawn-node.js";
import { waitFor } from "../../support/wait-for.js";

const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The `receivers_down` of a service's `/readyz`, empty when none is down. */
async function receiversDown(harness: ServiceHarness): Promise<unknown[]> {
  const answer = (await (await fetch(`${harness.baseUrl}/readyz`)).json()) as { receivers_down?: unknown[] };
  return answer.receivers_down ?? [];
}

describe("a receiver down across a restart, with state_dir", () => {
  it("is still down after the restart, and the first POST then is the probe", async () => {
    const dir = await mkdtemp(join(tmpdir(), "webhook-channel-down-restart-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const posts: number[] = [];
    const receiver: Receiver = await startReceiver({
      port: 0,
      status: () => 503,
      onReply: () => posts.push(Date.now()),
    });
    cleanups.push(() => receiver.close());
    const webhook = { outbound_url: receiver.url, delivery: { circuit_failures: 2, initial_delay_ms: 3_000 } };
    const extra = { state_dir: dir, shutdown_timeout_ms: 0 };

    const first = await startHarness(webhook, {}, extra);
    cleanups.push(() => first.close());
    for (const sender of ["a", "b", "c"])
      expect((await first.post({ sender_id: sender, text: "hi" })).status).toBe(200);
    await waitFor(
      async () => ((await receiversDown(first)).length > 0 ? true : undefined),
      10_000,
      "the receiver down",
    );
    await first.service.stop(0);
    const before = posts.length;

    const restarted = await startHarness(webhook, {}, extra);
    cleanups.push(() => restarted.close());
    expect(await receiversDown(restarted)).toEqual([expect.objectContaining({ channel: "webhook" })]);
    // Said, and alerted on, as a receiver found down here.
    expect(restarted.logs).toContainEqual(
      expect.objectContaining({
        level: "warn",
        msg: expect.stringContaining("as the last run left it"),
        channel: "webhook",
      }),
    );
    const metrics = await (await fetch(`${restarted.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/^webhook_channel_receiver_up\{channel="webhook"\} 0$/m);

    await waitFor(() => (posts.length > before ? true : undefined), 10_000, "the probe");
    // The probe's failure recorded: the next one is due later than the first was.
    await waitFor(
      async () => {
        const [down] = (await receiversDown(restarted)) as { next_probe_in_ms?: number }[];
        return (down?.next_probe_in_ms ?? 0) > 3_000 ? true : undefined;
      },
      10_000,
      "the failed probe recorded",
    );
    // One POST: the probe; the other replies wait for the receiver, spending no attempts.
    expect(posts.length).toBe(before + 1);
  });

  it("is not this run's when the restart names another receiver: nothing announced down, the replies go there", async () => {
    const dir = await mkdtemp(join(tmpdir(), "webhook-channel-down-restart-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const down: Receiver = await startReceiver({ port: 0, status: () => 503 });
    cleanups.push(() => down.close());
    const extra = { state_dir: dir, shutdown_timeout_ms: 0 };
    const delivery = { circuit_failures: 1, initial_delay_ms: 60_000 };

    const first = await startHarness({ outbound_url: down.url, delivery }, {}, extra);
    cleanups.push(() => first.close());
    expect((await first.post({ sender_id: "a", text: "hi" })).status).toBe(200);
    await waitFor(async () => ((await receiversDown(first)).length > 0 ? true : undefined), 10_000, "down");
    await first.service.stop(0);

    // The restart's own receiver (the harness starts one) is up.
    const restarted = await startHarness({ delivery }, {}, extra);
    cleanups.push(() => restarted.close());
    await waitFor(
      () => (restarted.replies.length === 1 ? true : undefined),
      10_000,
      "the held reply at the new receiver",
    );
    expect(restarted.logs.filter((line) => String(line.msg).includes("as the last run left it"))).toEqual([]);
    const metrics = await (await fetch(`${restarted.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/^webhook_channel_receiver_up\{channel="webhook"\} 1$/m);
    expect(metrics).not.toMatch(
      /^webhook_channel_receiver_state_changes_total\{channel="webhook",state="down"\} [1-9]/m,
    );
  });

  it("does not wait, after a kill -9, for the time limit of the probe the dead process had out", async () => {
    const dir = await mkdtemp(join(tmpdir(), "webhook-channel-down-restart-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    let answer: 503 | "hang" | 200 = 503;
    let posts = 0;
    const receiver: Receiver = await startReceiver({
      port: 0,
      status: () => answer,
      onReply: () => {
        posts += 1;
      },
    });
    cleanups.push(() => receiver.close());
    // A probe out is held for twice timeout_ms and more: far longer than the test waits.
    const delivery = { circuit_failures: 2, initial_delay_ms: 50, max_delay_ms: 200, timeout_ms: 30_000 };
    const config = await writeTempConfig(
      configDocument({ bind: "127.0.0.1:0", outbound_url: receiver.url, delivery }, { state_dir: dir }),
    );
    const start = async (): Promise<{ url: string; spawned: Spawned }> => {
      const spawned = spawnNode("dist/node.js", ["--config", config], { WEBHOOK_SECRET: "probe-kill-0123456789" });
      cleanups.push(async () => {
        spawned.child.kill("SIGKILL");
      });
      return { url: await listeningUrl(spawned), spawned };
    };
    const first = await start();
    for (const sender of ["a", "b", "c"]) {
      const response = await fetch(first.url, {
        method: "POST",
        headers: { authorization: "Bearer probe-kill-0123456789", "content-type": "application/json" },
        body: JSON.stringify({ sender_id: sender, text: "hi" }),
      });
      expect(response.status).toBe(200);
    }
    await waitFor(
      () => (first.spawned.lines.some((line) => line.includes('"receiver down')) ? true : undefined),
      10_000,
      "the receiver down",
    );
    // The next probe hangs: it is out when the process dies.
    answer = "hang";
    const beforeProbe = posts;
    await waitFor(() => (posts > beforeProbe ? true : undefined), 10_000, "a probe out");
    first.spawned.child.kill("SIGKILL");
    await first.spawned.exited;

    answer = 200;
    const beforeRestart = posts;
    const restarted = await start();
    // The probe on the circuit's schedule, then the replies it held.
    await waitFor(() => (posts >= beforeRestart + 3 ? true : undefined), 15_000, "the held replies");
    expect(restarted.spawned.lines.some((line) => line.includes('"receiver up'))).toBe(true);
  });
});
