import type { Random } from "../seeded-random.js";
import type { FuzzCase, World } from "./fuzz-case.js";
import type { FuzzTargets } from "./fuzz-fixture.js";
import { WEBHOOK_SECRET } from "./fuzz-secrets.js";
import { genCase, genWorld } from "./generate-case.js";

/** A burst: requests sent at once, with the world they all run in. */
export interface Burst {
  readonly world: World;
  readonly cases: readonly FuzzCase[];
}

/**
 * Burst number `burst`, its cases numbered from `firstIndex`: `size` POSTs sharing one
 * Idempotency-Key, to be sent at once (409s while the first is being stored), in one world per
 * burst so that the cases still replay from the seed alone. A key of its own per burst, but
 * every fourth burst takes an earlier one again (a 422); mostly the same well-formed message,
 * so that its copies meet while the first is stored, else a generated request with that key.
 */
export function genBurst(r: Random, f: FuzzTargets, burst: number, firstIndex: number, size: number): Burst {
  const world: World = { ...genWorld(r), queueMode: r.chance(0.7) ? "async" : "sync" };
  const key = burst % 4 === 3 ? `burst-${burst - 3}` : `burst-${burst}`;
  const text = `burst ${burst}`;
  const cases = Array.from({ length: size }, (_, index): FuzzCase => {
    const c = genCase(r, f, firstIndex + index);
    if (r.chance(0.8)) {
      const headers: [string, string][] = [
        ["authorization", `Bearer ${WEBHOOK_SECRET}`],
        ["content-type", "application/json"],
        ["idempotency-key", key],
      ];
      const body = JSON.stringify({ sender_id: "burst", text });
      return { ...c, method: "POST", path: "/webhook", headers, body, kind: "burst", world };
    }
    const headers = c.headers.filter(([name]) => name !== "idempotency-key" && name !== "x-fuzz-peer");
    headers.push(["idempotency-key", key]);
    return { ...c, method: "POST", path: r.chance(0.8) ? "/webhook" : "/hooks/in", headers, world };
  });
  return { world, cases };
}
