import { parseArgs } from "node:util";
import { configJsonSchema } from "../core/config/config-json-schema.js";
import { parseServiceArgs } from "../node/parse-service-args.js";
import { runService } from "../node/run-service.js";
import { runConfigCheck } from "./config-check.js";
import { runDeadLetters, UsageError } from "./dead-letters-command.js";
import { newSecret } from "./new-secret.js";

/** Where the CLI reads and writes; the real process by default. */
export interface CliIo {
  readonly env: NodeJS.ProcessEnv;
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  /** The delivery thread's module for `serve` (see RunOptions); absent in tests. */
  readonly deliveryWorker?: URL;
}

/** Exit status of a usage error (unknown command or option, missing argument). */
export const EXIT_USAGE = 2;

const USAGE = `usage:
  webhook-channel serve [--config <file>]              start the service (default ./config.json)
  webhook-channel config check [--preflight] <file>    validate a configuration file
  webhook-channel dead-letters list [--config <file>]  show the dead letters kept in state_dir
  webhook-channel dead-letters replay (--id <id>... | --all) [--config <file>]
                                                       re-queue dead letters
  webhook-channel secret                               print a new random inbound secret
  webhook-channel schema                               print the configuration's JSON Schema
`;

/** Runs one CLI invocation and resolves with its exit status. */
export async function runCli(args: readonly string[], io: CliIo): Promise<number> {
  const [command, ...rest] = args;
  try {
    switch (command) {
      case "serve":
        return await runService({
          configPath: parseServiceArgs(rest).configPath,
          env: io.env,
          ...(io.deliveryWorker === undefined ? {} : { deliveryWorker: io.deliveryWorker }),
        });
      case "config": {
        const [sub, ...checkArgs] = rest;
        if (sub !== "check")
          return usage(io, sub === undefined ? "missing command after 'config'" : `unknown command 'config ${sub}'`);
        const { values, positionals } = parseArgs({
          args: checkArgs,
          options: { preflight: { type: "boolean", default: false } },
          allowPositionals: true,
          strict: true,
        });
        if (positionals.length !== 1 || positionals[0] === undefined) {
          return usage(io, positionals.length === 0 ? "missing <config_file>" : "give exactly one <config_file>");
        }
        return await runConfigCheck(positionals[0], values.preflight, io);
      }
      case "dead-letters":
        return await runDeadLetters(rest, io);
      case "secret":
        parseArgs({ args: [...rest], options: {}, strict: true, allowPositionals: false });
        io.out(`${newSecret()}\n`);
        return 0;
      case "schema":
        parseArgs({ args: [...rest], options: {}, strict: true, allowPositionals: false });
        io.out(`${JSON.stringify(configJsonSchema(), null, 2)}\n`);
        return 0;
      case undefined:
      case "-h":
      case "--help":
      case "help":
        if (command === undefined) return usage(io, "missing command");
        io.out(USAGE);
        return 0;
      default:
        return usage(io, `unknown command '${command}'`);
    }
  } catch (error) {
    // parseArgs throws TypeErrors for unknown options and missing values.
    if (error instanceof TypeError || error instanceof UsageError) return usage(io, error.message);
    throw error;
  }
}

function usage(io: CliIo, problem: string): number {
  io.err(`webhook-channel: ${problem}\n${USAGE}`);
  return EXIT_USAGE;
}
