// Inbound accept rate, A/B: every round starts a fresh process of each contender and warms
// them all up; then each is measured in slices (1 s each with wrk), in the round's order and
// then in reverse (A B C, C B A), so that each server's measured time is spread over the same
// stretch of the round. On a VM whose speed drifts from second to second, back-to-back
// palindromic slices pair the contenders far more closely than one run each, several seconds
// apart. The round's order rotates from round to round, and a contender's ratio to bare is the
// median over the rounds of its rate over bare's in the same round.
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
 * (key "bare") first; `loader` from loader.mjs, whose `measure` is one slice. Returns per
 * contender the rounds (slices summed) and the medians, with the median per-round ratio to
 * the baseline.
 */
export async function runInbound({ contenders, loader, secret, rounds, slices, connections, log }) {
  const headers = messageHeaders(secret);
  const body = messageBody();
  const byKey = new Map(contenders.map((contender) => [contender.key, { contender, rounds: [] }]));

  for (let round = 0; round < rounds; round += 1) {
    const order = contenders.map((_, index) => contenders[(index + round) % contenders.length]);
    const servers = new Map();
    try {
      for (const contender of order) servers.set(contender.key, await contender.start());
      for (const contender of order) {
        await loader.warmup({ url: servers.get(contender.key).url, headers, body, connections });
      }
      const measured = new Map(order.map((contender) => [contender.key, []]));
      for (let slice = 0; slice < slices; slice += 1) {
        for (const contender of slice % 2 === 0 ? order : [...order].reverse()) {
          const server = servers.get(contender.key);
          const cpu = server.cpuSeconds ?? (() => cpuSeconds(server.pid));
          const cpuBefore = cpu();
          const result = await loader.measure({ url: server.url, headers, body, connections });
          const cpuAfter = cpu();
          result.cpuSeconds = cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore;
          measured.get(contender.key).push(result);
        }
      }
      for (const contender of order) {
        const server = servers.get(contender.key);
        const result = combineSlices(measured.get(contender.key));
        // VmHWM covers the whole life of this fresh process: warm-up plus the measured slices.
        result.peakRss = server.peakRss === undefined ? peakRss(server.pid) : server.peakRss();
        byKey.get(contender.key).rounds.push(result);
        const statuses = Object.entries(result.non2xxStatuses).map(([status, count]) => `${count} × ${status}`);
        log(
          `  round ${round + 1}/${rounds} ${contender.name}: ${Math.round(result.requestsPerSecond)} req/s` +
            (result.non2xx + result.errors > 0 ? ` (${[...statuses, `${result.errors} errors`].join(", ")})` : ""),
        );
      }
    } finally {
      for (const server of servers.values()) await server.stop();
    }
  }

  const bare = byKey.get("bare").rounds;
  return contenders.map(({ key, name }) => {
    const results = byKey.get(key).rounds;
    const { ratio, ratioRange, cpuRatio } = pairedRatios(results, bare);
    return {
      key,
      name,
      requestsPerSecond: median(results.map((result) => result.requestsPerSecond)),
      p50: median(results.map((result) => result.p50)),
      p99: median(results.map((result) => result.p99)),
      peakRss: Math.max(...results.map((result) => result.peakRss ?? 0)) || null,
      ratio,
      ratioRange,
      cpuMicrosPerRequest: median(results.map((result) => result.cpuMicrosPerRequest)),
      cpuRatio,
      failures: results.reduce((sum, result) => sum + result.non2xx + result.errors + result.timeouts, 0),
      rounds: results,
    };
  });
}

/**
 * `results` against `base`, the rounds of two contenders of one run: the median over the
 * rounds of each round's req/s over base's in the same round, the lowest and highest of
 * those, and the median of base's CPU per request over this one's.
 */
function pairedRatios(results, base) {
  const paired = (pick) =>
    results
      .map((result, round) => {
        const own = pick(result, base[round]);
        return own === null || !Number.isFinite(own) ? null : own;
      })
      .filter((value) => value !== null);
  const ratios = paired((result, other) =>
    other?.requestsPerSecond ? result.requestsPerSecond / other.requestsPerSecond : null,
  );
  // Base's CPU per request over this one's: the same ratio as req/s would be if each
  // server had a core to itself, and much less disturbed by other work on the machine.
  const cpuRatios = paired((result, other) =>
    other?.cpuMicrosPerRequest && result.cpuMicrosPerRequest
      ? other.cpuMicrosPerRequest / result.cpuMicrosPerRequest
      : null,
  );
  return {
    ratio: median(ratios),
    // The spread says how far one round can be trusted on this machine.
    ratioRange: ratios.length === 0 ? null : [Math.min(...ratios), Math.max(...ratios)],
    cpuRatio: median(cpuRatios),
  };
}

/**
 * Row `key` of runInbound's result against row `baseKey` (both measured in the same rounds),
 * paired per round like every ratio to bare; null when either row is missing.
 */
export function compareRows(inbound, key, baseKey) {
  const row = inbound.find((candidate) => candidate.key === key);
  const base = inbound.find((candidate) => candidate.key === baseKey);
  if (row === undefined || base === undefined) return null;
  return { key, baseKey, ...pairedRatios(row.rounds, base.rounds) };
}

/**
 * One round of a contender from its slices: counts and times summed, latency percentiles
 * averaged weighted by answers (a percentile of the union would need the full histograms).
 */
function combineSlices(slices) {
  const sum = (pick) => slices.reduce((total, slice) => total + pick(slice), 0);
  const ok = sum((slice) => slice.ok);
  const seconds = sum((slice) => slice.seconds);
  const weighted = (pick) =>
    slices.some((slice) => pick(slice) == null) || ok === 0 ? null : sum((slice) => pick(slice) * slice.ok) / ok;
  const non2xxStatuses = {};
  for (const slice of slices) {
    for (const [status, count] of Object.entries(slice.non2xxStatuses)) {
      non2xxStatuses[status] = (non2xxStatuses[status] ?? 0) + count;
    }
  }
  const cpu = slices.some((slice) => slice.cpuSeconds === null) ? null : sum((slice) => slice.cpuSeconds);
  return {
    slices: slices.length,
    seconds,
    requestsPerSecond: seconds > 0 ? ok / seconds : 0,
    ok,
    non2xx: sum((slice) => slice.non2xx),
    non2xxStatuses,
    errors: sum((slice) => slice.errors),
    timeouts: sum((slice) => slice.timeouts),
    p50: weighted((slice) => slice.p50),
    p99: weighted((slice) => slice.p99),
    cpuMicrosPerRequest: cpu === null || ok === 0 ? null : (cpu * 1e6) / ok,
  };
}
