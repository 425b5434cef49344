/**
 * A message of several replies whose first reply the receiver answers and whose second it does
 * not: the answer ends the row of failures (or the outage) before the failure counts, as
 * docs/delivery.md says ("any answer ... starts the count again"; "up again at the first
 * answer, the probe's or any other"). The run reported only its failure, so a receiver that
 * throttles bursts was taken down while it answered, and a probe that got its answer left the
 * receiver down. Through the consumer's real run and the core's ruling.
 */
import { expect, it } from "vitest";
import { newJob } from "../../../src/core/lifecycle/job.js";
import { passCircuit } from "../../../src/core/receiver/pass-circuit.js";
import type { CircuitPolicy } from "../../../src/core/receiver/receiver-circuit.js";
import { queued, setup, T0 } from "./job-runner-harness.js";

const POLICY: CircuitPolicy = {
  failuresToOpen: 5,
  initialDelayMs: 1_000,
  maxDelayMs: 600_000,
  probeTimeoutMs: 25_000,
  target: "http://127.0.0.1:8091",
};

it("takes a failure after an answer of the same run for the first of a row, not the fifth: the receiver stays up", async () => {
  const { run } = await setup({ answers: [200, 503] });
  const outcome = await run(newJob(queued("one|two")));
  expect(outcome).toMatchObject({ kind: "unanswered", answeredBefore: true, verdict: { kind: "retry" } });
  const ruling = passCircuit(outcome, {
    state: { failures: 4, target: POLICY.target },
    policy: POLICY,
    admission: "send",
    now: T0,
  });
  expect(ruling).toMatchObject({ state: { failures: 1 }, outcome: { kind: "retry" } });
  expect(ruling.change).toBeUndefined();
});

it("brings the receiver up when the probe's first reply was answered, and retries the second as any failure", async () => {
  const { run } = await setup({ answers: [200, 503] });
  const outcome = await run(newJob(queued("one|two")), undefined, "probe");
  const down = { since: T0 - 60_000, probeAt: T0, probes: 3, probingUntil: T0 + 25_000 };
  const ruling = passCircuit(outcome, {
    state: { failures: 5, target: POLICY.target, down },
    policy: POLICY,
    admission: "probe",
    now: T0,
  });
  expect(ruling).toMatchObject({ change: "up", state: { failures: 1 }, outcome: { kind: "retry" } });
  expect(ruling.state.down).toBeUndefined();
});
