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
  private probeGranted = false;
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
        const granted = this.probeGranted;
        this.probeGranted = false;
        return granted;
      },
      logger,
    });
  }

  /** The receiver object woke this conversation as its probe: the next run posts. */
  grantProbe(): void {
    this.probeGranted = true;
  }

  /** The receiver is up again (the receiver object says so): the isolate's view follows. */
  static up(channel: string): void {
    learnReceiver(channel, { down: false, failing: false });
  }
}
