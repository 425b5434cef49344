import { readFileSync } from "node:fs";
import { ChannelError } from "../core/channel-error.js";

/** Looks a `*_env` variable up; throws a `config_invalid` ChannelError when its file cannot be read. */
export type SecretLookup = (name: string) => string | undefined;

/** The process environment as the lookup reads it. */
export type ProcessEnvRecord = Readonly<Record<string, string | undefined>>;

/**
 * The one lookup of `*_env` variables on Node. A variable that is set is used as it is; when
 * it is unset and `<NAME>_FILE` names a file, the secret is that file's content without one
 * trailing newline (`\n` or `\r\n`): the convention of container secrets (Docker, Kubernetes,
 * systemd credentials), which keeps secrets out of the environment and lets them change
 * without a restart (SIGHUP reads the files again through a new lookup).
 *
 * Each file is read once, synchronously, when first asked for, and kept. A file that cannot be
 * read throws a ChannelError naming the variable and the path, never anything the file holds.
 */
export function createSecretEnv(
  processEnv: ProcessEnvRecord,
  readFile: (path: string) => string = (path) => readFileSync(path, "utf8"),
): SecretLookup {
  const fromFiles = new Map<string, string>();
  return (name) => {
    const value = processEnv[name];
    if (value !== undefined) return value;
    const path = secretFileOf(processEnv, name);
    if (path === undefined) return undefined;
    const known = fromFiles.get(name);
    if (known !== undefined) return known;
    let text: string;
    try {
      text = readFile(path);
    } catch (error) {
      throw new ChannelError(
        "config_invalid",
        `cannot read ${name} from the file ${path} named by ${name}_FILE: ${fileReason(error)}`,
        { variable: name },
      );
    }
    const secret = text.endsWith("\r\n") ? text.slice(0, -2) : text.endsWith("\n") ? text.slice(0, -1) : text;
    fromFiles.set(name, secret);
    return secret;
  };
}

/**
 * The file a variable's secret is read from: the value of `<NAME>_FILE` when `<NAME>` itself
 * is unset, else undefined. An empty `<NAME>_FILE` counts as unset.
 */
export function secretFileOf(processEnv: ProcessEnvRecord, name: string): string | undefined {
  if (processEnv[name] !== undefined) return undefined;
  const path = processEnv[`${name}_FILE`];
  return path === undefined || path === "" ? undefined : path;
}

/** Why a file could not be read, from its error code; the error's own text is not repeated. */
function fileReason(error: unknown): string {
  const code = error instanceof Error && "code" in error ? String(error.code) : undefined;
  switch (code) {
    case "ENOENT":
      return "no such file";
    case "EACCES":
    case "EPERM":
      return "permission denied";
    case "EISDIR":
      return "it is a directory";
    case undefined:
      return "it cannot be read";
    default:
      return `it cannot be read (${code})`;
  }
}
