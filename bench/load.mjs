// One closed-loop load run with autocannon (programmatic API): fixed connections, one
// request in flight per connection, as fast as the server answers.
import autocannon from "autocannon";
import { createHistogram, histogramPercentile, record } from "./latency.mjs";

/**
 * Loads `url` for `seconds` with `connections` connections POSTing `body`. Returns the
 * accepted rate (2xx per second), p50/p99 of the 2xx latencies in ms, and counts of
 * everything else, so that a run full of errors cannot pass for a fast one.
 */
export async function runLoad({ url, headers, body, connections = 10, seconds }) {
  const latencies = createHistogram();
  let ok = 0;
  let other = 0;
  const started = performance.now();
  const instance = autocannon({
    url,
    method: "POST",
    headers,
    body,
    connections,
    pipelining: 1,
    duration: seconds,
    timeout: 10,
  });
  instance.on("response", (_client, statusCode, _bytes, responseTime) => {
    if (statusCode >= 200 && statusCode < 300) {
      ok += 1;
      record(latencies, responseTime);
    } else other += 1;
  });
  // The instance is also a promise of the aggregated result.
  const result = await instance;
  const elapsed = (performance.now() - started) / 1000;
  return {
    seconds: elapsed,
    requestsPerSecond: ok / elapsed,
    ok,
    non2xx: other,
    errors: result.errors,
    timeouts: result.timeouts,
    p50: histogramPercentile(latencies, 50),
    p99: histogramPercentile(latencies, 99),
  };
}
