/**
 * A message's timeline as the admin API and the CLI show it: times as ISO dates, a time past the
 * last JavaScript date (a give-up time under a "never give up" `max_age_ms`) as that date.
 */
import { describe, expect, it } from "vitest";
import { timelineView } from "../../../src/core/timeline/timeline-views.js";

const AT = Date.UTC(2026, 10, 30, 10, 0, 0);

describe("timelineView", () => {
  it("shows a wait past the last date as the last date, rather than failing", () => {
    const view = timelineView(
      {
        id: "m1",
        channel: "webhook",
        conversationId: "alice",
        acceptedAt: AT,
        updatedAt: AT,
        status: "waiting",
        events: [
          { type: "accepted", at: AT },
          { type: "waiting", at: AT, reason: "receiver_down", until: AT + Number.MAX_SAFE_INTEGER },
        ],
      },
      undefined,
    );
    expect(view.events[1]).toMatchObject({ at: "2026-11-30T10:00:00.000Z", until: "+275760-09-13T00:00:00.000Z" });
  });
});
