/**
 * Queue bodies are checked field by field when read back (they outlive deployments): a dead
 * letter's error keeps what the upstream said in its own words, which the admin API shows as
 * `error.detail`, and a job's last error keeps it too.
 */
import { describe, expect, it } from "vitest";
import { readDeadLetterBody, readJob } from "../../src/workers/queue-body.js";
import { queuedMessage } from "./support/queue-messages.js";

const ERROR = {
  code: "brain_failed",
  message: 'brain "bot": the bot answered 400',
  retryable: false,
  status: 400,
  detail: "invalid input: my card is 4111",
};

describe("queue bodies read back", () => {
  it("keep a dead letter's error with its status and detail", () => {
    const job = { message: queuedMessage({ conversationId: "c1" }), delivered: 0, attempts: 1, lastError: ERROR };
    const body = JSON.parse(JSON.stringify({ deadLetter: { job, error: ERROR, attempts: 1, diedAt: 1 } })) as unknown;
    const read = readDeadLetterBody(body);
    expect(read !== undefined && "deadLetter" in read ? read.deadLetter.error : undefined).toEqual(ERROR);
    expect(readJob(JSON.parse(JSON.stringify(job)))?.lastError).toEqual(ERROR);
  });

  it("leave out a detail or a status that is not there", () => {
    const { detail: _detail, status: _status, ...bare } = ERROR;
    const job = { message: queuedMessage({ conversationId: "c2" }), delivered: 0, attempts: 1 };
    const read = readDeadLetterBody({ deadLetter: { job, error: bare, attempts: 1, diedAt: 1 } });
    expect(read !== undefined && "deadLetter" in read ? read.deadLetter.error : undefined).toStrictEqual(bare);
  });
});
