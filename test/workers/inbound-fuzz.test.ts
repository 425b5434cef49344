import { env as poolEnv } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DEAD_LETTER_STORE_NAME } from "../../src/workers/dead-letters/dead-letter-object.js";
import worker from "../../src/workers/index.js";
import { readInboundBody } from "../../src/workers/queue-body.js";
import type { FuzzCase, World } from "../shared/inbound-fuzz/fuzz-case.js";
import { type FuzzTargets, fuzzConfig, fuzzLetters } from "../shared/inbound-fuzz/fuzz-fixture.js";
import {
  ADMIN_SECRET,
  HOOKS_SECRET,
  WEBHOOK_PREVIOUS_SECRET,
  WEBHOOK_SECRET,
} from "../shared/inbound-fuzz/fuzz-secrets.js";
import { SEED } from "../shared/inbound-fuzz/fuzz-seed.js";
import { expectFuzzVerdict } from "../shared/inbound-fuzz/fuzz-verdict.js";
import { genBurst } from "../shared/inbound-fuzz/generate-burst.js";
import { genCase } from "../shared/inbound-fuzz/generate-case.js";
import { type Outcome, sendTo } from "../shared/inbound-fuzz/send-case.js";
import { Random } from "../shared/seeded-random.js";
import { conversation, forgetConversations, objectsUse } from "./support/conversations.js";
import { createFakeQueue } from "./support/fake-queue.js";
import { captureLogs, fakeReceiver } from "./support/fake-receiver.js";
import { type TestEnv, testEnv } from "./support/test-env.js";

/**
 * The seeded fuzz of the inbound HTTP surface (test/shared/inbound-fuzz, run on Node by
 * test/core/app/inbound-fuzz), against the Worker inside workerd: the same generators, fixture,
 * clock steps and answer checks, through
 * `worker.fetch` with the pool's Durable Objects (idempotency, auth failures, dead letters,
 * timeline). Every bad input gets a clear error, never a 500 or a thrown error. Fewer requests
 * than on Node, where the app runs over in-memory stores: the first 1,500 of the same seed's
 * cases, and 20 bursts. The seed is the Node fuzz's default, since workerd cannot read
 * FUZZ_SEED (see `seedFrom`); a failure names the seed and the request.
 */
const SEQUENTIAL_REQUESTS = 1_500;
const BURSTS = 20;
const BURST_SIZE = 6;

const ORIGIN = "http://localhost";

const letters = () => poolEnv.DEAD_LETTER_STORE.get(poolEnv.DEAD_LETTER_STORE.idFromName(DEAD_LETTER_STORE_NAME));
/** The dead letters the test keeps, removed after it: the store is one object for the isolate. */
const kept: string[] = [];

afterEach(async () => {
  vi.useRealTimers();
  for (const id of kept.splice(0)) await letters().remove(id);
  await forgetConversations();
  vi.restoreAllMocks();
});

/**
 * Whether workerd takes `method`: it knows a fixed list of methods and refuses any other token
 * (`new Request` throws), so no Worker ever gets one. Node takes any token; such a case is
 * counted as unsendable here, and not sent.
 */
function workerdTakes(method: string): boolean {
  try {
    new Request(ORIGIN, { method });
    return true;
  } catch {
    return false;
  }
}

/**
 * The fuzz's configuration with the admin API on, as a Worker configures it (Node's fuzz hands
 * the app its admin directly), and a refusing queue producer or a working one that only records.
 */
function fuzzEnv(refusing: boolean): TestEnv {
  return testEnv(
    { ...fuzzConfig(), admin: { token_env: "ADMIN_SECRET" } },
    { WEBHOOK_SECRET: `${WEBHOOK_SECRET} ${WEBHOOK_PREVIOUS_SECRET}`, HOOKS_SECRET, ADMIN_SECRET },
    refusing ? { inbound: createFakeQueue({ refuse: true }) } : {},
  );
}

/**
 * The world a case drew, as a Worker can be in it. Every way Node's queue fails to take a message
 * (full, throwing, rejecting, rejecting as full) is on Workers the one way its queue producer
 * fails: `send` rejects (a 503 buffer_full). What Workers cannot express runs as it can: a
 * Worker does not shut down (no `shuttingDown`), its queue has no shared state to be down or
 * behind on its commits (`state-down`, `commits-behind` run with a working queue), and the dead
 * letters' restore cannot be made to fail in their Durable Object (`restoreOk` is always true).
 * "async" (an enqueue that answers later) is a working queue: the fake producer answers at once.
 */
function asOnWorkers(world: World): World {
  const refused = ["full", "throw", "reject", "reject-full"].includes(world.queueMode);
  return { shuttingDown: false, queueMode: refused ? "reject" : "sync", restoreOk: true };
}

