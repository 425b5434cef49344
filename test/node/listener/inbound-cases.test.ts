import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { type RunningService, startService } from "../../../src/node/service/start-service.js";
import {
  caseRequest,
  checkAnswer,
  INBOUND_CASES,
  INBOUND_CASES_CONFIG,
  INBOUND_CASES_SECRET,
} from "../../shared/inbound-cases.js";
import { createLogSink } from "../../support/log-sink.js";

let service: RunningService;
let origin: string;

beforeAll(async () => {
  const result = validateConfig(INBOUND_CASES_CONFIG);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  const secrets = new Map(
    result.config.channels.map((channel) => [channel.name ?? channel.type, INBOUND_CASES_SECRET]),
  );
  service = await startService({ config: result.config, secrets, logger: createLogSink("error").logger });
  origin = `http://127.0.0.1:${service.listeners[0]?.port ?? 0}`;
});

afterAll(async () => {
  await service.stop(0);
});

describe("the shared inbound cases, over real HTTP on Node", () => {
  for (const testCase of INBOUND_CASES) {
    it(testCase.name, async () => {
      const response = await fetch(caseRequest(origin, testCase.request));
      expect(await checkAnswer(response, testCase.expect)).toBeUndefined();
    });
  }
});
