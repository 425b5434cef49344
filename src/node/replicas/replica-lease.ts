import pg from "pg";
import { errorMessage } from "../../core/channel-error.js";
import type { Logger } from "../../core/log/logger.js";
import { waitAtMost } from "../../core/wait-at-most.js";
import { notifyChannel } from "../state/postgres/job-notices.js";
import { PAUSES_CHANNEL } from "./replica-brains.js";

/** What {@link ReplicaLease} needs. */
export interface ReplicaLeaseOptions {
  /** The `postgres://` URL the pool uses; the lease has a connection of its own. */
  readonly url: string;
  readonly replica: string;
  /** How long a lease lasts without renewal: the time others wait before taking over. */
  readonly leaseMs: number;
  readonly logger: Logger;
  /** A conversation of this replica has a job stored by another replica. */
  readonly onNotify: (conversation: string) => void;
  /** Another replica met a brain's pause (see `replica-brains.ts`). */
  readonly onPause: (payload: string) => void;
  /**
   * The connection is (again) up and listening: notifications may have been missed, so the
   * replica looks for jobs it was not told of.
   */
  readonly onConnected: () => void;
  /** The lease became valid again after it was not, or stopped being valid. */
  readonly onValidity: (valid: boolean) => void;
  /**
   * A renewal found the lease already run out in the database (an outage, a stalled process):
   * other replicas may have taken this one's conversations meanwhile.
   */
  readonly onLapsed: () => void;
}

/**
 * One replica's lease, on a connection of its own (a busy pool must not delay the renewal):
 * it LISTENs for jobs stored by other replicas in its conversations, and renews its row in
 * `replicas` every fifth of the lease, with the database's clock. The replica may start jobs
 * only while the lease is known valid: until `leaseMs` after the last renewal was sent. Others
 * take over its conversations only once the row's lease ran out, so the two never run together
 * (unless a run started before the end of the lease outlasts it: at most that job runs twice).
 */
export class ReplicaLease {
  private client: pg.Client | undefined;
  private validUntil = 0;
  private wasValid = false;
  /** Since when the connection has been up without a break (0: it is not). */
  private upSince = 0;
  private timer: ReturnType<typeof setInterval> | undefined;
  private stopped = false;
  private connecting: Promise<void> | undefined;
  /** True once a renewal was written: a row missing after that was deleted by someone else. */
  private renewed = false;
  /** The connection being opened, whose first renewal counts before it becomes {@link client}. */
  private opening: pg.Client | undefined;
  /** The connection a renewal is under way on: a tick meanwhile sends none behind it. */
  private renewingOn: pg.Client | undefined;

  constructor(private readonly options: ReplicaLeaseOptions) {}

  /** How long the lease lasts without renewal. */
  get leaseMs(): number {
    return this.options.leaseMs;
  }

  /** Connects and takes the first lease; rejects when the database cannot be reached. */
  async start(): Promise<void> {
    await this.connect();
    this.timer = setInterval(() => this.tick(), Math.max(100, Math.floor(this.options.leaseMs / 5)));
    this.timer.unref();
  }

  /** True while this replica may start jobs. */
  isValid(): boolean {
    return performance.now() < this.validUntil;
  }

  /**
   * Whether this replica may take over conversations of replicas whose lease ran out: only
   * once its own connection has been up for a whole lease, so that after an outage of the
   * database every live replica had the time to renew before any of them is taken over.
   */
  mayTakeOver(): boolean {
    return this.upSince > 0 && performance.now() - this.upSince >= this.options.leaseMs;
  }

