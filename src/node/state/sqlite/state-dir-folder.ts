import { accessSync, constants, mkdirSync, mkdtempSync, rmdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { errorMessage } from "../../../core/channel-error.js";

/** The fix a `state_dir` problem names. */
export const STATE_DIR_FIX = "point state_dir at a folder this user may write, or create it with those rights";

/**
 * Why the service could not keep its state in `stateDir` (a file in the way, a folder it may
 * not write), or undefined when it can: the folder exists and takes a new folder, or its
 * nearest existing parent does. Leaves nothing behind, for `config check --preflight`.
 */
export function stateDirProblem(stateDir: string): string | undefined {
  const target = resolve(stateDir);
  let path = target;
  for (;;) {
    const found = kindOf(path);
    if (found === "missing") {
      const parent = dirname(path);
      if (parent === path) return `${target}: no part of the path exists`;
      path = parent;
      continue;
    }
    if (found !== "folder") return `${path} is a file, not a folder`;
    const where = path === target ? path : `${path} (where ${target} would be created)`;
    try {
      accessSync(path, constants.W_OK | constants.X_OK);
    } catch {
      return `${where} is not writable by this user`;
    }
    try {
      // What the rights allow a file system may still refuse (`/proc`, even to root): a folder
      // made and removed at once says for sure.
      rmdirSync(mkdtempSync(join(path, ".webhook-channel-check-")));
    } catch (error) {
      return `${where} takes no new folder: ${errorMessage(error)}`;
    }
    return undefined;
  }
}

/**
 * Creates `stateDir` and its missing parents one at a time. `mkdirSync`'s own recursion loops
 * for ever under a file system that answers "missing" to every create (`/proc`), blocking the
 * event loop, and its errors name no setting; each failure here says which path and why.
 */
export function makeStateDir(stateDir: string): void {
  const target = resolve(stateDir);
  const missing: string[] = [];
  let path = target;
  while (kindOf(path) === "missing") {
    missing.unshift(path);
    const parent = dirname(path);
    if (parent === path) break;
    path = parent;
  }
  if (kindOf(path) === "file")
    throw new Error(`state_dir ${target}: ${path} is a file, not a folder; ${STATE_DIR_FIX}`);
  for (const folder of missing) {
    try {
      mkdirSync(folder);
    } catch (error) {
      // Made meanwhile by another process: as good as made here.
      if (kindOf(folder) === "folder") continue;
      throw new Error(`state_dir ${target}: cannot create ${folder}: ${errorMessage(error)}; ${STATE_DIR_FIX}`);
    }
  }
}

function kindOf(path: string): "missing" | "folder" | "file" {
  try {
    return statSync(path).isDirectory() ? "folder" : "file";
  } catch {
    return "missing";
  }
}
