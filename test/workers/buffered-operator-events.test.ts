/**
 * The isolate's brain events between two runs of its objects: past the buffer's capacity the
 * oldest goes, and an operator learns of it from a warning and the `dropped` metric, as from the
 * sender's own drops.
 */
import { describe, expect, it } from "vitest";
import { createJsonLogger } from "../../src/core/log/logger.js";
import { noopMetrics } from "../../src/core/metrics/noop-metrics.js";
import type { OperatorEventInput } from "../../src/core/operator-events/operator-event.js";
import { BRAIN_EVENT_CAPACITY, BufferedOperatorEvents } from "../../src/workers/buffered-operator-events.js";

/** A real JSON-lines logger whose lines are kept. */
function logSink(): { logger: ReturnType<typeof createJsonLogger>; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = createJsonLogger((line) => lines.push(JSON.parse(line) as Record<string, unknown>), "info");
  return { logger, lines };
}

function paused(index: number): OperatorEventInput {
  const brain = `brain-${index}`;
  return { type: "brain.paused", brain, data: { brain, status: 429, until: "2026-12-01T00:00:00.000Z" } };
}

describe("brain events buffered in the isolate", () => {
  it("tells each event dropped past the capacity with a warning and the dropped metric", () => {
    const { logger, lines } = logSink();
    const counted: string[] = [];
    const metrics = {
      ...noopMetrics,
      operatorEvent: (type: string, outcome: string) => counted.push(`${type} ${outcome}`),
    };
    const events = new BufferedOperatorEvents(logger, metrics);
    for (let index = 0; index < BRAIN_EVENT_CAPACITY + 2; index++) events.emit(paused(index));

    const drained = events.drain();
    expect(drained).toHaveLength(BRAIN_EVENT_CAPACITY);
    expect(drained[0]).toMatchObject({ brain: "brain-2" });
    expect(counted).toEqual(["brain.paused dropped", "brain.paused dropped"]);
    const warnings = lines.filter((line) => line.level === "warn");
    expect(warnings.map((line) => [line.msg, line.brain])).toEqual([
      [`operator event dropped: more than ${BRAIN_EVENT_CAPACITY} brain events wait to be sent`, "brain-0"],
      [`operator event dropped: more than ${BRAIN_EVENT_CAPACITY} brain events wait to be sent`, "brain-1"],
    ]);
  });

  it("drops nothing while the events fit", () => {
    const { logger, lines } = logSink();
    const events = new BufferedOperatorEvents(logger, noopMetrics);
    for (let index = 0; index < BRAIN_EVENT_CAPACITY; index++) events.emit(paused(index));
    expect(events.drain()).toHaveLength(BRAIN_EVENT_CAPACITY);
    expect(events.drain()).toEqual([]);
    expect(lines).toEqual([]);
  });
});
