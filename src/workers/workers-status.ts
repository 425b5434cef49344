import type { ChannelStatus, StatusReport, StatusSource } from "../core/admin/status-report.js";
import { isoOrNull } from "../core/admin/status-report.js";
import type { ReceiverStanding } from "../core/receiver/receiver-standing.js";
import { countDeadLetters } from "./dead-letters/durable-dead-letter-store.js";
import type { WorkerEnv } from "./worker-env.js";

/**
 * What a Worker cannot show, said in the report and so on the console: a Worker keeps no
 * counts, holds no queue of its own and limits brains per isolate.
 */
export const NOT_ON_WORKERS: readonly string[] = [
  "Counts of accepted, delivered, retrying and dead-lettered messages: a Worker keeps none. With a METRICS binding they are written to Workers Analytics Engine; query them with its SQL API (docs/operations.md, Workers: Analytics Engine).",
  "Queue depth, capacity and oldest pending message: the backlog is the platform's queue (webhook-channel-inbound); see its Metrics tab in the Cloudflare dashboard. There is no capacity: the platform's queue is the buffer.",
  "Brains' calls in flight and pauses: each isolate limits its own calls to a brain, so there is no count for the whole Worker.",
];

/**
 * `GET /admin/status` on Workers: each channel's receiver circuit (one read of its receiver
 * object, null when it cannot be asked) and the dead letters listed (one call to the
 * dead-letter store, null when it cannot answer); the rest is null, and {@link NOT_ON_WORKERS}
 * says why.
 */
export function createWorkersStatus(
  env: Pick<WorkerEnv, "RECEIVERS" | "DEAD_LETTER_STORE">,
  channels: readonly string[],
): StatusSource {
  return {
    async report(): Promise<StatusReport> {
      const [deadLetters, standings] = await Promise.all([
        countDeadLetters(env.DEAD_LETTER_STORE).catch(() => null),
        Promise.all(channels.map((channel) => receiverStanding(env.RECEIVERS, channel))),
      ]);
      return {
        runtime: "workers",
        generated_at: new Date().toISOString(),
        counting_since: null,
        channels: channels.map((channel, index): ChannelStatus => {
          const standing = standings[index];
          return {
            channel,
            counts: null,
            queue: null,
            receiver:
              standing === undefined || standing === null
                ? null
                : {
                    up: standing.up,
                    since: isoOrNull(standing.since),
                    waiting: standing.waiting,
                    next_probe_at: isoOrNull(standing.nextProbeAt),
                  },
          };
        }),
        brains: null,
        dead_letters: deadLetters,
        not_available: NOT_ON_WORKERS,
      };
    },
  };
}

/** A channel's receiver as its object says it stands; null when the object cannot be asked. */
async function receiverStanding(receivers: WorkerEnv["RECEIVERS"], channel: string): Promise<ReceiverStanding | null> {
  try {
    return await receivers.get(receivers.idFromName(channel)).status();
  } catch {
    return null;
  }
}
