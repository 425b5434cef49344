import type { Random } from "../../shared/seeded-random.js";
import {
  COMMANDS,
  type CommandSpec,
  HELP_TOPICS,
  type OptionSpec,
  UNKNOWN_COMMANDS,
  UNKNOWN_FLAGS,
} from "./command-grammar.js";
import { genEnv } from "./fuzz-env.js";
import { sanitize } from "./fuzz-secrets.js";
import { genFile, genId, genOddString } from "./fuzz-values.js";
import type { World } from "./fuzz-world.js";
import { type Group, renderOption, unknownFlag } from "./render-option.js";

/** One generated run: its command line and its whole environment. */
export interface FuzzCase {
  readonly index: number;
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  /** How it was made, for the failure message. */
  readonly kind: string;
}

function option(spec: CommandSpec, long: string): OptionSpec | undefined {
  return spec.options.find((candidate) => candidate.long === long);
}

/** The options of `spec` a person would give for it to work, in a source that may or may not. */
function plausibleGroups(r: Random, w: World, spec: CommandSpec): Group[] {
  const groups: Group[] = [];
  const add = (long: string, value?: string) => {
    const found = option(spec, long);
    if (found !== undefined) groups.push(renderOption(r, w, found, value));
  };
  const [command, action] = spec.words;
  if (command === "dead-letters" || command === "messages") {
    r.weighted<void>([
      [5, () => add("config")],
      [4, () => add("url")],
      [1, () => undefined],
    ]);
    if (r.chance(0.2)) add("admin-token-env");
    if (r.chance(0.4)) add("json");
  }
  if (command === "dead-letters") {
    if (action === "show") add("id");
    if (action === "delete" || (action === "replay" && r.chance(0.5))) {
      for (let count = r.between(1, 3); count > 0; count -= 1) add("id");
    } else if (action === "replay") add("all");
  }
  if (command === "messages" && action === "list") {
    for (const long of ["conversation", "channel", "status", "since", "limit", "cursor", "all"]) {
      if (r.chance(0.2)) add(long);
    }
  }
  if (command === "config") {
    if (r.chance(0.5)) add("preflight");
    if (r.chance(0.5)) add("config");
    else if (r.chance(0.8)) groups.push([genFile(r, w)]);
  }
  if (command === "messages" && action === "show") groups.splice(r.int(groups.length + 1), 0, [genId(r)]);
  if (command === "public-key" && r.chance(0.5)) add("env");
  if (command === "serve") add(r.pick(["help", "version"]));
  return groups;
}

/** Any of the options of `spec`, in any number, some twice. */
function wildGroups(r: Random, w: World, spec: CommandSpec): Group[] {
  const groups: Group[] = [];
  for (let count = r.between(0, 5); count > 0 && spec.options.length > 0; count -= 1) {
    groups.push(renderOption(r, w, r.pick(spec.options)));
  }
  if (spec.positional !== undefined && r.chance(0.6)) {
    groups.splice(r.int(groups.length + 1), 0, [spec.positional === "file" ? genFile(r, w) : genId(r)]);
  }
  return groups;
}

/** A word that is no option, in the middle of the line (never `--`, which ends the options). */
function junkWord(r: Random): string {
  const word = genOddString(r);
  return word === "--" ? "---" : word;
}

/** Changes the line as a hurried person would: repeats, drops, swaps, adds, cuts values off. */
function mutate(r: Random, w: World, spec: CommandSpec, groups: Group[]): string {
  const at = (extra = 0) => r.int(groups.length + extra);
  const step = (name: string, change: () => void) => (): string => {
    change();
    return name;
  };
  return r.weighted<string>([
    [3, step("repeat", () => groups.splice(at(), 0, groups[at()] ?? []))],
    [2, step("drop", () => groups.splice(at(), 1))],
    [3, step("unknown flag", () => groups.splice(at(1), 0, unknownFlag(r, UNKNOWN_FLAGS)))],
    [2, step("extra word", () => groups.splice(at(1), 0, [junkWord(r)]))],
    [
      2,
      step("value cut off", () => {
        const index = at();
        const cut = groups[index]?.[0];
        if (cut?.startsWith("--")) groups[index] = [cut.split("=")[0] ?? cut];
      }),
    ],
    [
      1,
      step("swap", () => {
        const [a, b] = [at(), at()];
        const first = groups[a];
        const second = groups[b];
        if (first !== undefined && second !== undefined) [groups[a], groups[b]] = [second, first];
      }),
    ],
    [
      1,
      step("one more option", () => {
        if (spec.options.length > 0) groups.splice(at(1), 0, renderOption(r, w, r.pick(spec.options)));
      }),
    ],
  ]);
}

