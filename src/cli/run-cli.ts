import { parseArgs } from "node:util";
import { configJsonSchema } from "../core/config/config-json-schema.js";
import { VERSION } from "../core/version.js";
import { DEFAULT_CONFIG_PATH, parseServiceArgs } from "../node/parse-service-args.js";
import { runService } from "../node/run-service.js";
import { COMMAND_HELP, USAGE } from "./cli-help.js";
import type { CliIo } from "./cli-io.js";
import { newSecret } from "./new-secret.js";
import { runKeypair, runPublicKey } from "./signing-keys-command.js";
import { UsageError } from "./usage-error.js";

/** Exit status of a usage error (unknown command or option, missing argument). */
export const EXIT_USAGE = 2;

/** Commands with subcommands, and those subcommands: their help is looked up as "config check". */
const SUBCOMMANDS: Readonly<Record<string, readonly string[]>> = {
  config: ["check"],
  "dead-letters": ["list", "show", "replay", "delete"],
  messages: ["show", "list"],
};

/** Runs one CLI invocation and resolves with its exit status. */
export type { CliIo } from "./cli-io.js";

export async function runCli(args: readonly string[], io: CliIo): Promise<number> {
  const [command, ...rest] = args;
  if (command === undefined) return usage(io, "missing command");
  if (command === "--version" || command === "-v" || command === "version") {
    io.out(`${VERSION}\n`);
    return 0;
  }
  if (command === "--help" || command === "-h" || command === "help") {
    if (rest.length === 0) {
      io.out(USAGE);
      return 0;
    }
    const asked = COMMAND_HELP[rest.join(" ")];
    if (asked === undefined) return usage(io, `no help on '${rest.join(" ")}'`);
    io.out(asked);
    return 0;
  }
  const topic = topicOf(command, rest);
  // Help wins over everything else on the line, so it never fails on what it was asked about.
  if (rest.includes("--help") || rest.includes("-h")) {
    const help = COMMAND_HELP[topic];
    if (help === undefined) return usage(io, `unknown command '${command}'`);
    io.out(help);
    return 0;
  }
  try {
    switch (command) {
      case "serve": {
        const { configPath, bind, help, version } = parseServiceArgs(rest);
        // "-hc file" holds -h as well: help, as `node dist/node.js -hc file` answers.
        if (help) {
          io.out(COMMAND_HELP.serve ?? USAGE);
          return 0;
        }
        if (version) {
          io.out(`${VERSION}\n`);
          return 0;
        }
        return await runService({
          configPath,
          bind,
          env: io.env,
          ...(io.deliveryWorker === undefined ? {} : { deliveryWorker: io.deliveryWorker }),
          ...(io.timelineWriter === undefined ? {} : { timelineWriter: io.timelineWriter }),
          ...(io.heldHangUps === undefined ? {} : { heldHangUps: io.heldHangUps }),
          ...(io.heldStops === undefined ? {} : { heldStops: io.heldStops }),
        });
      }
      case "config": {
        const [sub, ...checkArgs] = rest;
        if (sub !== "check")
          return usage(io, sub === undefined ? "missing command after 'config'" : `unknown command 'config ${sub}'`);
        const { values, positionals } = parseArgs({
          args: checkArgs,
          options: { preflight: { type: "boolean", default: false }, config: { type: "string", short: "c" } },
          allowPositionals: true,
          strict: true,
        });
        if (positionals.length > 1) return usage(io, "give one configuration file", topic);
        const [positional] = positionals;
        if (positional !== undefined && values.config !== undefined) {
          return usage(io, "give the file either with --config or as the argument, not both", topic);
        }
        // These commands open the databases themselves: loaded when asked for, so that `serve`
        // loads only the backend its configuration names (see open-state-backend.ts).
        const { runConfigCheck } = await import("./config-check.js");
        return await runConfigCheck(positional ?? values.config ?? DEFAULT_CONFIG_PATH, values.preflight, io);
      }
      case "dead-letters": {
        const { runDeadLetters } = await import("./dead-letters-command.js");
        return await runDeadLetters(rest, io);
      }
      case "messages": {
        const { runMessages } = await import("./messages-command.js");
        return await runMessages(rest, io);
      }
      case "secret":
        parseArgs({ args: [...rest], options: {}, strict: true, allowPositionals: false });
        io.out(`${newSecret()}\n`);
        return 0;
      case "keypair":
        return await runKeypair(rest, io);
      case "public-key":
        return await runPublicKey(rest, io);
      case "schema":
        parseArgs({ args: [...rest], options: {}, strict: true, allowPositionals: false });
        io.out(`${JSON.stringify(configJsonSchema(), null, 2)}\n`);
        return 0;
      default:
        return usage(io, `unknown command '${command}'`);
    }
  } catch (error) {
    // parseArgs throws TypeErrors for unknown options and missing values.
    if (error instanceof TypeError || error instanceof UsageError) return usage(io, error.message, topic);
    throw error;
  }
}

/** The help topic a command line is about: "config check", or "config" when the subcommand is not known. */
function topicOf(command: string, rest: readonly string[]): string {
  const sub = rest[0];
  return sub !== undefined && SUBCOMMANDS[command]?.includes(sub) ? `${command} ${sub}` : command;
}

/** Prints the problem and the usage of the command it concerns (all commands when unknown). */
function usage(io: CliIo, problem: string, topic?: string): number {
  const help = topic === undefined ? undefined : COMMAND_HELP[topic];
  io.err(`webhook-channel: ${problem}\n${help ?? USAGE}`);
  return EXIT_USAGE;
}
