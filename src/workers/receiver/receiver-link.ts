import type { Logger } from "../../core/log/logger.js";
import { CircuitClient } from "../../core/receiver/circuit-client.js";
import type { WorkerEnv } from "../worker-env.js";
import { learnReceiver, receiverView } from "./receiver-views.js";

/**
 * A conversation object's side of its channel's receiver circuit: the core's
 * {@link CircuitClient}, whose view is what this isolate last learned of the receiver (module
 * state, so every conversation object of the isolate shares it and a healthy receiver costs no
 * request), whose keeper is the channel's receiver object, asked over RPC, and whose probe is the
 * one that object granted this conversation when it woke it.
 */
export class ReceiverLink {
  /** Until when the probe this conversation was granted may start; undefined: none granted. */
  private probeUntil: number | undefined;
  readonly client: CircuitClient;

  /** `receivers` is asked at each report: the object answers from the environment it is handed. */
  constructor(receivers: () => WorkerEnv["RECEIVERS"], logger: () => Logger) {
    this.client = new CircuitClient({
      view: receiverView,
      record: async (channel, report, wasProbe, holdAs) => {
        const namespace = receivers();
        const answer = await namespace.get(namespace.idFromName(channel)).report(channel, report, wasProbe, holdAs);
        learnReceiver(channel, answer);
        return answer;
      },
      takeProbe: () => {
        // A grant whose time ran out (a run of this conversation held it past it) is not a
        // probe any more: the receiver object may have granted the next one meanwhile.
        const live = this.probeUntil !== undefined && Date.now() < this.probeUntil;
        this.probeUntil = undefined;
        return live;
      },
      logger,
    });
  }

  /**
   * The receiver object woke this conversation as its probe: the next run posts, if it starts
   * before `until` (none from an object of an earlier version, which sends no time).
   */
  grantProbe(until = Number.POSITIVE_INFINITY): void {
    this.probeUntil = until;
  }

  /** The receiver is up again (the receiver object says so): the isolate's view follows. */
  static up(channel: string): void {
    learnReceiver(channel, { down: false, failing: false });
  }
}
