/** What an option's value is: each kind has its generator in fuzz-values.ts (or fuzz-urls.ts). */
export type ValueKind = "file" | "url" | "variable" | "id" | "name" | "status" | "since" | "limit" | "cursor" | "bind";

/** One option as the CLI declares it to `parseArgs` (src/cli, src/node/parse-service-args.ts). */
export interface OptionSpec {
  readonly long: string;
  readonly short?: string;
  /** Absent for a boolean. */
  readonly value?: ValueKind;
  readonly multiple?: boolean;
}

/** One command line shape: its leading words, its options and what its positionals are. */
export interface CommandSpec {
  /** The command and, when it has one, its action: `["dead-letters", "list"]`. */
  readonly words: readonly string[];
  readonly options: readonly OptionSpec[];
  /** What its arguments are, if it takes any. */
  readonly positional?: "file" | "id";
  /** How often it is drawn. */
  readonly weight: number;
}

const CONFIG: OptionSpec = { long: "config", short: "c", value: "file" };
const URL_OPTION: OptionSpec = { long: "url", value: "url" };
const TOKEN_ENV: OptionSpec = { long: "admin-token-env", value: "variable" };
const JSON_OPTION: OptionSpec = { long: "json" };
const ALL: OptionSpec = { long: "all" };

const DEAD_LETTERS: readonly OptionSpec[] = [
  CONFIG,
  { long: "id", value: "id", multiple: true },
  ALL,
  JSON_OPTION,
  URL_OPTION,
  TOKEN_ENV,
];

const MESSAGES: readonly OptionSpec[] = [
  CONFIG,
  URL_OPTION,
  TOKEN_ENV,
  JSON_OPTION,
  { long: "conversation", value: "name" },
  { long: "channel", value: "name" },
  { long: "status", value: "status" },
  { long: "since", value: "since" },
  { long: "limit", value: "limit" },
  { long: "cursor", value: "cursor" },
  ALL,
];

/**
 * Every command `runCli` knows, with the options it parses. `serve` is among them: its cases
 * that would start the service are not run (see serve-guard.ts).
 */
export const COMMANDS: readonly CommandSpec[] = [
  { words: ["config", "check"], options: [{ long: "preflight" }, CONFIG], positional: "file", weight: 5 },
  { words: ["dead-letters", "list"], options: DEAD_LETTERS, weight: 3 },
  { words: ["dead-letters", "show"], options: DEAD_LETTERS, weight: 2 },
  { words: ["dead-letters", "replay"], options: DEAD_LETTERS, weight: 2 },
  { words: ["dead-letters", "delete"], options: DEAD_LETTERS, weight: 2 },
  { words: ["messages", "show"], options: MESSAGES, positional: "id", weight: 3 },
  { words: ["messages", "list"], options: MESSAGES, weight: 4 },
  { words: ["public-key"], options: [{ long: "env", value: "variable" }], weight: 2 },
  { words: ["secret"], options: [], weight: 1 },
  { words: ["keypair"], options: [], weight: 1 },
  { words: ["schema"], options: [], weight: 1 },
  {
    words: ["serve"],
    options: [
      CONFIG,
      { long: "bind", short: "b", value: "bind" },
      { long: "help", short: "h" },
      { long: "version", short: "v" },
    ],
    weight: 2,
  },
];

/** Options no command takes, some a person might try; the `=` ones carry a secret inline. */
export const UNKNOWN_FLAGS = [
  "--jsn",
  "--JSON",
  "--URL",
  "--ids",
  "--id",
  "--url",
  "--preflight",
  "--no-json",
  "--config-file",
  "-x",
  "-j",
  "-",
  "---json",
  "--=x",
  "--limit",
  "-cv",
  "-hv",
  "-hc",
];

/** The help topics `help <topic>` knows, and near misses. */
export const HELP_TOPICS = [
  "config check",
  "config",
  "dead-letters",
  "dead-letters replay",
  "messages list",
  "messages show",
  "serve",
  "keypair",
  "public-key",
  "schema",
  "secret",
  "dead-letters  list",
  "Config check",
  "messages lst",
  "nope",
];

/** Commands `runCli` does not know: near misses, options in the command's place, odd words. */
export const UNKNOWN_COMMANDS = [
  "dead-letter",
  "deadletters",
  "message",
  "Config",
  "config-check",
  "check",
  "list",
  "server",
  "start",
  "keys",
  "--json",
  "--config",
  "--url",
  "-c",
  "-x",
  "--",
  "-",
  "",
  " ",
  "конфиг",
  "😀",
  "\u0000",
];

/** How `runCli` names the outcome's command, for the exit codes it may end with and the coverage. */
export function commandKey(argv: readonly string[]): string {
  const [first] = argv;
  if (first === undefined) return "(none)";
  if (first === "--help" || first === "-h" || first === "help") return "help";
  if (first === "--version" || first === "-v" || first === "version") return "version";
  return COMMANDS.some((spec) => spec.words[0] === first) ? first : "(unknown)";
}

/**
 * The exit codes docs/cli.md gives each command: 0 and 2 for all that run (a usage error is 2),
 * 1 where something can be missing or unusable. `serve`'s 1 (cannot start) is never reached:
 * the cases that would start it are not run.
 */
export const EXIT_CODES: Readonly<Record<string, readonly number[]>> = {
  config: [0, 1, 2],
  "dead-letters": [0, 1, 2],
  messages: [0, 1, 2],
  "public-key": [0, 1, 2],
  secret: [0, 2],
  keypair: [0, 2],
  schema: [0, 2],
  serve: [0, 2],
  help: [0, 2],
  version: [0],
  "(unknown)": [2],
  "(none)": [2],
};
