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
