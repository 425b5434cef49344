// Preloaded with `--import` by the tests that check which packages a service loads: records each
// package name that a module imports, one per line, in the file that RECORD_PACKAGES_FILE names.
// It registers itself as the module hooks in every thread that runs the preload (a worker thread
// runs it too), so the delivery thread's imports are recorded with the main thread's; a name may
// be recorded more than once.
import { appendFileSync } from "node:fs";
import { register } from "node:module";

const file = process.env.RECORD_PACKAGES_FILE;

/** Resolves as Node does, noting each bare specifier (a package, not a path or a `node:` module). */
export async function resolve(specifier, context, nextResolve) {
  if (file !== undefined && !/^(\.|\/|node:|file:|data:)/.test(specifier)) appendFileSync(file, `${specifier}\n`);
  return nextResolve(specifier, context);
}

if (file !== undefined) register(import.meta.url);
