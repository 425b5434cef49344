/** The signals that ask the service to stop. */
const STOP_SIGNALS: readonly NodeJS.Signals[] = ["SIGTERM", "SIGINT"];

/**
 * SIGTERM and SIGINT, taken over from their default action (ending the process at once) for
 * as long as the service runs, the start included: a supervisor that stops the service as soon
 * as it logs `listening`, or earlier, gets a graceful stop, not a kill.
 */
export interface StopSignals {
  /** The first SIGTERM or SIGINT: stop gracefully. */
  readonly first: Promise<NodeJS.Signals>;
  /** The second one: give up waiting and exit. */
  readonly second: Promise<NodeJS.Signals>;
  /** The first signal, once one came. */
  received(): NodeJS.Signals | undefined;
  /** Gives both signals back their default action (a start that failed: nothing is left to stop). */
  release(): void;
}

/**
 * Takes over SIGTERM and SIGINT now; see {@link StopSignals}. `takeOver` hands back the signals
 * held before (see `holdStops`), called once this function listens: a handle left with no
 * listener for a moment would drop a signal that came while the event loop was busy.
 */
export function watchStopSignals(takeOver: () => readonly NodeJS.Signals[] = () => []): StopSignals {
  let count = 0;
  let firstSignal: NodeJS.Signals | undefined;
  let resolveFirst: (signal: NodeJS.Signals) => void = () => undefined;
  let resolveSecond: (signal: NodeJS.Signals) => void = () => undefined;
  const first = new Promise<NodeJS.Signals>((resolve) => {
    resolveFirst = resolve;
  });
  const second = new Promise<NodeJS.Signals>((resolve) => {
    resolveSecond = resolve;
  });
  const onSignal = (signal: NodeJS.Signals): void => {
    count += 1;
    if (count === 1) {
      firstSignal = signal;
      resolveFirst(signal);
    } else if (count === 2) {
      resolveSecond(signal);
    }
  };
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
  for (const signal of takeOver()) onSignal(signal);
  return {
    first,
    second,
    received: () => firstSignal,
    release() {
      for (const signal of STOP_SIGNALS) process.off(signal, onSignal);
    },
  };
}
