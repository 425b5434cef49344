/**
 * A run admitted to send while the receiver was up, whose receiver goes down while it asks its
 * brain: it holds its replies, spending no attempt, instead of posting into the outage. One that
 * had a POST answered goes on: the answer is the receiver's latest word. Before, every run in flight when the receiver went down made one POST
 * more, each waiting out its time limit on a receiver that hangs.
 */
import { expect, it } from "vitest";
import { newJob } from "../../../src/core/lifecycle/job.js";
import { queued, setup, textsOf } from "./job-runner-harness.js";

it("holds the replies of a run whose receiver went down while its brain was asked", async () => {
  const { consumer, poster } = await setup({ answers: [200] });
  const outcome = await consumer.run(
    newJob(queued("hello")),
    { firstSequence: 1, save: () => undefined, receiverDown: () => true },
    "send",
  );
  expect(outcome).toMatchObject({ kind: "wait", job: { delivered: 0, attempts: 0 } });
  expect(poster.posted).toEqual([]);
});

it("posts the rest of a message once one of its POSTs was answered: that answer is the receiver's", async () => {
  const { consumer, poster } = await setup({ answers: [200, 200] });
  let down = false;
  const outcome = await consumer.run(
    newJob(queued("one|two")),
    {
      firstSequence: 1,
      save: (job) => {
        if (job.delivered === 1) down = true;
      },
      receiverDown: () => down,
    },
    "send",
  );
  expect(outcome).toMatchObject({ kind: "done", answered: true });
  expect(textsOf(poster.posted)).toEqual(["one", "two"]);
});

it("posts as the probe whatever the view says: the probe is how the receiver is found back", async () => {
  const { consumer, poster } = await setup({ answers: [200] });
  const outcome = await consumer.run(
    newJob(queued("hello")),
    { firstSequence: 1, save: () => undefined, receiverDown: () => true },
    "probe",
  );
  expect(outcome).toMatchObject({ kind: "done" });
  expect(textsOf(poster.posted)).toEqual(["hello"]);
});
