// Picks the inbound load generator: wrk when it is installed (unless --load says otherwise),
// autocannon otherwise, and gives both the same two calls, warm-up and measured run.
import { runLoad } from "./load.mjs";
import { runWrk, wrkAvailable } from "./wrk-load.mjs";

const slicesText = (options) => (options.slices > 1 ? `${options.slices} × ` : "");
const perSlice = (options) => Math.round(options.requests / options.slices);

/**
 * `options.load` is "auto", "wrk" or "autocannon". Returns { name, warmup(params),
 * measure(params) }, `measure` being one slice of a round, where params are { url, headers, body, connections }.
 */
export function createLoader(options) {
  const useWrk = options.load === "wrk" || (options.load === "auto" && wrkAvailable());
  if (options.load === "wrk" && !wrkAvailable()) throw new Error("--load wrk: no wrk on PATH (apt-get install wrk)");
  if (useWrk) {
    return {
      name: "wrk",
      description: `wrk, 1 thread, ${options.wrkWarmupSeconds} s warm-up + ${slicesText(options)}${options.wrkSeconds} s measured`,
      warmup: (params) => runWrk({ ...params, seconds: options.wrkWarmupSeconds }),
      measure: (params) => runWrk({ ...params, seconds: options.wrkSeconds }),
    };
  }
  return {
    name: "autocannon",
    description: `autocannon, ${options.warmupRequests} warm-up + ${slicesText(options)}${perSlice(options)} measured requests`,
    // The time caps only bite on a slow contender (the Worker under workerd), which would
    // otherwise need minutes for the same request count.
    warmup: (params) => runLoad({ ...params, amount: options.warmupRequests, maxSeconds: options.warmupMaxSeconds }),
    measure: (params) =>
      runLoad({ ...params, amount: perSlice(options), maxSeconds: options.measureMaxSeconds / options.slices }),
  };
}