  /** Stops renewing and closes the connection (the row is removed by the caller's leave). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    const client = this.client;
    this.client = undefined;
    if (client !== undefined) await endWithin(client, END_BOUND_MS);
  }

  private tick(): void {
    if (this.stopped) return;
    const valid = this.isValid();
    if (valid !== this.wasValid) {
      this.wasValid = valid;
      if (!valid) this.options.logger.warn("replica lease lapsed: no job starts here until it is renewed");
      this.options.onValidity(valid);
    }
    if (this.client === undefined) {
      this.connect().catch(() => undefined);
      return;
    }
    const client = this.client;
    // One renewal at a time on a connection: one queued behind a renewal under way would run only
    // once that one ended, and a query sent while another runs is deprecated by the driver. A
    // renewal that fails or hangs (query_timeout) takes a new connection at the next tick.
    if (this.renewingOn === client) return;
    this.renewingOn = client;
    this.renew(client)
      .catch((error: unknown) => this.drop(client, error))
      .finally(() => {
        if (this.renewingOn === client) this.renewingOn = undefined;
      })
      .catch(() => undefined);
  }

  private drop(client: pg.Client, error: unknown): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.upSince = 0;
    this.options.logger.warn("replica lease connection lost; reconnecting", { error: errorMessage(error) });
    void endWithin(client, END_BOUND_MS);
  }

  private connect(): Promise<void> {
    this.connecting ??= this.open().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async open(): Promise<void> {
    const { url, replica } = this.options;
    const client = new pg.Client({
      connectionString: url,
      application_name: "webhook-channel lease",
      keepAlive: true,
      connectionTimeoutMillis: this.options.leaseMs,
      query_timeout: this.options.leaseMs,
    });
    client.on("error", (error) => this.drop(client, error));
    client.on("end", () => this.drop(client, new Error("connection ended")));
    client.on("notification", (message) => {
      if (message.payload === undefined || message.payload === "") return;
      if (message.channel === PAUSES_CHANNEL) this.options.onPause(message.payload);
      else this.options.onNotify(message.payload);
    });
    this.opening = client;
    try {
      await client.connect();
      await client.query(`LISTEN "${notifyChannel(replica)}"`);
      await client.query(`LISTEN "${PAUSES_CHANNEL}"`);
      await this.renew(client);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    } finally {
      if (this.opening === client) this.opening = undefined;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.upSince = performance.now();
    this.options.onConnected();
  }

  private async renew(client: pg.Client): Promise<void> {
    // Monotonic: a wall clock stepped back must not stretch the lease.
    const sentAt = performance.now();
    const { leaseMs, replica } = this.options;
    // `old` is read in the statement's snapshot, before the upsert: the lease as it was. A row
    // that is gone after this replica wrote one was deleted as a dead replica's (cut off for
    // long): that is a lapse too, and what it ran may run elsewhere.
    const result = await client.query<{ lapsed: boolean }>(
      `WITH old AS (SELECT lease_until FROM webhook_channel.replicas WHERE id = $1)
       INSERT INTO webhook_channel.replicas (id, lease_until) VALUES ($1, now() + make_interval(secs => $2))
       ON CONFLICT (id) DO UPDATE SET lease_until = EXCLUDED.lease_until, swept = false, gone = false
       RETURNING coalesce((SELECT lease_until < now() FROM old), $3) AS lapsed`,
      [replica, leaseMs / 1000, this.renewed],
    );
    // Answered on a connection given up on meanwhile: the renewals of the live one count.
    if (client !== this.client && client !== this.opening) return;
    // Run out here, it may have run out in the database too, though the row says otherwise: a
    // renewal of a connection given up on can still commit once the database answers again.
    const ranOut = this.renewed && performance.now() >= this.validUntil;
    this.renewed = true;
    // From when it was sent: the database's lease_until is never earlier than this.
    this.validUntil = sentAt + leaseMs;
    if (result.rows[0]?.lapsed === true || ranOut) {
      this.options.logger.warn(
        "replica lease had run out: other replicas may have taken its conversations; taking stock",
      );
      this.options.onLapsed();
    }
    if (!this.wasValid) {
      this.wasValid = true;
      this.options.onValidity(true);
    }
  }
}

/** How long a connection's goodbye may take before its socket is cut. */
const END_BOUND_MS = 1_000;

/**
 * Ends `client`, cutting its socket when the server has not answered the goodbye within `ms`: a
 * database that stops answering (frozen, cut off) never does, and the socket would stay open
 * until the system's keepalive gives up, holding a stop for hours.
 */
async function endWithin(client: pg.Client, ms: number): Promise<void> {
  if (await waitAtMost(client.end(), ms)) return;
  // pg offers no public way to drop a connection whose goodbye goes unanswered.
  (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
}
