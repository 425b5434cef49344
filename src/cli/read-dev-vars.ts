import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";

/** The file `wrangler dev` reads a Worker's secrets from, beside wrangler.toml. */
export const DEV_VARS_FILE = ".dev.vars";

const LINE = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*)$/;

/**
 * Parses a `.dev.vars` file: dotenv syntax, as wrangler reads it. `KEY=value` lines, `#`
 * comments, an optional `export`, values in single, double or back quotes (which may span
 * lines; double quotes expand `\n`), and unquoted values trimmed of a trailing ` # comment`.
 */
export function parseDevVars(text: string): Map<string, string> {
  const variables = new Map<string, string>();
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  for (let index = 0; index < lines.length; index += 1) {
    const match = LINE.exec(lines[index] ?? "");
    if (match?.[1] === undefined) continue;
    const name = match[1];
    let value = match[2] ?? "";
    const quote = value[0];
    if (quote === '"' || quote === "'" || quote === "`") {
      let body = value.slice(1);
      // A quoted value ends at its closing quote, possibly on a later line.
      while (!body.includes(quote) && index + 1 < lines.length) {
        index += 1;
        body += `\n${lines[index] ?? ""}`;
      }
      const end = body.indexOf(quote);
      value = end === -1 ? body : body.slice(0, end);
      if (quote === '"') value = value.replace(/\\n/g, "\n").replace(/\\r/g, "\r");
    } else {
      // dotenv (wrangler) ends an unquoted value at its first #, with or without a space before it.
      value = value.replace(/#.*$/, "").trim();
    }
    variables.set(name, value);
  }
  return variables;
}

/** Where `.dev.vars` is for a configuration file: in the same folder. */
export function devVarsPathFor(configFile: string): string {
  return join(dirname(configFile), DEV_VARS_FILE);
}

/**
 * Reads and parses a `.dev.vars` file. Resolves undefined when there is none; an unreadable
 * file rejects, since silently skipping it would confirm variables that are not there.
 */
export async function readDevVars(file: string): Promise<Map<string, string> | undefined> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if (error instanceof Error && "code" in error && error.code === "ENOENT") return undefined;
    throw error;
  }
  return parseDevVars(text);
}
