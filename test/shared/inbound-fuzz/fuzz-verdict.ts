import { expect } from "vitest";

/** The answers every run of the inbound fuzz must reach: a seed that misses one is too weak to keep. */
const REACHED: readonly number[] = [200, 400, 401, 404, 405, 409, 413, 415, 422, 429, 503];

/**
 * The verdict of one run of the inbound fuzz, on any runtime: no answer failed its checks, no
 * request was logged as an unexpected error, and the run reached every answer it is about.
 */
export function expectFuzzVerdict(run: {
  readonly seed: number;
  readonly failures: readonly string[];
  readonly statuses: ReadonlyMap<number | string, number>;
  readonly lines: readonly Record<string, unknown>[];
}): void {
  const { seed, failures, statuses } = run;
  const unexpected = run.lines.filter((line) => line.msg === "unexpected error while handling a request");
  const summary = JSON.stringify([...statuses].sort(([a], [b]) => String(a).localeCompare(String(b))));
  expect(failures.slice(0, 20), `seed ${seed}: ${failures.length} failures; statuses ${summary}`).toEqual([]);
  expect(unexpected, `seed ${seed}: unexpected errors were logged`).toEqual([]);
  for (const status of REACHED) {
    expect(statuses.get(status) ?? 0, `seed ${seed}: no ${status} among ${summary}`).toBeGreaterThan(0);
  }
}
