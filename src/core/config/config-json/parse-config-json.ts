import { errorMessage } from "../../channel-error.js";
import type { ConfigProblem } from "../config-problem.js";
import { firstDuplicateKey } from "./duplicate-keys.js";

/** A configuration's text read as JSON: the document, or the one problem that stops it. */
export type ConfigJson =
  | { readonly ok: true; readonly document: unknown }
  | { readonly ok: false; readonly problem: ConfigProblem };

const BOM = "\uFEFF";

/**
 * Reads `text`, the configuration `source` names (a file, a variable), as JSON. A byte-order
 * mark that some editors write first is skipped. A syntax error says where, as a line and a
 * column, and says so when the place is a comment (JSON has none); a key written twice in one
 * object is a problem with its path, since the parser would quietly keep the last.
 */
export function parseConfigJson(text: string, source: string, fix: string): ConfigJson {
  const body = text.startsWith(BOM) ? text.slice(BOM.length) : text;
  let document: unknown;
  try {
    document = JSON.parse(body);
  } catch (error) {
    return {
      ok: false,
      problem: { path: "", message: `${source} is not valid JSON: ${syntaxWhere(body, error)}`, fix },
    };
  }
  const duplicate = firstDuplicateKey(body);
  if (duplicate !== undefined) {
    return {
      ok: false,
      problem: {
        path: duplicate,
        message: "is written twice in one object; JSON keeps the last and drops the first without a word",
        fix: "keep one of the two, with the value meant",
      },
    };
  }
  return { ok: true, document };
}

/**
 * The parser's words, with the line and column of the place they name, and a word on comments.
 * Node 20's parser names a position; later ones name the line and column themselves.
 */
function syntaxWhere(text: string, error: unknown): string {
  const words = errorMessage(error);
  const position = /at position (\d+)/.exec(words)?.[1];
  const named = /\(line (\d+) column (\d+)\)/.exec(words);
  let at: number;
  let where = "";
  if (named !== null) {
    const lines = text.split("\n").slice(0, Number(named[1]) - 1);
    at = lines.reduce((sum, line) => sum + line.length + 1, 0) + Number(named[2]) - 1;
  } else if (position !== undefined) {
    at = Number(position);
    const before = text.slice(0, at);
    where = ` (line ${before.split("\n").length}, column ${at - before.lastIndexOf("\n")})`;
  } else return words;
  const comment = text.startsWith("//", at) || text.startsWith("/*", at);
  return `${words}${where}${comment ? ": JSON has no comments; remove them" : ""}`;
}