/**
 * A case as the Worker gets it: in the world it can be in, with the peer address the Node fuzz
 * hands its app in `x-fuzz-peer` also where a Worker reads it, CF-Connecting-IP. A header value's
 * characters beyond ASCII become DEL: workerd takes them, but logs a warning for each such
 * value (hundreds a run, from outside the isolate, so a test cannot silence them). DEL is
 * refused wherever they are (outside printable ASCII: an Idempotency-Key, a token, a secret),
 * so such a case still gets the answer it gets on Node.
 */
function forWorkers(c: FuzzCase): FuzzCase {
  const headers = c.headers.map(([name, value]) => [name, value.replace(/[^\0-\x7f]/g, "\x7f")] as const);
  const peer = c.headers.find(([name]) => name === "x-fuzz-peer")?.[1];
  if (peer !== undefined) headers.push(["cf-connecting-ip", peer]);
  return { ...c, headers, world: asOnWorkers(c.world) };
}

describe("the Worker's inbound HTTP surface under seeded fuzzing, inside workerd", () => {
  it(`answers every bad input with a clear error, never a 500 or a throw (seed ${SEED})`, async () => {
    const { lines } = captureLogs();
    // Replayed dead letters are answered by the echo brain and posted to the channel's receiver.
    fakeReceiver();
    const working = objectsUse(fuzzEnv(false));
    const refusing = fuzzEnv(true);
    const send = (c: FuzzCase): Promise<Outcome> =>
      sendTo((request) => worker.fetch(request, c.world.queueMode === "reject" ? refusing : working), c);

    // The clock moves as on Node, by the seed's draws between requests, so that an address the
    // auth-failure limit refused is let through again after as many requests whatever the
    // machine's pace. From now, not from Node's T0 (past by now): the Durable Objects' alarms
    // are set from this clock, and one set in the past would fire at once.
    let now = Date.now();
    vi.useFakeTimers({ toFake: ["Date"], now });
    const advance = (ms: number) => {
      now += ms;
      vi.setSystemTime(now);
    };

    const letterIds: string[] = [];
    for (const letter of fuzzLetters()) {
      await letters().keep(letter);
      letterIds.push(letter.job.message.id);
      kept.push(letter.job.message.id);
      // A replayed letter runs in its conversation's object, which is cleaned up after the test.
      conversation(letter.job.message.message.conversationId, letter.job.message.channel);
    }
    const acceptedIds: string[] = [];
    const targets: FuzzTargets = { letterIds, acceptedIds };
    const random = new Random(SEED);
    const failures: string[] = [];
    const statuses = new Map<number | "threw" | "unsendable", number>();
    const count = (outcome: Outcome | "unsendable") => {
      if (outcome === "unsendable") {
        statuses.set("unsendable", (statuses.get("unsendable") ?? 0) + 1);
        return;
      }
      statuses.set(outcome.status, (statuses.get(outcome.status) ?? 0) + 1);
      failures.push(...outcome.failures);
    };
    /**
     * Notes the messages queued since the last call: their ids, which the generators draw from as
     * on Node, and the conversation objects that hold those too large for a queue message (to be
     * cleaned up after the test).
     */
    let queued = 0;
    const noteAccepted = () => {
      for (const body of working.INBOUND.sent.slice(queued).map(readInboundBody)) {
        queued += 1;
        if (body !== undefined && "stored" in body) {
          acceptedIds.push(body.stored.id);
          conversation(body.stored.conversationId, body.stored.channel);
        } else if (body !== undefined) acceptedIds.push(body.id);
      }
    };

    for (let index = 0; index < SEQUENTIAL_REQUESTS; index += 1) {
      const c = forWorkers(genCase(random, targets, index));
      advance(random.int(500));
      count(workerdTakes(c.method) ? await send(c) : "unsendable");
      noteAccepted();
    }

    // Concurrent duplicates of one Idempotency-Key, in the burst's world: the key's Durable Object
    // answers the copies that arrive while the first is being queued with 409 (nothing holds the
    // first back, as Node's fuzz does with its queue: the copies meet it as they happen to).
    for (let burst = 0; burst < BURSTS; burst += 1) {
      const { cases } = genBurst(random, targets, burst, SEQUENTIAL_REQUESTS + burst * BURST_SIZE, BURST_SIZE);
      advance(random.int(3_000));
      for (const outcome of await Promise.all(cases.map((c) => send(forWorkers(c))))) count(outcome);
      noteAccepted();
    }

    expectFuzzVerdict({ seed: SEED, failures, statuses, lines });

    // Still alive and well afterwards.
    const health = await worker.fetch(new Request(`${ORIGIN}/healthz`), working);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });
    const accepted = await worker.fetch(
      new Request(`${ORIGIN}/webhook`, {
        method: "POST",
        headers: { authorization: `Bearer ${WEBHOOK_SECRET}`, "content-type": "application/json" },
        body: '{"sender_id":"after","text":"still here"}',
      }),
      working,
    );
    expect(accepted.status).toBe(200);
  });
});
