import { createJsonLogger, type Logger, type LogLevel } from "../../src/core/log/logger.js";

/** A real JSON-lines logger whose lines are kept for assertions. */
export function createLogSink(level: LogLevel = "debug"): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = createJsonLogger((line) => lines.push(JSON.parse(line) as Record<string, unknown>), level);
  return { logger, lines };
}
