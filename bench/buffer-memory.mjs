// Memory with a full buffer: the receiver never answers, so the service holds
// `capacity` accepted messages (up to 256 of them in progress: 128 on their POST, the rest waiting for a connection). Each message
// has its own conversation, the worst case for the queue's per-conversation lanes. The
// sender offers a little more than the capacity to show that the rest is refused with 503.
import { createSenderPool, sendPaced } from "./paced-sender.mjs";
import { currentRss, peakRss } from "./proc-stats.mjs";

const SETTLE_MS = 1_000;

export async function runBufferMemory({ startService, secret, capacity, rate, log }) {
  const service = await startService(capacity);
  const pool = createSenderPool(service.url);
  try {
    const idleRss = currentRss(service.pid);
    const offered = capacity + Math.max(100, Math.round(capacity / 50));
    const sent = await sendPaced({
      pool,
      url: service.url,
      secret,
      rate,
      seconds: offered / rate,
      conversations: offered,
    });
    // Let the garbage collector and the in-progress POSTs settle before the last reading.
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const result = {
      capacity,
      offered,
      accepted: sent.accepted.size,
      refused: sent.statuses[503] ?? 0,
      failed: sent.errors + sent.unanswered + sent.skipped,
      idleRss,
      rssAfter: currentRss(service.pid),
      peakRss: peakRss(service.pid),
    };
    log(`  ${result.accepted} buffered, ${result.refused} × 503 once full`);
    return result;
  } finally {
    await pool.close();
    await service.stop();
  }
}
