/**
 * The configuration's warnings about a message timeline that would drop messages still under way:
 * a window no longer than a message may wait, a size bound below what the buffers hold.
 */
import { describe, expect, it } from "vitest";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { configDocument } from "../../support/configs.js";

const ADMIN = { admin: { token_env: "ADMIN_SECRET" } };

function timelineWarningsOf(webhook: Record<string, unknown>, extra: Record<string, unknown>) {
  const result = validateConfig(configDocument(webhook, extra));
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.warnings.filter((warning) => warning.path.startsWith("timeline."));
}

describe("the timeline's warnings", () => {
  it("says nothing of the defaults: the window outlasts the default max age, the bound the default buffer", () => {
    expect(timelineWarningsOf({}, ADMIN)).toEqual([]);
    expect(timelineWarningsOf({}, { state_dir: "/var/lib/webhook-channel" })).toEqual([]);
  });

  it("warns of a window that leaves less than an hour past a channel's max age, naming the hours that do", () => {
    expect(
      timelineWarningsOf({ delivery: { max_age_ms: 90_000_000 } }, { ...ADMIN, timeline: { retention_hours: 24 } }),
    ).toEqual([
      {
        path: "timeline.retention_hours",
        message:
          "24 hours leaves less than an hour past channels[0].webhook.delivery.max_age_ms (90000000 ms): a message that waits that long (a receiver down) leaves the timeline before it is delivered or dead-lettered",
        fix: "raise timeline.retention_hours to 26 or more",
      },
    ]);
    // Exactly as long, or a millisecond longer, leaves no room.
    expect(timelineWarningsOf({}, { ...ADMIN, timeline: { retention_hours: 24 } })).toHaveLength(1);
    const justUnder = { delivery: { max_age_ms: 86_399_999 } };
    expect(timelineWarningsOf(justUnder, { ...ADMIN, timeline: { retention_hours: 24 } })).toHaveLength(1);
    expect(timelineWarningsOf({}, { ...ADMIN, timeline: { retention_hours: 25 } })).toEqual([]);
  });

  it("warns of a bound below the buffers, the in-memory default counted in memory", () => {
    expect(timelineWarningsOf({ buffer_capacity: 20_000 }, ADMIN)).toEqual([
      expect.objectContaining({
        path: "timeline.max_messages",
        fix: "raise timeline.max_messages to 20000 or more, or lower buffer_capacity",
      }),
    ]);
    expect(timelineWarningsOf({ buffer_capacity: 20_000 }, { state_dir: "/var/lib/webhook-channel" })).toEqual([]);
    expect(
      timelineWarningsOf({ buffer_capacity: 2_000 }, { state_dir: "/var/lib/x", timeline: { max_messages: 1_500 } }),
    ).toEqual([expect.objectContaining({ path: "timeline.max_messages" })]);
  });

  it("says nothing while nothing is recorded: the timeline off, or in memory without admin", () => {
    const short = { delivery: { max_age_ms: 90_000_000 }, buffer_capacity: 20_000 };
    expect(timelineWarningsOf(short, {})).toEqual([]);
    expect(timelineWarningsOf(short, { ...ADMIN, timeline: { retention_hours: 0 } })).toEqual([]);
    expect(timelineWarningsOf(short, { ...ADMIN, timeline: { max_messages: 0 } })).toEqual([]);
  });
});
