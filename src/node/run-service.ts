import { resolve } from "node:path";
import { errorMessage } from "../core/channel-error.js";
import { formatProblem } from "../core/config/config-problem.js";
import type { Config } from "../core/config/config-schema.js";
import { findWeakSecrets } from "../core/config/preflight/weak-secret.js";
import { createJsonLogger, type Logger } from "../core/log/logger.js";
import { MAX_TIMER_MS } from "../core/timer-limit.js";
import { bindOverrideOf } from "./bind-override.js";
import type { HeldHangUps, HeldStops } from "./held-signals.js";
import { loadServiceInputs, type ServiceInputs } from "./load-service-inputs.js";
import { startService } from "./service/start-service.js";
import { watchStopSignals } from "./stop-signals.js";
import { startTelemetry } from "./telemetry/start-telemetry.js";

/** How often a running service asks whether another process took its state_dir. */
const CLAIM_CHECK_MS = 1_000;
/** The period of the timer that holds the process open while it stops; its ticks do nothing. */
const HOLD_TICK_MS = 60_000;
/**
 * How long past `shutdown_timeout_ms` the stop holds the process: the requests' grace, the
 * threads' close and the telemetry's last export all fit in it.
 */
const STOP_HOLD_GRACE_MS = 60_000;

/** Where the service reads its environment and writes its lines; the real process by default. */
export interface RunOptions {
  readonly configPath: string;
  /** `--bind`: every channel listens there (see `parseServiceArgs`); else `WEBHOOK_CHANNEL_BIND`, else the file's. */
  readonly bind?: string | undefined;
  readonly env?: NodeJS.ProcessEnv;
  readonly write?: (line: string) => void;
  /** SIGHUP as the entry held it while the modules loaded: released once this function takes it. */
  readonly heldHangUps?: HeldHangUps;
  /** SIGTERM and SIGINT as the entry held them while the modules loaded: released once this function takes them. */
  readonly heldStops?: HeldStops;
  /**
   * The delivery thread's module (dist/delivery-worker.js). Without it the consumer runs on
   * the main thread, which is what tests of this function use.
   */
  readonly deliveryWorker?: URL;
  /** The timeline writer thread's module (dist/timeline-writer.js); without it the timeline is written on the event loop. */
  readonly timelineWriter?: URL;
}

/**
 * Runs the service until SIGTERM or SIGINT, then shuts down gracefully; SIGHUP reloads the
 * configuration file and the secrets meanwhile. A stop signal that comes during the start is
 * kept: the service stops gracefully as soon as the start is done (or does not start at all,
 * when it came while the configuration was still being read). Resolves with the process exit status: 0 after a
 * clean shutdown, 1 when the service could not start or a second signal cut the wait short.
 */
