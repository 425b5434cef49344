/**
 * A conversation object's side of the receiver circuit, inside workerd: the probe the receiver
 * object granted is taken by the conversation's next run only while its time lasts, so that a run
 * held past it (a long brain call of the conversation) never posts beside the next probe granted.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { newJob } from "../../src/core/lifecycle/job.js";
import { createJsonLogger } from "../../src/core/log/logger.js";
import { ReceiverLink } from "../../src/workers/receiver/receiver-link.js";
import { learnReceiver } from "../../src/workers/receiver/receiver-views.js";
import { queuedMessage } from "./support/queue-messages.js";

describe("the probe a conversation object was granted", () => {
  const link = () =>
    new ReceiverLink(
      () => env.RECEIVERS,
      () => createJsonLogger(() => undefined, "error"),
    );

  it("is taken once while its time lasts, and runs as waiting once it ran out", () => {
    const channel = `link-${crypto.randomUUID()}`;
    learnReceiver(channel, { down: true, failing: true });
    const job = newJob(queuedMessage({ conversationId: "c1", channel, text: "hi" }));

    const granted = link();
    granted.grantProbe(Date.now() + 60_000);
    expect(granted.client.admit(job)).toBe("probe");
    expect(granted.client.admit(job)).toBe("wait");

    const late = link();
    late.grantProbe(Date.now() - 1);
    expect(late.client.admit(job)).toBe("wait");

    // From a receiver object of an earlier version, which sends no time: a probe as before.
    const unbounded = link();
    unbounded.grantProbe();
    expect(unbounded.client.admit(job)).toBe("probe");
  });
});
