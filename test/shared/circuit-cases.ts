/**
 * The receiver circuit's cases, one table run unchanged over every circuit store: memory (one
 * Node process), Postgres (the row the replicas share: two keepers on two pools stand for two
 * replicas) and the receiver object's storage inside workerd. Each case drives the core's
 * `CircuitKeeper` as the runtimes do (runs report, the timer calls `due`), with injected time.
 * Runtime-neutral: no `node:` or `cloudflare:` imports.
 */
import { describe, expect, it } from "vitest";
import {
  ANSWERED,
  ANSWERED_THEN_NOT,
  type CircuitCasesHarness,
  fail,
  keeperOver,
  POLICY,
  UNANSWERED,
} from "./circuit-keeper-harness.js";
import { circuitUnreachableCases } from "./circuit-unreachable-cases.js";

export type { CircuitCasesHarness } from "./circuit-keeper-harness.js";

export function circuitCases(name: string, harness: CircuitCasesHarness): void {
  describe(`receiver circuit cases: ${name}`, () => {
    it("goes down at the third unanswered POST in a row; an answer in between starts the count again", async () => {
      const { channel, open } = await harness.stores();
      const clock = { now: 1_000_000 };
      const { keeper, changes } = keeperOver(open(), channel, clock, { held: harness.held?.() });
      await fail(keeper, 2);
      expect(await keeper.record(ANSWERED, false, null)).toEqual({ down: false, failing: false });
      await fail(keeper, 2);
      expect(keeper.view()).toEqual({ down: false, failing: true });
      expect(await keeper.record(UNANSWERED, false, null)).toEqual({ down: true, failing: false });
      expect(changes).toEqual(["down 0"]);
    });

    it("counts an unanswered POST after an answer of the same run as the first of a new row", async () => {
      const { channel, open } = await harness.stores();
      const clock = { now: 1_500_000 };
      const { keeper, changes } = keeperOver(open(), channel, clock, { held: harness.held?.() });
      await fail(keeper, 2);
      expect(await keeper.record(ANSWERED_THEN_NOT, false, "lane-a")).toEqual({ down: false, failing: true });
      await fail(keeper, 1);
      expect(keeper.view()).toEqual({ down: false, failing: true });
      expect(changes).toEqual([]);
    });

    it("is up again when the probe's first reply was answered and its second was not, and wakes every lane", async () => {
      const { channel, open } = await harness.stores();
      const clock = { now: 2_500_000 };
      const { keeper, woken, changes } = keeperOver(open(), channel, clock, { held: harness.held?.() });
      await fail(keeper, 3, "lane-a");
      await keeper.record(UNANSWERED, false, "lane-b");
      clock.now += POLICY.initialDelayMs;
      await keeper.due();
      expect(woken).toEqual(["probe lane-a"]);
      expect(await keeper.record(ANSWERED_THEN_NOT, true, "lane-a")).toEqual({ down: false, failing: true });
      expect(woken).toEqual(["probe lane-a", "lane-b"]);
      expect(changes).toEqual(["down 1", "up 1"]);
    });

    it("holds lanes while down, wakes the one that waited longest as the only probe, and all of them once it answers", async () => {
      const { channel, open } = await harness.stores();
      const clock = { now: 2_000_000 };
      const { keeper, woken, probeDeadlines, changes, scheduled } = keeperOver(open(), channel, clock, {
        held: harness.held?.(),
      });
      await fail(keeper, 3, "lane-a");
      await keeper.record(UNANSWERED, false, "lane-b");
      await keeper.record(null, false, "lane-c");
      // The first probe comes after the initial delay.
      expect(scheduled.at(-1)).toBe(clock.now + POLICY.initialDelayMs);
      clock.now += POLICY.initialDelayMs;
      await keeper.due();
      expect(woken).toEqual(["probe lane-a"]);
      // The lane is the probe until the probe's time, the keeper's own, runs out.
      expect(probeDeadlines).toEqual([clock.now + POLICY.probeTimeoutMs]);
      // While it is out, nobody else probes.
      await keeper.due();
      expect(woken).toEqual(["probe lane-a"]);
      expect(await keeper.record(ANSWERED, true, null)).toEqual({ down: false, failing: false });
      expect(woken).toEqual(["probe lane-a", "lane-b", "lane-c"]);
      expect(changes).toEqual(["down 1", "up 2"]);
    });

    it("says a change was made here only to the keeper whose write made it, and when the receiver went down", async () => {
      const { channel, open } = await harness.stores();
      const clock = { now: 9_000_000 };
      const maker = keeperOver(open(), channel, clock, { held: harness.held?.() });
      const learner = keeperOver(open(), channel, clock);
      await learner.keeper.due();
      await fail(maker.keeper, 3, "lane-a");
      const since = clock.now;
      await learner.keeper.due();
      clock.now += POLICY.initialDelayMs;
      await maker.keeper.due();
      await maker.keeper.record(ANSWERED, true, null);
      await learner.keeper.due();
      expect(maker.changes.map((change) => change.split(" ")[0])).toEqual(["down", "up"]);
      expect(maker.origins).toEqual([
        { madeHere: true, downSince: undefined },
        { madeHere: true, downSince: since },
      ]);
      expect(learner.changes.map((change) => change.split(" ")[0])).toEqual(["down", "up"]);
      expect(learner.origins).toEqual([
        { madeHere: false, downSince: undefined },
        { madeHere: false, downSince: since },
      ]);
    });

    it("moves the next probe on after a failed one, and honours Retry-After", async () => {
      const { channel, open } = await harness.stores();
      const clock = { now: 3_000_000 };
      const { keeper, woken, scheduled } = keeperOver(open(), channel, clock, { held: harness.held?.() });
      await fail(keeper, 3, "lane-a");
      clock.now += POLICY.initialDelayMs;
      await keeper.due();
      await keeper.record(UNANSWERED, true, "lane-a");
      expect(scheduled.at(-1)).toBe(clock.now + 2 * POLICY.initialDelayMs);
      clock.now += 2 * POLICY.initialDelayMs;
      await keeper.due();
      await keeper.record({ answered: false, retryAfterMs: 7_000 }, true, "lane-a");
      expect(scheduled.at(-1)).toBe(clock.now + 7_000);
      expect(woken).toEqual(["probe lane-a", "probe lane-a"]);
    });

    it("gives the probe to the next lane when the one that waited longest has nothing to post", async () => {
      const { channel, open } = await harness.stores();
      const clock = { now: 4_000_000 };
      const { keeper, woken } = keeperOver(open(), channel, clock, {
        held: harness.held?.(),
        answers: (key) => (key === "gone" ? "idle" : "probing"),
      });
      await fail(keeper, 3, "gone");
      await keeper.record(null, false, "lane-b");
      clock.now += POLICY.initialDelayMs;
      await keeper.due();
      expect(woken).toEqual(["probe gone", "probe lane-b"]);
    });

    it("gives up a probe whose result never came, and lets the next lane probe", async () => {
      const { channel, open } = await harness.stores();
      const clock = { now: 5_000_000 };
      const { keeper, woken } = keeperOver(open(), channel, clock, { held: harness.held?.() });
      await fail(keeper, 3, "lane-a");
      await keeper.record(null, false, "lane-b");
      clock.now += POLICY.initialDelayMs;
      await keeper.due();
      clock.now += POLICY.probeTimeoutMs;
      await keeper.due();
      expect(woken).toEqual(["probe lane-a", "probe lane-b"]);
    });

    it("starts afresh, up, waking what waited, when outbound_url names another receiver", async () => {
      const { channel, open } = await harness.stores();
      const clock = { now: 6_000_000 };
      let policy = POLICY;
      const { keeper, woken, changes, origins } = keeperOver(open(), channel, clock, {
        held: harness.held?.(),
        policy: () => policy,
      });
      await fail(keeper, 3, "lane-a");
      policy = { ...POLICY, target: "http://elsewhere.test" };
      await keeper.due();
      expect(keeper.view()).toEqual({ down: false, failing: false });
      expect(woken).toEqual(["lane-a"]);
      expect(changes).toEqual(["down 1", "up 1"]);
      // Started afresh by the reload, not brought up by an answer: nothing to announce as a recovery.
      expect(origins.at(-1)).toMatchObject({ madeHere: true, restarted: true });
    });

    it("tells an answer that came as a reload turned the circuit off as the receiver's recovery, not a restart", async () => {
      const { channel, open } = await harness.stores();
      const clock = { now: 6_700_000 };
      let policy = POLICY;
      const { keeper, origins, changes } = keeperOver(open(), channel, clock, {
        held: harness.held?.(),
        policy: () => policy,
      });
      await fail(keeper, 3, "lane-a");
      clock.now += POLICY.initialDelayMs;
      await keeper.due();
      // The reload lands while the probe's POST is out, and the same receiver answers it.
      policy = { ...POLICY, failuresToOpen: 0 };
      await keeper.record(ANSWERED, true, null);
      expect(changes.map((change) => change.split(" ")[0])).toEqual(["down", "up"]);
      expect(origins.at(-1)?.restarted).toBeUndefined();
    });

    it("tells another keeper of one store that a reload's restart is one", async () => {
      const { channel, open } = await harness.stores();
      const clock = { now: 6_800_000 };
      let policy = POLICY;
      const first = keeperOver(open(), channel, clock, { held: harness.held?.(), policy: () => policy });
      const second = keeperOver(open(), channel, clock, { policy: () => policy });
      await fail(first.keeper, 3, "lane-a");
      await second.keeper.due();
      policy = { ...POLICY, target: "http://elsewhere.test" };
      await first.keeper.due();
      await second.keeper.due();
      expect(second.changes.map((change) => change.split(" ")[0])).toEqual(["down", "up"]);
      expect(second.origins.at(-1)).toMatchObject({ madeHere: false, restarted: true });
    });

    it("says a receiver that answered a probe is up, not started afresh", async () => {
      const { channel, open } = await harness.stores();
      const clock = { now: 6_500_000 };
      const { keeper, origins } = keeperOver(open(), channel, clock, { held: harness.held?.() });
      await fail(keeper, 3, "lane-a");
      clock.now += POLICY.initialDelayMs;
      await keeper.due();
      await keeper.record(ANSWERED, true, null);
      expect(origins.at(-1)?.restarted).toBeUndefined();
    });

    it("shares one circuit between keepers of one store: one probe in all, and every keeper wakes its lanes once it is up", async () => {
      const { channel, open } = await harness.stores();
      const clock = { now: 7_000_000 };
      const first = keeperOver(open(), channel, clock, { held: harness.held?.() });
      const second = keeperOver(open(), channel, clock);
      await fail(first.keeper, 3, "first-lane");
      // The second keeper learns of the outage from the store, and holds its own lanes.
      expect(await second.keeper.record(UNANSWERED, false, "second-lane")).toEqual({ down: true, failing: false });
      clock.now += POLICY.initialDelayMs;
      await first.keeper.due();
      await second.keeper.due();
      expect([...first.woken, ...second.woken]).toEqual(["probe first-lane"]);
      await first.keeper.record(ANSWERED, true, null);
      await second.keeper.due();
      expect(second.woken).toEqual(["second-lane"]);
      expect(second.changes).toEqual(["up 1"]);
    });
  });
  circuitUnreachableCases(name, harness);
}
