// Preloaded with `--import` by the tests that check which packages a service loads: records each
// package name that the main thread's modules import, one per line, in the file that
// RECORD_PACKAGES_FILE names. It registers itself as the module hooks.
import { appendFileSync } from "node:fs";
import { register } from "node:module";
import { isMainThread } from "node:worker_threads";

const file = process.env.RECORD_PACKAGES_FILE;

/** Resolves as Node does, noting each bare specifier (a package, not a path or a `node:` module). */
export async function resolve(specifier, context, nextResolve) {
  if (file !== undefined && !/^(\.|\/|node:|file:|data:)/.test(specifier)) appendFileSync(file, `${specifier}\n`);
  return nextResolve(specifier, context);
}

if (isMainThread && file !== undefined) register(import.meta.url);
