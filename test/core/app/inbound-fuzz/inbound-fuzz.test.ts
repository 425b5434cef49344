import { describe, expect, it } from "vitest";
import type { World } from "../../../shared/inbound-fuzz/fuzz-case.js";
import { WEBHOOK_SECRET } from "../../../shared/inbound-fuzz/fuzz-secrets.js";
import { SEED } from "../../../shared/inbound-fuzz/fuzz-seed.js";
import { expectFuzzVerdict } from "../../../shared/inbound-fuzz/fuzz-verdict.js";
import { genBurst } from "../../../shared/inbound-fuzz/generate-burst.js";
import { genCase } from "../../../shared/inbound-fuzz/generate-case.js";
import { type Outcome, send } from "../../../shared/inbound-fuzz/send-case.js";
import { Random } from "../../../shared/seeded-random.js";
import { waitFor } from "../../../support/wait-for.js";
import { fuzzApp } from "./fuzz-app.js";

/**
 * A seeded fuzz of the inbound HTTP surface, in process through the app's `request`: every bad
 * input gets a clear error (a 4xx, or a 503 that says the buffer or the state is unavailable, as
 * `application/problem+json` whose `status` is the HTTP status), never a 500 or a thrown error.
 * FUZZ_SEED=<n> replays another seed; a failure names its seed and the request that failed.
 */
const SEQUENTIAL_REQUESTS = 3_000;
const BURSTS = 40;
const BURST_SIZE = 6;

describe("the inbound HTTP surface under seeded fuzzing", () => {
  it(`answers every bad input with a clear error, never a 500 or a throw (seed ${SEED})`, async () => {
    const random = new Random(SEED);
    const f = fuzzApp();
    const failures: string[] = [];
    const statuses = new Map<number | "threw", number>();
    const count = (outcome: Outcome) => {
      statuses.set(outcome.status, (statuses.get(outcome.status) ?? 0) + 1);
      failures.push(...outcome.failures);
    };

    for (let index = 0; index < SEQUENTIAL_REQUESTS; index += 1) {
      const c = genCase(random, f, index);
      Object.assign(f.world, c.world);
      f.advance(random.int(500));
      count(await send(f, c));
      if (index % 50 === 49) await f.recorder.flush();
    }

    // Concurrent duplicates of one Idempotency-Key while the queue answers later (409s).
    for (let burst = 0; burst < BURSTS; burst += 1) {
      const { world, cases } = genBurst(random, f, burst, SEQUENTIAL_REQUESTS + burst * BURST_SIZE, BURST_SIZE);
      Object.assign(f.world, world);
      f.advance(random.int(3_000));
      const release = f.holdEnqueues();
      let answered = 0;
      const outcomes = Promise.all(
        cases.map((c) =>
          send(f, c).finally(() => {
            answered += 1;
          }),
        ),
      );
      // Released once every request of the burst has answered but those whose message is being
      // stored: the copies of a message met its key while the first was still in flight.
      await waitFor(() => (answered + f.heldEnqueues() === cases.length ? true : undefined), 5_000, "the burst");
      release();
      for (const outcome of await outcomes) count(outcome);
    }
    await f.recorder.close();

    expectFuzzVerdict({ seed: SEED, failures, statuses, lines: f.lines });

    // Still alive and well afterwards.
    Object.assign(f.world, { shuttingDown: false, queueMode: "sync", restoreOk: true } satisfies World);
    const health = await f.app.request("/healthz");
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });
    const accepted = await f.app.request("/webhook", {
      method: "POST",
      headers: { authorization: `Bearer ${WEBHOOK_SECRET}`, "content-type": "application/json" },
      body: '{"sender_id":"after","text":"still here"}',
    });
    expect(accepted.status).toBe(200);
  });
});
