import type { Random } from "../../shared/seeded-random.js";
import type { OptionSpec, ValueKind } from "./command-grammar.js";
import { SECRET_MARK } from "./fuzz-secrets.js";
import { genUrl } from "./fuzz-urls.js";
import {
  genBind,
  genCursor,
  genFile,
  genId,
  genLimit,
  genName,
  genOddString,
  genSince,
  genStatus,
  genVariable,
} from "./fuzz-values.js";
import type { World } from "./fuzz-world.js";

/** Words that stay together on the command line: an option with its value, or one word. */
export type Group = readonly string[];

/** A value of `kind`. */
export function genValue(r: Random, w: World, kind: ValueKind): string {
  switch (kind) {
    case "file":
      return genFile(r, w);
    case "url":
      return genUrl(r, w.deadPort);
    case "variable":
      return genVariable(r);
    case "id":
      return genId(r);
    case "name":
      return genName(r);
    case "status":
      return genStatus(r);
    case "since":
      return genSince(r);
    case "limit":
      return genLimit(r);
    case "cursor":
      return genCursor(r, w);
    case "bind":
      return genBind(r);
  }
}

/**
 * `option` as it may be typed: `--name value`, `--name=value`, `-c value`, `-cvalue`, without its
 * value (at the end of the line, or before another option), with an empty one; a boolean as
 * `--json`, and sometimes with a value it does not take.
 */
export function renderOption(r: Random, w: World, option: OptionSpec, value?: string): Group {
  const long = `--${option.long}`;
  if (option.value === undefined) {
    return r.weighted<Group>([
      [12, () => [long]],
      [option.short === undefined ? 0 : 3, () => [`-${option.short}`]],
      [1, () => [`${long}=${r.pick(["true", "false", "", "1"])}`]],
    ]);
  }
  const given = value ?? genValue(r, w, option.value);
  const short = option.short;
  return r.weighted<Group>([
    [10, () => [long, given]],
    [4, () => [`${long}=${given}`]],
    [short === undefined ? 0 : 2, () => [`-${short}`, given]],
    [short === undefined ? 0 : 1, () => [`-${short}${given}`]],
    [1, () => [long]],
    [0.5, () => [`${long}=`]],
  ]);
}

/** An option no command takes, or one misplaced; the inline ones carry the planted secret. */
export function unknownFlag(r: Random, flags: readonly string[]): Group {
  return r.weighted<Group>([
    [6, () => [r.pick(flags)]],
    [1, () => [`--${r.pick(["token", "admin-token", "password", "secret"])}=${SECRET_MARK}`]],
    [1, () => [`--${genOddString(r).replaceAll("=", "")}`]],
  ]);
}
