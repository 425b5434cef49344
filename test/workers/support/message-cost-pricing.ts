/**
 * What one message costs on Workers, as docs/workers.md counts and prices it: the billed and
 * limited things it took, the row of the page's table they make, and the dollars for a million
 * messages at the prices the page quotes. test/workers/support/message-cost-meter.ts counts them.
 */

/** The billed and limited things one message took, end to end. */
export interface MessageCost {
  /** `fetch` invocations, and queue consumer invocations (a batch of one message here). */
  workerInvocations: number;
  /** Writes, reads and deletes of queue messages (each up to 64 KB). */
  queueOperations: number;
  /** RPC calls to Durable Objects and alarm invocations. */
  objectRequests: number;
  rowsRead: number;
  /** SQL rows written, and one per `setAlarm`. */
  rowsWritten: number;
  /** Outbound requests (brain, receiver) and binding calls (queue sends, Durable Object calls). */
  subrequests: number;
}

/** docs/workers.md, "What a million messages cost", prices these rows. */
export const row = (cost: MessageCost) => [
  cost.workerInvocations,
  cost.queueOperations,
  cost.objectRequests,
  cost.rowsRead,
  cost.rowsWritten,
  cost.subrequests,
];

/** The Workers Paid prices docs/workers.md quotes, in dollars per million of each. */
const PRICE = {
  workerRequest: 0.3,
  cpuMs: 0.02,
  queueOperation: 0.4,
  objectRequest: 0.15,
  gbSecond: 12.5,
  rowRead: 0.001,
  rowWritten: 1,
};

/** A Durable Object's memory as its duration is billed, in GB. */
const OBJECT_GB = 0.128;

/** The hand-over's wait in production (`HAND_OVER_WAIT_MS` of `lane-head.ts`). */
export const HAND_OVER_WAIT_MS = 250;

/**
 * Dollars for a million messages that each cost `cost`, with the conversation object busy
 * `busyMs` per message and about 1 ms of CPU per Worker invocation, as the page prices them.
 */
export function perMillion(cost: MessageCost, busyMs: number): number {
  return (
    cost.workerInvocations * (PRICE.workerRequest + PRICE.cpuMs) +
    cost.queueOperations * PRICE.queueOperation +
    cost.objectRequests * PRICE.objectRequest +
    (busyMs / 1000) * OBJECT_GB * PRICE.gbSecond +
    cost.rowsRead * PRICE.rowRead +
    cost.rowsWritten * PRICE.rowWritten
  );
}
