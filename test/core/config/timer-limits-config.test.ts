import { describe, expect, it } from "vitest";
import { configJsonSchema } from "../../../src/core/config/config-json-schema.js";
import { formatProblem } from "../../../src/core/config/config-problem.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { configDocument } from "../../support/configs.js";
import { problemsOf } from "./validate-config-problems.js";

// Every millisecond setting that ends up as a timer is capped at the longest delay a timer takes:
// a longer one fires at once on Node (with a TimeoutOverflowWarning), which made a stop give up
// at once and every reply POST time out at once.

const LONGEST = 2_147_483_647;

/** A document with one millisecond setting, and the JSON path it is reported at. */
const SETTINGS: readonly [string, (value: number) => unknown][] = [
  ["shutdown_timeout_ms", (value) => configDocument({}, { shutdown_timeout_ms: value })],
  ["channels[0].webhook.delivery.timeout_ms", (value) => configDocument({ delivery: { timeout_ms: value } })],
  [
    "channels[0].webhook.delivery.initial_delay_ms",
    (value) => configDocument({ delivery: { initial_delay_ms: value } }),
  ],
  ["channels[0].webhook.delivery.max_delay_ms", (value) => configDocument({ delivery: { max_delay_ms: value } })],
];

describe("millisecond settings that become timers", () => {
  it.each(SETTINGS)("refuse %s above the longest timer, naming the path and the limit", (path, document) => {
    expect(problemsOf(document(3_000_000_000)).map(formatProblem)).toEqual([
      `${path}: must be at most ${LONGEST} ms (about 24.8 days), the longest a timer can wait. Fix: change the value to fit the limit above`,
    ]);
    expect(problemsOf(document(LONGEST + 1))[0]?.path).toBe(path);
  });

  it.each(SETTINGS)("accept %s at the longest timer", (_path, document) => {
    expect(validateConfig(document(LONGEST)).ok).toBe(true);
  });

  it("leave delivery.max_age_ms uncapped: it is a deadline compared with the clock, not a timer", () => {
    const result = validateConfig(configDocument({ delivery: { max_age_ms: 90 * 86_400_000 } }));
    expect(result.ok && result.config.channels[0]?.webhook.delivery.max_age_ms).toBe(90 * 86_400_000);
  });

  it("are capped in config.schema.json too, so that editors flag them", () => {
    const schema = JSON.stringify(configJsonSchema());
    const properties = configJsonSchema().properties as Record<string, { maximum?: number }>;
    expect(properties.shutdown_timeout_ms?.maximum).toBe(LONGEST);
    expect(schema.match(new RegExp(`"maximum":${LONGEST}`, "g"))).toHaveLength(4);
  });
});