export async function runService(options: RunOptions): Promise<number> {
  const env = options.env ?? process.env;
  const write = options.write ?? ((line: string) => process.stdout.write(`${line}\n`));
  const bootLogger = createJsonLogger(write, "info");
  const bind = bindOverrideOf(options.bind, env);

  // The signals whose default is to end the process are taken over before anything else: a
  // reload asked for during the start cannot kill the service, and a stop asked for during it
  // (a supervisor that stops the service as soon as it logs `listening`) is carried out,
  // gracefully, as soon as the start is done.
  let onReload = (): void => bootLogger.warn("SIGHUP received before the service started: not reloading");
  const hangUp = (): void => onReload();
  process.on("SIGHUP", hangUp);
  if ((options.heldHangUps?.release() ?? 0) > 0) onReload();
  const signals = watchStopSignals(() => options.heldStops?.release() ?? []);
  /** Ends a run in which the service never started: nothing is left to stop or reload. */
  const ended = (code: number): number => {
    process.off("SIGHUP", hangUp);
    signals.release();
    return code;
  };
  let log: Logger = bootLogger;
  let started = false;
  void signals.first.then((signal) => {
    if (!started) log.info(`${signal} received during the start: stopping as soon as it can`);
  });

  const inputs = await loadServiceInputs(options.configPath, env, bind);
  if (!inputs.ok) {
    for (const error of inputs.errors) bootLogger.error(error.msg, error.fields);
    return ended(1);
  }
  let config: Config = inputs.config;
  const logger: Logger = createJsonLogger(write, config.log_level);
  log = logger;
  warnConfiguration(logger, inputs);
  // From the process's environment, which the OpenTelemetry SDK reads (the delivery thread starts its own).
  const telemetry = await startTelemetry(logger, { announce: true });
  /** Exports the spans still buffered: the last ones of a stop are not lost. */
  const flushTelemetry = (): Promise<void> =>
    telemetry === undefined
      ? Promise.resolve()
      : telemetry.shutdown().catch((error: unknown) => {
          logger.warn("telemetry: cannot export the last spans", { error: errorMessage(error) });
        });

  const early = signals.received();
  if (early !== undefined) {
    logger.info("start abandoned before anything was opened", { signal: early });
    await flushTelemetry();
    return ended(0);
  }

  const starting = startService({
    config,
    secrets: inputs.secrets,
    logger,
    env: inputs.env,
    configPath: resolve(options.configPath),
    ...(options.deliveryWorker === undefined ? {} : { deliveryThread: { entry: options.deliveryWorker, env } }),
    ...(options.timelineWriter === undefined ? {} : { timelineWriter: options.timelineWriter }),
    ...(telemetry === undefined ? {} : { telemetry }),
  }).then(
    (service) => ({ service }),
    (error: unknown) => ({ error }),
  );
  // A second signal does not wait for the start either.
  const outcome = await Promise.race([starting, signals.second.then((signal) => ({ signal }))]);
  if ("signal" in outcome) {
    logger.warn(`${outcome.signal} received again: exiting without waiting`);
    return 1;
  }
  if ("error" in outcome) {
    logger.error(`cannot start: ${errorMessage(outcome.error)}`);
    await flushTelemetry();
    return ended(1);
  }
  const { service } = outcome;
  started = true;
  // After the start's own lines, so that the service is known to be up when this is read.
  warnWeakSecrets(logger, inputs);

  return new Promise<number>((resolve) => {
    let stopping = false;
    /**
     * SIGHUP: the file and the secrets (`*_FILE` files again) are read and validated as at a
     * start; the service swaps them in or refuses them, and carries on either way. Variables
     * set in the environment itself cannot change: a process's environment is fixed.
     */
    onReload = (): void => {
      if (stopping) {
        logger.warn("SIGHUP received while shutting down: not reloading");
        return;
      }
      logger.info("SIGHUP received: reloading the configuration and secrets", { config: options.configPath });
      reload()
        .then((next) => {
          if (next !== undefined) config = next;
        })
        .catch((error: unknown) => logger.error(`reload failed: ${errorMessage(error)}`));
    };
    const reload = async (): Promise<Config | undefined> => {
      const next = await loadServiceInputs(options.configPath, env, bind);
      if (!next.ok) {
        for (const error of next.errors) logger.error(`reload refused: ${error.msg}`, error.fields);
        logger.error("reload refused: the service carries on with the configuration it had");
        return undefined;
      }
      const result = await service.reload(next);
      if (!result.ok) return undefined;
      warnConfiguration(logger, next);
      warnWeakSecrets(logger, next);
      return next.config;
    };
    void signals.second.then(async (signal) => {
      const { left, fate } = await service.abandon().catch(() => ({ left: [], fate: "lost" as const }));
      if (left.length > 0 && fate === "lost") {
        logger.error(`${signal} received again: exiting without waiting; these accepted messages are lost`, {
          count: left.length,
          message_ids: left,
        });
      } else logger.warn(`${signal} received again: exiting without waiting`, { unfinished: left.length });
      resolve(1);
    });
    // Another process took the state_dir: nothing here may be written any more, and what was
    // stored is the other process's to run. Said at once, and the process ends (status 1) rather
    // than answer 503 behind a healthy /healthz until someone looks.
    const claim = service.claimLost;
    const watching =
      claim === undefined
        ? undefined
        : setInterval(() => {
            const lost = claim();
            if (lost === undefined || stopping) return;
            clearInterval(watching);
            logger.error(`state lost: ${lost}; stopping. Run one process per state_dir`);
            beginStop({ reason: "state_lost" }, 0, 1);
          }, CLAIM_CHECK_MS);
    watching?.unref();
    // Already settled when the signal came during the start: the stop begins at once.
    void signals.first.then((signal) => beginStop({ signal }, config.shutdown_timeout_ms, 0));
    function beginStop(cause: Record<string, string>, timeoutMs: number, status: number): void {
      if (stopping) return;
      stopping = true;
      clearInterval(watching);
      logger.info("shutting down: refusing new messages, finishing accepted ones", { ...cause, timeout_ms: timeoutMs });
      // The stop may wait only on timers that do not hold the process (an operator event's
      // retry, a bound of its own); without this the process would end mid-stop, with an error
      // code and without the stop's last lines. Held for as long as a stop may take, not longer.
      const hold = setInterval(() => undefined, HOLD_TICK_MS);
      setTimeout(
        () => clearInterval(hold),
        Math.min(MAX_TIMER_MS, config.shutdown_timeout_ms + STOP_HOLD_GRACE_MS),
      ).unref();
      service
        .stop(timeoutMs)
        .then(({ left, fate, unloaded }) => {
          if (left.length === 0 && !unloaded) logger.info("shutdown complete: every accepted message was finished");
          else if (fate !== "lost") {
            logger.warn(
              fate === "kept"
                ? "shutdown timeout reached: unfinished messages stay in state_dir and resume at the next start"
                : "shutdown timeout reached: unfinished messages stay in Postgres; the other replicas take them over now",
              { count: left.length, message_ids: left, ...(unloaded ? { more_not_loaded: true } : {}) },
            );
          } else {
            logger.error("shutdown timeout reached: these accepted messages were not finished and are lost", {
              count: left.length,
              message_ids: left,
            });
          }
          return status;
        })
        .catch((error: unknown) => {
          logger.error(`shutdown failed: ${errorMessage(error)}`);
          return 1;
        })
        .then(async (code) => {
          await flushTelemetry();
          resolve(code);
        })
        .catch(() => resolve(1))
        .finally(() => clearInterval(hold));
    }
  });
}

/** Logs a `warn` line per warning of the configuration (what `config check` prints as `warning`). */
function warnConfiguration(logger: Logger, inputs: Extract<ServiceInputs, { ok: true }>): void {
  for (const warning of inputs.warnings)
    logger.warn(`configuration: ${formatProblem(warning)}`, { path: warning.path });
}

/**
 * Logs a `warn` line per weak channel or admin secret (`weakSecretReason`), naming the variable,
 * never the value. Only a warning: a placeholder such as the demo's `dev-secret` on loopback
 * must still start in one command; `config check --preflight` is where it counts as a problem.
 */
function warnWeakSecrets(logger: Logger, inputs: Extract<ServiceInputs, { ok: true }>): void {
  for (const weak of findWeakSecrets(inputs.config, inputs.env)) {
    logger.warn(
      `weak secret: ${weak.message}; whoever guesses it is let in. Make a strong one with: npx webhook-channel secret`,
      { variable: weak.variable, path: weak.path },
    );
  }
}
