/**
 * Vitest global setup of the `workers` project: one scripted upstream for the run (see
 * `startScriptedUpstream`), on Node, its origin given to the tests inside workerd as
 * `inject("scriptedUpstream")` (the pool forwards vitest's provided context to its runner),
 * which reach it by real fetches to 127.0.0.1 (miniflare lets the Worker call out).
 */
import type { TestProject } from "vitest/node";
import { startScriptedUpstream } from "./scripted-upstream.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The scripted upstream's origin, `http://127.0.0.1:<port>`. */
    scriptedUpstream: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const upstream = await startScriptedUpstream();
  project.provide("scriptedUpstream", upstream.origin);
  return () => upstream.close();
}
