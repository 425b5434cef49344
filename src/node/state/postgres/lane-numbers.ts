import type pg from "pg";
import { type LaneTicket, laneFencedError } from "../../../core/lifecycle/lane-store.js";
import { LruMap } from "../../../core/lru-map.js";
import { asStateError } from "./postgres-state-error.js";

/** Lanes whose last reply number is remembered; one forgotten is read again. */
const MAX_LANES = 100_000;

/**
 * The last reply number of each lane a replica runs, as its claims and its commits left it, so
 * that numbering a reply reads Postgres only for a lane it forgot. A number is known under the
 * epoch it was read or written under; a lane claimed anew is read again.
 */
export class LaneNumbers {
  readonly #last = new LruMap<{ epoch: number; last: number }>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly replica: string,
  ) {}

  /** A claim read lane `ticket.key`'s last reply number under its epoch. */
  primed(ticket: LaneTicket, last: number): void {
    this.#last.set(ticket.key, { epoch: ticket.epoch, last });
    this.#last.trimTo(MAX_LANES);
  }

  /** A group that numbered replies up to `highest` in lane `key` committed. */
  raised(key: string, highest: number): void {
    const known = this.#last.get(key);
    if (known !== undefined) this.#last.set(key, { epoch: known.epoch, last: Math.max(known.last, highest) });
  }

  /** What is known of lane `key` may be wrong (a write refused, or of unknown outcome): read it again. */
  forget(key: string): void {
    this.#last.delete(key);
  }

  /**
   * The lane's last reply number under `ticket`: as known here, else read from its row, which
   * must still name this replica under the ticket's epoch (`lane_fenced` otherwise).
   */
  async lastSequence(ticket: LaneTicket): Promise<number> {
    const known = this.#last.get(ticket.key);
    if (known !== undefined && known.epoch === ticket.epoch) return known.last;
    let rows: { last_seq: string }[];
    try {
      rows = (
        await this.pool.query<{ last_seq: string }>(
          "SELECT last_seq FROM webhook_channel.lanes WHERE conversation = $1 AND epoch = $2 AND owner = $3",
          [ticket.key, ticket.epoch, this.replica],
        )
      ).rows;
    } catch (error) {
      throw asStateError(error);
    }
    const row = rows[0];
    if (row === undefined) throw laneFencedError(ticket.key);
    const value = Number(row.last_seq);
    this.primed(ticket, value);
    return value;
  }
}
