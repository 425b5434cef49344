import { errorMessage } from "../core/channel-error.js";
import { formatProblem } from "../core/config/config-problem.js";
import { channelName } from "../core/config/validate-config.js";
import { createJsonLogger, type Logger } from "../core/log/logger.js";
import { readConfigFile } from "./read-config-file.js";
import { startService } from "./service/start-service.js";

/** Where the service reads its environment and writes its lines; the real process by default. */
export interface RunOptions {
  readonly configPath: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly write?: (line: string) => void;
  /**
   * The delivery thread's module (dist/delivery-worker.js). Without it the consumer runs on
   * the main thread, which is what tests of this function use.
   */
  readonly deliveryWorker?: URL;
}

/**
 * Runs the service until SIGTERM or SIGINT, then shuts down gracefully. Resolves with the
 * process exit status: 0 after a clean shutdown, 1 when the service could not start.
 */
export async function runService(options: RunOptions): Promise<number> {
  const env = options.env ?? process.env;
  const write = options.write ?? ((line: string) => process.stdout.write(`${line}\n`));
  const bootLogger = createJsonLogger(write, "info");

  const result = await readConfigFile(options.configPath);
  if (!result.ok) {
    for (const problem of result.problems) bootLogger.error(`invalid configuration: ${formatProblem(problem)}`);
    return 1;
  }
  const { config } = result;
  const logger: Logger = createJsonLogger(write, config.log_level);

  const secrets = new Map<string, string>();
  let missing = false;
  for (const channel of config.channels) {
    const value = env[channel.token_env];
    if (value === undefined || value === "") {
      logger.error(
        `environment variable ${channel.token_env} is ${value === undefined ? "not set" : "empty"}: it must hold the inbound secret of channel "${channelName(channel)}". Generate one with: export ${channel.token_env}="$(npx webhook-channel secret)"`,
        { variable: channel.token_env },
      );
      missing = true;
    } else secrets.set(channelName(channel), value);
  }
  if (missing) return 1;

  let service: Awaited<ReturnType<typeof startService>>;
  try {
    service = await startService({
      config,
      secrets,
      logger,
      env: (name) => env[name],
      ...(options.deliveryWorker === undefined ? {} : { deliveryThread: { entry: options.deliveryWorker, env } }),
    });
  } catch (error) {
    logger.error(`cannot start: ${errorMessage(error)}`);
    return 1;
  }

  return new Promise<number>((resolve) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals): void => {
      if (stopping) {
        logger.warn(`${signal} received again: exiting without waiting`);
        resolve(1);
        return;
      }
      stopping = true;
      logger.info("shutting down: refusing new messages, finishing accepted ones", {
        signal,
        timeout_ms: config.shutdown_timeout_ms,
      });
      service
        .stop(config.shutdown_timeout_ms)
        .then(({ left, fate }) => {
          if (left.length === 0) logger.info("shutdown complete: every accepted message was finished");
          else if (fate === "kept") {
            logger.warn(
              "shutdown timeout reached: unfinished messages stay in state_dir and resume at the next start",
              {
                count: left.length,
                message_ids: left,
              },
            );
          } else {
            logger.error("shutdown timeout reached: these accepted messages were not finished and are lost", {
              count: left.length,
              message_ids: left,
            });
          }
          resolve(0);
        })
        .catch((error: unknown) => {
          logger.error(`shutdown failed: ${errorMessage(error)}`);
          resolve(1);
        });
    };
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
  });
}
