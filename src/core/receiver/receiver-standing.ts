import type { CircuitState } from "./receiver-circuit.js";

/** How a channel's receiver stands, as `/readyz` reports it on either runtime. */
export interface ReceiverStanding {
  readonly up: boolean;
  /** Epoch ms when it went down. */
  readonly since?: number;
  /** Conversations whose replies wait for it. */
  readonly waiting: number;
  /** Epoch ms of the next probe. */
  readonly nextProbeAt?: number;
}

/** How a receiver whose circuit is `state` stands, with `waiting` conversations held for it. */
export function standingOf(state: CircuitState, waiting: number): ReceiverStanding {
  const { down } = state;
  if (down === undefined) return { up: true, waiting };
  return { up: false, since: down.since, waiting, nextProbeAt: down.probeAt };
}

/** One entry of `/readyz`'s `receivers_down`. */
export interface ReceiverDownEntry {
  readonly channel: string;
  readonly down_for_ms: number;
  readonly waiting: number;
  readonly next_probe_in_ms: number;
}

/**
 * The `receivers_down` list of `/readyz`: the channels whose receiver is down, with how long,
 * how many conversations wait and when the next probe is. Readiness itself stays `ready`:
 * accepting is still right while replies wait in order.
 */
export function receiversDown(
  standings: Iterable<{ readonly channel: string; readonly standing: ReceiverStanding }>,
  now: number,
): ReceiverDownEntry[] {
  const entries: ReceiverDownEntry[] = [];
  for (const { channel, standing } of standings) {
    if (standing.up) continue;
    entries.push({
      channel,
      down_for_ms: Math.max(0, now - (standing.since ?? now)),
      waiting: standing.waiting,
      next_probe_in_ms: Math.max(0, (standing.nextProbeAt ?? now) - now),
    });
  }
  return entries;
}
