import { isRecord } from "../../../../src/core/is-record.js";
import type { Random } from "../../../shared/seeded-random.js";
import { configMutation } from "./config-mutations.js";
import { genJson } from "./fuzz-values.js";
import { genericMutation } from "./generic-mutations.js";
import { genValidConfig } from "./valid-config.js";

/** One generated document, with how it was made (to read in a failure; the seed and index replay it). */
export interface FuzzDocument {
  readonly index: number;
  readonly document: unknown;
  /** Validates as made: no mutation touched it. */
  readonly pristine: boolean;
  readonly steps: readonly string[];
}

/** What a file holds when it is not one object: a value of every other JSON type. */
function notAnObject(r: Random): unknown {
  return r.pick<unknown>([
    null,
    true,
    0,
    -0,
    1e308,
    "",
    "{}",
    "x".repeat(100_000),
    [],
    [genValidConfig(r)],
    [null],
    genJson(r, 2),
  ]);
}

/**
 * Document `index`: mostly a valid configuration with one to six mutations (schema-blind ones
 * and ones that break a rule between keys), else a valid one untouched or no object at all.
 */
export function genDocument(r: Random, index: number): FuzzDocument {
  return r.weighted<FuzzDocument>([
    [1, () => ({ index, document: genValidConfig(r), pristine: true, steps: ["valid"] })],
    [0.5, () => ({ index, document: notAnObject(r), pristine: false, steps: ["not an object"] })],
    [
      8.5,
      () => {
        const holder: { root: unknown } = { root: genValidConfig(r) };
        const steps: string[] = [];
        for (let count = r.between(1, 6); count > 0; count -= 1) {
          const doc = holder.root;
          steps.push(isRecord(doc) && r.chance(0.4) ? configMutation(r, doc) : genericMutation(r, holder));
        }
        return { index, document: holder.root, pristine: false, steps };
      },
    ],
  ]);
}
