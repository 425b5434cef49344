/**
 * The receiver circuit's cases for lanes that cannot be reached (on Workers, a conversation's
 * object that does not answer its wake-up): they are tried again after a wait, never at once.
 * Tried at once, the receiver object ran its alarm tens of times a second, without end, with the
 * receiver up (the lane re-added and the alarm set for now) and down (the probe freed with its
 * time in the past). Run over every circuit store with the other cases; runtime-neutral.
 */
import { describe, expect, it } from "vitest";
import { FIRST_UNREACHABLE_WAIT_MS } from "../../src/core/receiver/circuit-keeper.js";
import { ANSWERED, type CircuitCasesHarness, fail, keeperOver, POLICY } from "./circuit-keeper-harness.js";

export function circuitUnreachableCases(name: string, harness: CircuitCasesHarness): void {
  describe(`receiver circuit cases, lanes out of reach: ${name}`, () => {
    it("once up, tries a round that reached no lane again after a wait that doubles, and at once after one that did", async () => {
      const { channel, open } = await harness.stores();
      const clock = { now: 20_000_000 };
      const reachable = new Set(["lane-b"]);
      const { keeper, woken, scheduled } = keeperOver(open(), channel, clock, {
        held: harness.held?.(),
        answers: (key) => (reachable.has(key) ? "woken" : "unreachable"),
      });
      await fail(keeper, 3, "lane-a");
      await keeper.record(ANSWERED, false, null);
      expect(woken).toEqual(["lane-a"]);
      expect(scheduled.at(-1)).toBe(clock.now + FIRST_UNREACHABLE_WAIT_MS);
      clock.now += FIRST_UNREACHABLE_WAIT_MS;
      await keeper.due();
      expect(woken).toEqual(["lane-a", "lane-a"]);
      expect(scheduled.at(-1)).toBe(clock.now + 2 * FIRST_UNREACHABLE_WAIT_MS);
      reachable.add("lane-a");
      clock.now += 2 * FIRST_UNREACHABLE_WAIT_MS;
      await keeper.due();
      expect(woken).toEqual(["lane-a", "lane-a", "lane-a"]);
    });

    it("while down, moves the probe a lane out of reach was granted to the next probe's time, and the next lane", async () => {
      const { channel, open } = await harness.stores();
      const clock = { now: 21_000_000 };
      const { keeper, woken, scheduled } = keeperOver(open(), channel, clock, {
        held: harness.held?.(),
        answers: (key) => (key === "lane-a" ? "unreachable" : "probing"),
      });
      await fail(keeper, 3, "lane-a");
      await keeper.record(null, false, "lane-b");
      clock.now += POLICY.initialDelayMs;
      await keeper.due();
      expect(woken).toEqual(["probe lane-a"]);
      // Not at once: at the next probe's time, when lane-b, next in line now, is the probe.
      expect(scheduled.at(-1)).toBe(clock.now + POLICY.initialDelayMs);
      clock.now += POLICY.initialDelayMs;
      await keeper.due();
      expect(woken).toEqual(["probe lane-a", "probe lane-b"]);
    });
  });
}
