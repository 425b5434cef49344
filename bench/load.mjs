// One closed-loop load run with autocannon (programmatic API): fixed connections, one
// request in flight per connection, as fast as the server answers.
import autocannon from "autocannon";
import { createHistogram, histogramPercentile, record } from "./latency.mjs";

/**
 * Loads `url` with `connections` connections POSTing `body`, either for `seconds` or for
 * `amount` requests (then stopped after `maxSeconds` at the latest, so a very slow server
 * cannot hang the bench). Returns the accepted rate (2xx per second), p50/p99 of the 2xx
 * latencies in ms, and counts of everything else, so that a run full of errors cannot pass
 * for a fast one.
 */
export async function runLoad({ url, headers, body, connections = 10, seconds, amount, maxSeconds = 60 }) {
  const latencies = createHistogram();
  let ok = 0;
  let other = 0;
  const statuses = {};
  const started = performance.now();
  // autocannon ends an `amount` run on its next 1-second tick, so its own duration is
  // rounded up to whole seconds; the time of the last answer is the real end.
  let lastAnswerAt = started;
  const instance = autocannon({
    url,
    method: "POST",
    headers,
    body,
    connections,
    pipelining: 1,
    ...(amount === undefined ? { duration: seconds } : { amount }),
    timeout: 10,
  });
  const cap = setTimeout(() => instance.stop(), (amount === undefined ? seconds + 10 : maxSeconds) * 1000);
  instance.on("response", (_client, statusCode, _bytes, responseTime) => {
    lastAnswerAt = performance.now();
    if (statusCode >= 200 && statusCode < 300) {
      ok += 1;
      record(latencies, responseTime);
    } else {
      other += 1;
      statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
    }
  });
  // The instance is also a promise of the aggregated result.
  const result = await instance;
  clearTimeout(cap);
  const elapsed = (lastAnswerAt - started) / 1000;
  return {
    seconds: elapsed,
    requestsPerSecond: ok / elapsed,
    ok,
    non2xx: other,
    non2xxStatuses: statuses,
    errors: result.errors,
    timeouts: result.timeouts,
    p50: histogramPercentile(latencies, 50),
    p99: histogramPercentile(latencies, 99),
  };
}