/** A known command's line: plausible (mostly right) or wild, then mutated. */
function knownCase(r: Random, w: World): { argv: string[]; kind: string } {
  const spec = r.weighted<CommandSpec>(COMMANDS.map((candidate) => [candidate.weight, () => candidate]));
  const plausible = r.chance(0.5);
  const groups = plausible ? plausibleGroups(r, w, spec) : wildGroups(r, w, spec);
  const steps: string[] = [plausible ? "plausible" : "wild"];
  for (let count = plausible ? (r.chance(0.3) ? 1 : 0) : r.between(0, 3); count > 0; count -= 1) {
    steps.push(mutate(r, w, spec, groups));
  }
  let head = [...spec.words];
  // The action or subcommand missing or misspelled: whatever comes next is read as it (and quoted).
  let headKept = true;
  if (spec.words.length > 1 && r.chance(0.06)) {
    const action = spec.words[1] ?? "";
    head = r.chance(0.4)
      ? [spec.words[0] ?? ""]
      : [spec.words[0] ?? "", r.pick([action.toUpperCase(), `${action}s`, action.slice(1), "", " "])];
    headKept = head.length > 1;
    steps.push("action changed");
  }
  if (r.chance(0.04)) {
    groups.splice(r.int(groups.length + 1), 0, [r.pick(["--help", "-h"])]);
    steps.push("help");
  }
  const tail = r.chance(0.05) ? ["--", ...Array.from({ length: r.int(3) }, () => genOddString(r))] : [];
  if (tail.length > 0) steps.push("-- then words");
  // Past `--` every word is an argument, which commands quote back as given; so is each word
  // when the action is missing (the first of them is read as the action).
  const words = [...groups.flat(), ...tail];
  const end = words.indexOf("--");
  const argv = words.map((word, index) => (!headKept || (end !== -1 && index > end) ? sanitize(word) : word));
  return { argv: [...head, ...argv], kind: `${spec.words.join(" ")} (${steps.join(", ")})` };
}

/** `help`, `--help` or `-h`, with a topic, a wrong one, or another command's words (which it quotes). */
function helpCase(r: Random, w: World): string[] {
  const word = r.pick(["help", "--help", "-h"]);
  return r.weighted<string[]>([
    [2, () => [word]],
    [4, () => [word, ...r.pick(HELP_TOPICS).split(" ")]],
    [2, () => [word, ...knownCase(r, w).argv.map(sanitize)]],
    [1, () => [word, genOddString(r)]],
  ]);
}

/**
 * Case number `index`: a known command's line (most), help and version in every spelling,
 * unknown commands followed by anything, and no command at all; with its environment.
 */
export function genCase(r: Random, w: World, index: number): FuzzCase {
  const made = r.weighted<{ argv: string[]; kind: string }>([
    [80, () => knownCase(r, w)],
    [7, () => ({ argv: helpCase(r, w), kind: "help" })],
    [
      3,
      () => ({
        argv: [r.pick(["--version", "-v", "version"]), ...(r.chance(0.3) ? [genOddString(r)] : [])],
        kind: "version",
      }),
    ],
    [
      8,
      () => ({
        argv: [r.pick(UNKNOWN_COMMANDS), ...knownCase(r, w).argv.slice(1)],
        kind: "unknown command",
      }),
    ],
    [1, () => ({ argv: [], kind: "no command" })],
  ]);
  return { index, argv: made.argv, env: genEnv(r, w), kind: made.kind };
}
