/** SIGHUPs taken over before the service listens for them itself. */
export interface HeldHangUps {
  /** Gives the signal back (the service now handles it); returns how many came meanwhile. */
  release(): number;
}

/**
 * Takes SIGHUP over at once. Its default action ends the process, and loading the service's
 * modules takes a while: a reload asked for then (a supervisor's `ExecReload`, a log rotation)
 * must not kill a service that is starting. The entry calls this before it loads anything else.
 */
export function holdHangUps(): HeldHangUps {
  let count = 0;
  const onHangUp = (): void => {
    count += 1;
  };
  process.on("SIGHUP", onHangUp);
  return {
    release() {
      process.off("SIGHUP", onHangUp);
      return count;
    },
  };
}

/** SIGTERM and SIGINT taken over before the service listens for them itself. */
export interface HeldStops {
  /** Gives the signals back (the service now handles them); returns those that came meanwhile, in order. */
  release(): NodeJS.Signals[];
}

/**
 * Takes SIGTERM and SIGINT over at once, for the same reason as {@link holdHangUps}: a
 * supervisor that stops the service while its modules load gets a graceful stop (or a start
 * abandoned before anything was opened), not a kill.
 */
export function holdStops(): HeldStops {
  const came: NodeJS.Signals[] = [];
  const onStop = (signal: NodeJS.Signals): void => {
    came.push(signal);
  };
  process.on("SIGTERM", onStop);
  process.on("SIGINT", onStop);
  return {
    release() {
      process.off("SIGTERM", onStop);
      process.off("SIGINT", onStop);
      return came;
    },
  };
}
