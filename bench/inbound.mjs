// Inbound accept rate, A/B: every contender gets a fresh process per round, the same warm-up
// and then the same measured run (a fixed time with wrk, a fixed count with autocannon), in an order that rotates from round to round
// so that drift on the machine (thermal, other load) does not favour whoever goes first.
//
// The service's consumer is parked (its receiver never answers and all messages share one
// conversation, so exactly one is in progress), and both servers therefore keep every
// accepted message. With autocannon each run is a fixed count, so both hold the same number
// and their peak RSS is comparable; with wrk runs are timed (see wrk-load.mjs).
import { messageBody, messageHeaders } from "./message.mjs";
import { cpuSeconds, peakRss } from "./proc-stats.mjs";

const median = (values) => {
  const sorted = values.filter((value) => value !== null).sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/**
 * `contenders`: [{ key, name, start() → { url, pid, peakRss?(), stop() } }], the baseline
 * (key "bare") first; `loader` from loader.mjs. Returns per contender the rounds and the
 * medians, with the ratio of req/s to the baseline's median.
 */
export async function runInbound({ contenders, loader, secret, rounds, connections, log }) {
  const headers = messageHeaders(secret);
  const body = messageBody();
  const byKey = new Map(contenders.map((contender) => [contender.key, { contender, rounds: [] }]));

  for (let round = 0; round < rounds; round += 1) {
    const order = contenders.map((_, index) => contenders[(index + round) % contenders.length]);
    for (const contender of order) {
      const server = await contender.start();
      try {
        await loader.warmup({ url: server.url, headers, body, connections });
        const cpu = server.cpuSeconds ?? (() => cpuSeconds(server.pid));
        const cpuBefore = cpu();
        const result = await loader.measure({ url: server.url, headers, body, connections });
        const cpuAfter = cpu();
        result.cpuMicrosPerRequest =
          cpuBefore === null || cpuAfter === null || result.ok === 0
            ? null
            : ((cpuAfter - cpuBefore) * 1e6) / result.ok;
        // VmHWM covers the whole life of this fresh process: warm-up plus the measured run.
        result.peakRss = server.peakRss === undefined ? peakRss(server.pid) : server.peakRss();
        byKey.get(contender.key).rounds.push(result);
        const statuses = Object.entries(result.non2xxStatuses).map(([status, count]) => `${count} × ${status}`);
        log(
          `  round ${round + 1}/${rounds} ${contender.name}: ${Math.round(result.requestsPerSecond)} req/s` +
            (result.non2xx + result.errors > 0 ? ` (${[...statuses, `${result.errors} errors`].join(", ")})` : ""),
        );
      } finally {
        await server.stop();
      }
    }
  }

  const bare = byKey.get("bare").rounds;
  // Each round's rate over bare's in the same round: the spread says how far one number can
  // be trusted on this machine.
  const pairedRatios = (results) =>
    results
      .map((result, round) =>
        bare[round]?.requestsPerSecond ? result.requestsPerSecond / bare[round].requestsPerSecond : null,
      )
      .filter((value) => value !== null);
  const baseline = median(bare.map((result) => result.requestsPerSecond));
  const baselineCpu = median(bare.map((result) => result.cpuMicrosPerRequest));
  return contenders.map(({ key, name }) => {
    const results = byKey.get(key).rounds;
    const requestsPerSecond = median(results.map((result) => result.requestsPerSecond));
    const cpuMicrosPerRequest = median(results.map((result) => result.cpuMicrosPerRequest));
    return {
      key,
      name,
      requestsPerSecond,
      p50: median(results.map((result) => result.p50)),
      p99: median(results.map((result) => result.p99)),
      peakRss: Math.max(...results.map((result) => result.peakRss ?? 0)) || null,
      ratio: baseline ? requestsPerSecond / baseline : null,
      ratioRange: (() => {
        const ratios = pairedRatios(results);
        return ratios.length === 0 ? null : [Math.min(...ratios), Math.max(...ratios)];
      })(),
      cpuMicrosPerRequest,
      // Bare's CPU per request over this one's: the same ratio as req/s would be if each
      // server had a core to itself, and much less disturbed by other work on the machine.
      cpuRatio: baselineCpu && cpuMicrosPerRequest ? baselineCpu / cpuMicrosPerRequest : null,
      failures: results.reduce((sum, result) => sum + result.non2xx + result.errors + result.timeouts, 0),
      rounds: results,
    };
  });
}
