/**
 * A database that stops answering without refusing anything (a frozen VM, a stalled primary, a
 * partition): every process of a private Postgres cluster is paused with SIGSTOP for ten seconds
 * while clients keep sending to two replicas of the built service. Requests are answered within
 * five seconds (200, or 503 `state_unavailable` or `buffer_full` with Retry-After), and once a
 * replica's oldest commit has waited a second, at once to the freeze's end (`buffer_full`, then
 * `state_unavailable` once its probe of the database failed); `/readyz` turns 503 within
 * five seconds, the statements cut off are stopped on the server once it answers again, and the
 * replicas recover by themselves: nothing answered 200 is lost, each conversation keeps its
 * order with gapless numbers, and each message has one webhook-id.
 */
import pg from "pg";
import { afterEach, describe, expect, it, onTestFailed } from "vitest";
import { type ReceivedReply, type Receiver, startReceiver } from "../../../src/node/receiver/sample-receiver.js";
import { replicaConfigDocument } from "../../support/configs.js";
import { type PostgresCluster, startPostgresCluster } from "../../support/postgres-cluster.js";
import { expectAcceptedAnsweredInOrder, replyBody } from "../../support/reply-checks.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../../support/spawn-node.js";
import { type Sent, timedSend } from "../../support/timed-send.js";
import { waitFor } from "../../support/wait-for.js";

const SECRET = "freeze-secret-0123456789";
const CONVERSATIONS = 8;
const FREEZE_MS = 10_000;
/**
 * The product's "within five seconds" (a write's time limit is 4.5 s), with 1.5 s for a loaded
 * machine: a request that waited for a second write, or for the freeze's end, still exceeds it.
 */
const ANSWERED_WITHIN_MS = 6_500;
/**
 * "Refused at once", with room for a loaded machine: a refusal takes milliseconds, a request that
 * waited on a write instead takes at least a statement's time limit (3 s).
 */
const REFUSED_WITHIN_MS = 2_500;

let cluster: PostgresCluster | undefined;
let receiver: Receiver | undefined;
let replicas: Spawned[] = [];

afterEach(async () => {
  await cluster?.thaw().catch(() => undefined);
  for (const replica of replicas) replica.child.kill("SIGKILL");
  await Promise.all(replicas.map((replica) => replica.exited));
  await receiver?.close();
  await cluster?.stop();
  replicas = [];
  receiver = undefined;
  cluster = undefined;
});

function send(url: string, conversation: string, text: string, key?: string): Promise<Sent> {
  return timedSend(url, SECRET, conversation, text, key);
}

