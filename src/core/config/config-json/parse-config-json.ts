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
 * The parser's words, with the line and column of the place they point at, and a word on
 * comments. The parser names a position for most errors; for an unexpected character it quotes
 * only the character, whose first place outside a string is then the one.
 */
function syntaxWhere(text: string, error: unknown): string {
  const words = errorMessage(error);
  const position = /JSON at position (\d+)(?: \(line \d+ column \d+\))?$/.exec(words)?.[1];
  const token = /^Unexpected token '(.)', /.exec(words)?.[1];
  // A file cut short (a half-saved edit) has no position in the parser's words: its end is the place.
  const cutShort = /^Unexpected end of JSON input$/.test(words);
  const at =
    position !== undefined
      ? Number(position)
      : token !== undefined
        ? firstOutsideStrings(text, token)
        : cutShort
          ? text.trimEnd().length
          : -1;
  if (at < 0) return words;
  if (cutShort && at === 0) return "it is empty";
  if (cutShort) return `it ends before its JSON does (${whereIs(text, at)}): a bracket, brace or quote is not closed`;
  const comment = text.startsWith("//", at) || text.startsWith("/*", at);
  // The parser quotes the text around the place, which may be a secret pasted unquoted: the line
  // and column say where, without it.
  const said = token === undefined ? words : `Unexpected token '${token}'`;
  return `${said} (${whereIs(text, at)})${comment ? ": JSON has no comments; remove them" : ""}`;
}

/** `line L, column C` of the character at `at` in `text`. */
function whereIs(text: string, at: number): string {
  const lines = text.slice(0, at).split(/\r\n|\r|\n/);
  return `line ${lines.length}, column ${(lines[lines.length - 1] ?? "").length + 1}`;
}

/** Where `char` first appears in `text` outside a JSON string, or -1. */
function firstOutsideStrings(text: string, char: string): number {
  let inString = false;
  for (let at = 0; at < text.length; at += 1) {
    const here = text[at];
    if (inString) {
      if (here === "\\") at += 1;
      else if (here === '"') inString = false;
    } else if (here === '"') inString = true;
    else if (here === char) return at;
  }
  return -1;
}
