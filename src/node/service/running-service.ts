import type { Listener } from "../listener/serve-listeners.js";
import type { ReloadInputs, ReloadResult } from "./reload-service.js";

/** What a stop left behind. */
export interface StopResult {
  /** Ids of accepted messages not finished when the wait ended. */
  readonly left: readonly string[];
  /** True when stored messages a resume had still to load were not loaded before the wait ended (they stay in state_dir). */
  readonly unloaded: boolean;
  /**
   * `kept` in state_dir (they resume at the next start), `shared` in Postgres (the other replicas
   * take them over, or this one at its next start), or `lost` (in-memory queue).
   */
  readonly fate: "kept" | "shared" | "lost";
}

/** A started service. */
export interface RunningService {
  readonly listeners: readonly Listener[];
  /**
   * Graceful stop: new inbound requests get 503 `shutting_down`, accepted messages finish
   * (up to `timeoutMs`), then the sockets close.
   */
  stop(timeoutMs: number): Promise<StopResult>;
  /**
   * The stop of a process that exits now (a second signal): its lanes stop where they are, and
   * what was not finished is named; nothing is waited for or closed.
   */
  abandon(): Promise<Pick<StopResult, "left" | "fate">>;
  /**
   * Swaps in a reloaded configuration and its secrets without closing a connection or
   * dropping an accepted message (see {@link applyReload}), or refuses it, logging why, and
   * carries on as it was. Reloads run one at a time, in the order asked.
   */
  reload(next: ReloadInputs): Promise<ReloadResult>;
  /**
   * Why this process lost its state to another one for good (see `StateBackend.claimLost`), asked
   * by the runtime on a timer; undefined where that cannot happen.
   */
  readonly claimLost: (() => string | undefined) | undefined;
}