describe("a Postgres that stops answering", () => {
  it("answers within five seconds, says so in /readyz, and recovers by itself with nothing lost", async () => {
    cluster = await startPostgresCluster();
    const replies: ReceivedReply[] = [];
    receiver = await startReceiver({ port: 0, onReply: (reply) => replies.push(reply) });
    // At debug, each delivery is logged with its reply id: a failure below prints what it needs.
    const config = await writeTempConfig(replicaConfigDocument(receiver.url, { log_level: "debug" }));
    const env = { WEBHOOK_SECRET: SECRET, DATABASE_URL: cluster.url };
    replicas = [0, 1].map(() => spawnNode("dist/node.js", ["--config", config], env));
    // The channel's URL, and the origin its /readyz is on.
    const urls = await Promise.all(replicas.map((replica) => listeningUrl(replica)));
    const origins = urls.map((url) => new URL(url).origin);

    // This run's replicas: the hook runs after afterEach, which empties the list.
    const running = replicas;
    onTestFailed(() => printWhatRanTwice(replies, running));
    const sent: Sent[] = [];
    let stop = false;
    const client = async (index: number): Promise<void> => {
      const conversation = `c${index}`;
      for (let turn = 0; !stop; turn += 1) {
        const result = await send(urls[turn % 2] ?? "", conversation, `m${turn}`);
        sent.push(result);
        // A client that was refused waits as Retry-After says, shortened for the test.
        if (result.status !== 200) await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };
    const clients = Array.from({ length: CONVERSATIONS }, (_, index) => client(index));
    await waitFor(
      () => (sent.filter((result) => result.status === 200).length >= 40 ? true : undefined),
      15_000,
      "load",
    );

    await cluster.freeze();
    // From when every process is stopped: the postmaster first, then each of its children.
    const frozenAt = Date.now();
    // Besides the clients, which wait for each answer, a message every 200 ms without waiting,
    // to each replica in turn, every other one with an Idempotency-Key (whose lookup is in the
    // same database): once a replica's oldest commit has waited past its bound, it takes no more
    // and refuses at once.
    const probes: Promise<Sent & { readonly at: number }>[] = [];
    const prober = setInterval(() => {
      const at = Date.now() - frozenAt;
      const n = probes.length;
      const key = n % 4 < 2 ? undefined : `probe-${n}`;
      probes.push(send(urls[n % 2] ?? "", "probe", `p${n}`, key).then((result) => ({ ...result, at })));
    }, 200);
    // Each replica's /readyz turns 503 within five seconds.
    const unready = await Promise.all(
      origins.map((url) =>
        waitFor(
          async () => {
            const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5_000) }).catch(
              () => undefined,
            );
            return response !== undefined && response.status === 503 ? Date.now() - frozenAt : undefined;
          },
          FREEZE_MS,
          "/readyz to turn 503",
          100,
        ),
      ),
    );
    for (const ms of unready) expect(ms).toBeLessThan(ANSWERED_WITHIN_MS);
    const frozenFor = FREEZE_MS - (Date.now() - frozenAt);
    if (frozenFor > 0) await new Promise((resolve) => setTimeout(resolve, frozenFor));
    clearInterval(prober);
    await cluster.thaw();
    const thawedAt = Date.now();

    // Both replicas are ready again, by themselves, and take messages.
    for (const url of origins) {
      await waitFor(
        async () => {
          const response = await fetch(`${url}/readyz`).catch(() => undefined);
          await response?.body?.cancel();
          return response?.status === 200 ? true : undefined;
        },
        20_000,
        "/readyz to turn 200 again",
        500,
      );
    }
    const before = sent.length;
    await waitFor(
      () => (sent.slice(before).filter((result) => result.status === 200).length >= 20 ? true : undefined),
      20_000,
      "messages accepted after the freeze",
    );
    stop = true;
    await Promise.all(clients);

    // Every request was answered within five seconds: 200, or 503 state_unavailable or
    // buffer_full with Retry-After.
    for (const result of sent) {
      expect(result.ms, JSON.stringify(result)).toBeLessThan(ANSWERED_WITHIN_MS);
      if (result.status === 200) continue;
      expect(result).toMatchObject({ status: 503 });
      expect(["state_unavailable", "buffer_full"]).toContain(result.code);
      expect(result.retryAfter).not.toBeNull();
    }
    expect(sent.some((result) => result.status === 503)).toBe(true);

    // From two seconds into the freeze to its end, every probe was refused at once: buffer_full
    // while the commits waiting lagged, state_unavailable once the replica's probe of the
    // database had failed, so also after the first writes gave up (which had made the replicas
    // take messages again, each to wait for that limit).
    const refusedAtOnce = (await Promise.all(probes)).filter(
      (probe) => probe.at >= 2_000 && probe.at < FREEZE_MS - 300,
    );
    expect(refusedAtOnce.length).toBeGreaterThanOrEqual(25);
    for (const probe of refusedAtOnce) {
      expect(probe, JSON.stringify(probe)).toMatchObject({ status: 503 });
      expect(["buffer_full", "state_unavailable"], JSON.stringify(probe)).toContain(probe.code);
      expect(probe.ms, JSON.stringify(probe)).toBeLessThan(REFUSED_WITHIN_MS);
      expect(probe.retryAfter).toBe("5");
    }
    expect(refusedAtOnce.filter((probe) => probe.at >= 5_000).map((probe) => probe.code)).toContain(
      "state_unavailable",
    );

    // The statements cut off by the freeze were stopped on the server.
    const admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    try {
      await waitFor(
        async () => {
          const stale = await admin.query(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'webhook-channel' AND state = 'active' AND query_start < $1",
            [new Date(thawedAt)],
          );
          return stale.rows[0]?.n === 0 ? true : undefined;
        },
        10_000,
        "the statements of before the thaw to be gone",
      );
    } finally {
      await admin.end();
    }

    // Nothing answered 200 is lost; order, numbers and webhook-ids hold.
    await expectAcceptedAnsweredInOrder(replies, sent, 30_000);
  }, 120_000);
});

/**
 * On a failure, the replicas' lines about each message whose replies came under more than one
 * webhook-id, and about their leases and takeovers: a race that shows once in many runs is
 * read from the CI log, not run again.
 */
function printWhatRanTwice(replies: readonly ReceivedReply[], spawned: readonly Spawned[]): void {
  const ids = new Map<string, Set<string>>();
  for (const reply of replies) {
    const body = replyBody(reply);
    ids.set(body.in_reply_to, (ids.get(body.in_reply_to) ?? new Set()).add(body.message_id));
  }
  const twice = [...ids].filter(([, webhookIds]) => webhookIds.size > 1).map(([message]) => message);
  const context = /lease|taking stock|took over|cannot|postgres/;
  spawned.forEach((replica, index) => {
    const lines = replica.lines.filter((line) => twice.some((id) => line.includes(id)) || context.test(line));
    process.stderr.write(
      `--- replica ${index}, messages with more than one webhook-id: ${twice.join(", ") || "none"}\n`,
    );
    process.stderr.write(`${lines.join("\n")}\n`);
  });
}
