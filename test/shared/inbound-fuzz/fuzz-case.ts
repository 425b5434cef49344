/** What the injected dependencies do for one request (chosen with it, so a run replays exactly). */
export type QueueMode =
  | "sync"
  | "async"
  | "full"
  | "throw"
  | "reject"
  | "reject-full"
  | "state-down"
  | "commits-behind";

/** The state of the app's surroundings while one request runs. */
export interface World {
  shuttingDown: boolean;
  queueMode: QueueMode;
  restoreOk: boolean;
}

/** One generated request, with the world it runs in. */
export interface FuzzCase {
  readonly index: number;
  readonly method: string;
  readonly path: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string | Uint8Array | undefined;
  /** What the body was made as, for the failure message. */
  readonly kind: string;
  readonly world: World;
}
