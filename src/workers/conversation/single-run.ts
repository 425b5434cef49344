/**
 * One run at a time of a lane's loop: a call that finds one under way gets that one. A run
 * resolves with the error that failed it, if any, rather than rejecting, so that a run nobody
 * waits for any more (its hand-over returned) cannot go unhandled; whoever waits for it throws
 * what it resolves with.
 */
export class SingleRun {
  private current: Promise<unknown> | undefined;

  /** `run` is one run of the loop. */
  constructor(private readonly run: () => Promise<void>) {}

  /** The run under way, if any. */
  get underWay(): Promise<unknown> | undefined {
    return this.current;
  }

  /** The run under way, or a new one. */
  start(): Promise<unknown> {
    if (this.current !== undefined) return this.current;
    const run = this.run().then(
      () => undefined,
      (error: unknown) => error ?? new Error("the run failed"),
    );
    this.current = run;
    void run.then(() => {
      if (this.current === run) this.current = undefined;
    });
    return run;
  }
}
