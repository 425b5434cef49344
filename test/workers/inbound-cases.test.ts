import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/workers/index.js";
import { readQueuedMessage } from "../../src/workers/queue-body.js";
import {
  caseRequest,
  checkAnswer,
  INBOUND_CASES,
  INBOUND_CASES_CONFIG,
  INBOUND_CASES_SECRET,
  INBOUND_CASES_SECRET_ENV,
} from "../shared/inbound-cases.js";
import { captureLogs } from "./support/fake-receiver.js";
import { testEnv } from "./support/test-env.js";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the shared inbound cases, inside workerd", () => {
  for (const testCase of INBOUND_CASES) {
    it(testCase.name, async () => {
      captureLogs();
      const env = testEnv(INBOUND_CASES_CONFIG, { [INBOUND_CASES_SECRET_ENV]: INBOUND_CASES_SECRET });
      const response = await worker.fetch(caseRequest("https://channel.example", testCase.request), env);
      const answer = response.clone();
      expect(await checkAnswer(response, testCase.expect)).toBeUndefined();

      // An accepted message is on the queue, under the id the client was given.
      const accepted = testCase.expect.status === 200 && testCase.request.path !== "/healthz";
      expect(env.INBOUND.sent).toHaveLength(accepted ? 1 : 0);
      if (accepted) {
        const body = (await answer.json()) as { message_id: string };
        expect(readQueuedMessage(env.INBOUND.sent[0])?.id).toBe(body.message_id);
      }
    });
  }
});
