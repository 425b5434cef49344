import { describe, expect, it } from "vitest";
import { Random } from "../../../shared/seeded-random.js";
import { Coverage, TOP_LEVEL_KEYS } from "./coverage.js";
import { describeDocument } from "./describe-document.js";
import { SEED } from "./fuzz-seed.js";
import { genDocument } from "./generate-document.js";
import { outcomeFaults, validate } from "./result-checks.js";

/**
 * A seeded fuzz of `validateConfig`: valid configurations of every shape, mutated (keys deleted,
 * added, misspelled; values of every JSON type and at every edge; secrets planted; nesting,
 * duplicates, broken references; no object at all). Every bad input gets a clear error, never a
 * throw: each problem names its JSON path and its fix, and never repeats a planted secret.
 * CONFIG_FUZZ_SEED=<n> replays another seed; a failure names its seed and the document.
 */
const DOCUMENTS = 4_000;

describe("the configuration validator under seeded fuzzing", () => {
  it(`gives every bad document a clear problem with path and fix, never a throw (seed ${SEED})`, () => {
    const random = new Random(SEED);
    const coverage = new Coverage();
    const failures: string[] = [];
    for (let index = 0; index < DOCUMENTS; index += 1) {
      const d = genDocument(random, index);
      const outcome = validate(d.document);
      const faults = outcomeFaults(d.document, outcome);
      if ("result" in outcome) {
        coverage.add(outcome.result);
        if (d.pristine && !outcome.result.ok) faults.push("the generator made an invalid configuration");
      }
      for (const fault of faults) failures.push(`${fault} <- ${describeDocument(d)}`);
    }

    expect(failures.slice(0, 10), `seed ${SEED}: ${failures.length} failures; ${coverage.summary()}`).toEqual([]);
    // The fuzz reached what it is about: a seed that does not is too weak to keep.
    const reached = `seed ${SEED}: ${coverage.summary()}, roots ${JSON.stringify([...coverage.roots])}`;
    expect(coverage.ok, reached).toBeGreaterThan(DOCUMENTS / 20);
    expect(coverage.notOk, reached).toBeGreaterThan(DOCUMENTS / 2);
    expect(coverage.withWarnings, reached).toBeGreaterThan(0);
    expect(coverage.roots.size, reached).toBeGreaterThanOrEqual(20);
    expect(coverage.shapes.size, reached).toBeGreaterThanOrEqual(150);
    expect(
      [...TOP_LEVEL_KEYS, "(file)"].filter((key) => !coverage.roots.has(key)),
      `seed ${SEED}: top-level keys no problem was rooted at; ${reached}`,
    ).toEqual([]);
    expect(coverage.missingKinds(), `seed ${SEED}: kinds of problem never given; ${reached}`).toEqual([]);
  });
});
