/** Log levels, lowest first. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** Structured fields of a log line. Never put a secret here; message text only at debug. */
export type LogFields = Readonly<Record<string, unknown>>;

/** A structured logger. */
export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** True when a level is written, so callers can skip building costly fields. */
  enabled(level: LogLevel): boolean;
}

const RANK: Readonly<Record<LogLevel, number>> = { debug: 0, info: 1, warn: 2, error: 3 };

/**
 * A logger that drops lines below `minLevel` and hands the rest to `emit`; the base of every
 * logger here, whatever it writes to.
 */
export function createLevelLogger(
  emit: (level: LogLevel, msg: string, fields?: LogFields) => void,
  minLevel: LogLevel = "info",
): Logger {
  const min = RANK[minLevel];
  const log = (level: LogLevel) => (msg: string, fields?: LogFields) => {
    if (RANK[level] >= min) emit(level, msg, fields);
  };
  return {
    debug: log("debug"),
    info: log("info"),
    warn: log("warn"),
    error: log("error"),
    enabled: (level) => RANK[level] >= min,
  };
}

/**
 * A logger writing one JSON object per line: `{"time","level","msg",...fields}`.
 * `write` receives the line without its newline.
 */
export function createJsonLogger(
  write: (line: string) => void,
  minLevel: LogLevel = "info",
  now: () => number = Date.now,
): Logger {
  return createLevelLogger(
    (level, msg, fields) => write(JSON.stringify({ time: new Date(now()).toISOString(), level, msg, ...fields })),
    minLevel,
  );
}

/** A logger that drops everything. */
export const silentLogger: Logger = createJsonLogger(() => undefined, "error");
