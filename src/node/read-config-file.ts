import { readFile } from "node:fs/promises";
import { errorMessage } from "../core/channel-error.js";
import { type ConfigResult, validateConfig } from "../core/config/validate-config.js";

/** Reads and validates a configuration file; an unreadable file or bad JSON is a problem too. */
export async function readConfigFile(file: string): Promise<ConfigResult> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    const missing = error instanceof Error && "code" in error && error.code === "ENOENT";
    return {
      ok: false,
      problems: [
        {
          path: "",
          message: missing ? `${file} does not exist` : `${file} cannot be read: ${errorMessage(error)}`,
          fix: missing
            ? "create it (see config.json in the repository) or pass --config <file>"
            : "check the path and its permissions",
        },
      ],
    };
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      problems: [
        { path: "", message: `${file} is not valid JSON: ${errorMessage(error)}`, fix: "correct the JSON syntax" },
      ],
    };
  }
  return validateConfig(document);
}
