// One file, over the usual 250 lines, on purpose: it is the life of one worker thread (runs in
// flight, the message batcher, replacing a thread that died, reload and close), and all of it
// shares the thread's state. The message types and the batcher are beside it.
import { Worker } from "node:worker_threads";
import { ChannelError, errorMessage } from "../../core/channel-error.js";
import type { Config } from "../../core/config/config-schema.js";
import type { RunHooks } from "../../core/consumer/create-consumer.js";
import type { Job, JobOutcome } from "../../core/lifecycle/job.js";
import { isLaneFenced } from "../../core/lifecycle/lane-store.js";
import type { LogFields } from "../../core/log/logger.js";
import type { Admission } from "../../core/receiver/receiver-circuit.js";
import { waitAtMost } from "../../core/wait-at-most.js";
import type { DeliveryThreadData, FromDeliveryThread, ToDeliveryThread } from "./delivery-thread-messages.js";
import type { DeliveryThreadOptions } from "./delivery-thread-options.js";
import { createThreadBrainPauses } from "./thread-brain-pauses.js";
import { applyMetricEvents } from "./thread-metrics.js";
import { createTurnBatcher } from "./turn-batcher.js";

export type { DeliveryThreadOptions } from "./delivery-thread-options.js";

/** The consumer, run on its own thread; the same `run` as the in-thread consumer's. */
export interface DeliveryThread {
  /**
   * Runs a job on the delivery thread. Rejects only when the thread stopped before the run
   * returned; the queue then keeps the job and tries it again. A step the thread reports
   * with an ack (with `state_dir`) is acknowledged once the promise `hooks.save` returns
   * settles, so the thread posts only what is stored.
   */
  run(job: Job, hooks: RunHooks, admission?: Admission): Promise<JobOutcome>;
  /**
   * Aborts the thread's posts in flight, closes its database and ends it; a thread still busy
   * after `timeoutMs` (a brain call cannot be aborted) is stopped.
   */
  close(timeoutMs: number): Promise<void>;
  /** Stops the thread at once, as a crash would: runs in hand reject, the next run starts a new thread. */
  terminate(): Promise<void>;
  /**
   * Has the thread rebuild its brains and channel routes from `config`, with `env` (the
   * resolved value of every variable `config` names) before its own environment; resolves
   * once the next runs use them. A thread started later (after a crash) starts from them too.
   * Rejects, the thread keeping what it had, when they cannot be built or the thread stops.
   */
  reload(config: Config, env: Readonly<Record<string, string | undefined>>): Promise<void>;
}

interface PendingRun {
  readonly resolve: (outcome: JobOutcome) => void;
  readonly reject: (error: Error) => void;
  /**
   * The run's hooks, here: `save` is told of each step the thread reports (a promise it returns,
   * the step's commit, is waited for before the ack), `record` of the calls and POSTs that come
   * back with the outcome, and `receiverDown` asked with each ack (the thread has no circuit).
   */
  readonly hooks: RunHooks;
}

interface Thread {
  readonly worker: Worker;
  /** The runs this thread holds, by id. */
  readonly pending: Map<number, PendingRun>;
  /** The reloads this thread has not answered yet, by id. */
  readonly reloads: Map<number, { resolve: () => void; reject: (error: Error) => void }>;
  readonly outbox: { push(message: ToDeliveryThread): void; flush(): void };
  readonly ready: Promise<void>;
  readonly exited: Promise<void>;
}

/**
 * Starts the delivery thread and resolves once its consumer is built (rejecting with the
 * thread's error, a `config_invalid` for instance, when it cannot be). A thread that dies
 * later is replaced at the next run; the runs it held reject, so their jobs are retried.
 */
export async function startDeliveryThread(options: DeliveryThreadOptions): Promise<DeliveryThread> {
  const { entry, logger } = options;
  // Both change with a reload, so that a thread started after a crash starts from them.
  let config = options.config;
  const env: Record<string, string> = {};
  const setEnv = (values: Readonly<Record<string, string | undefined>>): void => {
    for (const [name, value] of Object.entries(values)) {
      if (value === undefined) delete env[name];
      else env[name] = value;
    }
  };
  setEnv(options.env);
  let nextId = 0;
  let closing = false;
  const pauses = createThreadBrainPauses();

  const spawn = (initial: boolean): Thread => {
    const data: DeliveryThreadData = { config, pauses: pauses.current(Date.now()) };
    const worker = new Worker(entry, { workerData: data, env: { ...env } });
    const pending = new Map<number, PendingRun>();
    const reloads: Thread["reloads"] = new Map();
    let settleReady: { resolve: () => void; reject: (error: Error) => void } | undefined;
    const ready = new Promise<void>((resolve, reject) => {
      settleReady = { resolve, reject };
    });
    // Only the first thread's start is awaited; a replacement's failure is logged instead.
    ready.catch(() => undefined);
    const outbox = createTurnBatcher<ToDeliveryThread>((batch) => worker.postMessage(batch));
    let lastError: string | undefined;
    // The first thread's start-up failure is the caller's to report; any later failure is logged.
    let started = !initial;
    const receive = (message: FromDeliveryThread): void => {
      switch (message.kind) {
        case "progress": {
          const { id, ack } = message;
          const answer = (cause?: unknown): void => {
            if (!ack) return;
            if (cause === undefined)
              outbox.push(
                pending.get(id)?.hooks.receiverDown?.() === true
                  ? { kind: "progressed", id, receiverDown: true }
                  : { kind: "progressed", id },
              );
            else if (isLaneFenced(cause))
              outbox.push({ kind: "progressed", id, error: errorMessage(cause), fenced: true });
            else outbox.push({ kind: "progressed", id, error: errorMessage(cause) });
          };
          let stored: unknown;
          try {
            const run = pending.get(id);
            if (run === undefined) {
              answer(new Error("the run is no longer awaited"));
              break;
            }
            stored = run.hooks.save(message.job, message.answered);
          } catch (cause) {
            answer(cause);
            break;
          }
          // With state_dir the step is acknowledged once its group committed.
          if (stored instanceof Promise) {
            stored.then(
              () => answer(),
              (cause: unknown) => answer(cause),
            );
          } else answer();
          break;
        }
        case "outcome": {
          const run = pending.get(message.id);
          pending.delete(message.id);
          if (message.events !== undefined && message.events.length > 0) run?.hooks.record?.(message.events);
          run?.resolve(message.outcome);
          break;
        }
        case "rejected": {
          const run = pending.get(message.id);
          pending.delete(message.id);
          run?.reject(new ChannelError("internal_error", message.message, { retryable: true }));
          break;
        }
        case "log": {
          const fields = message.fields === undefined ? undefined : (JSON.parse(message.fields) as LogFields);
          logger[message.level](message.msg, fields);
          break;
        }
        case "ready":
          started = true;
          settleReady?.resolve();
          break;
        case "failed":
          lastError = message.message;
          if (started) logger.error("a new delivery thread could not start", { error: message.message });
          settleReady?.reject(new ChannelError(message.code, message.message));
          break;
        case "reloaded": {
          const reload = reloads.get(message.id);
          reloads.delete(message.id);
          reload?.resolve();
          break;
        }
        case "reload_failed": {
          const reload = reloads.get(message.id);
          reloads.delete(message.id);
          reload?.reject(new ChannelError(message.code, message.message));
          break;
        }
        case "metrics":
          pauses.noteMetrics(message.events);
          if (options.metrics !== undefined) applyMetricEvents(options.metrics, message.events);
          break;
        case "operator_event":
          pauses.noteEvent(message.event);
          options.operatorEvents?.emit(message.event);
          break;
        case "closed":
          break;
      }
    };
    worker.on("message", (batch: FromDeliveryThread[]) => {
      for (const message of batch) {
        // One message that cannot be handled must not cost the outcomes batched after it.
        try {
          receive(message);
        } catch (error) {
          logger.error("cannot handle a message from the delivery thread", {
            kind: message.kind,
            error: errorMessage(error),
          });
        }
      }
    });
    worker.on("messageerror", (error) => {
      // A message that could not be read may have been an outcome: replace the thread, so the
      // runs it held fail and are retried rather than wait for ever.
      lastError = `a message from the thread could not be read: ${errorMessage(error)}`;
      logger.error("the delivery thread sent a message that could not be read; replacing it", { error: lastError });
      if (current?.worker === worker) current = undefined;
      worker.terminate().catch(() => undefined);
    });
    worker.on("error", (error) => {
      // The thread is ending: new runs go to its replacement.
      if (current?.worker === worker) current = undefined;
      lastError = errorMessage(error);
      if (!closing && started) logger.error("the delivery thread failed", { error: lastError });
    });
    const exited = new Promise<void>((resolve) => {
      worker.once("exit", (code) => {
        if (current?.worker === worker) current = undefined;
        const reason = `the delivery thread stopped (exit code ${code})${lastError === undefined ? "" : `: ${lastError}`}`;
        settleReady?.reject(new ChannelError("internal_error", reason));
        if (pending.size > 0) {
          if (!closing)
            logger.error("the delivery thread stopped with runs in hand; they will be retried", {
              count: pending.size,
            });
          const runs = [...pending.values()];
          pending.clear();
          for (const run of runs) run.reject(new ChannelError("internal_error", reason, { retryable: true }));
        }
        const unanswered = [...reloads.values()];
        reloads.clear();
        for (const reload of unanswered) reload.reject(new ChannelError("internal_error", reason));
        resolve();
      });
    });
    return { worker, pending, reloads, outbox, ready, exited };
  };

  let current: Thread | undefined = spawn(true);
  await current.ready;

  return {
    run(job, hooks, admission = "send") {
      if (closing)
        return Promise.reject(new ChannelError("shutting_down", "the delivery thread is closed", { retryable: true }));
      current ??= spawn(false);
      const id = nextId;
      nextId += 1;
      const thread = current;
      return new Promise<JobOutcome>((resolve, reject) => {
        thread.pending.set(id, { resolve, reject, hooks });
        thread.outbox.push({
          kind: "run",
          id,
          job,
          firstSequence: hooks.firstSequence,
          admission,
          record: hooks.record !== undefined,
        });
      });
    },
    async close(timeoutMs) {
      closing = true;
      const thread = current;
      if (thread === undefined) return;
      thread.outbox.push({ kind: "close" });
      thread.outbox.flush();
      if (!(await waitAtMost(thread.exited, timeoutMs))) {
        logger.warn("the delivery thread did not end in time; stopping it", { timeout_ms: timeoutMs });
        await thread.worker.terminate();
        await thread.exited;
      }
    },
    async reload(next, nextEnv) {
      if (closing) throw new ChannelError("shutting_down", "the delivery thread is closed");
      const thread = current;
      if (thread !== undefined) {
        const id = nextId;
        nextId += 1;
        await new Promise<void>((resolve, reject) => {
          thread.reloads.set(id, { resolve, reject });
          thread.outbox.push({ kind: "reload", id, config: next, env: nextEnv });
        });
      }
      config = next;
      setEnv(nextEnv);
    },
    async terminate() {
      const thread = current;
      if (thread === undefined) return;
      await thread.worker.terminate();
      await thread.exited;
    },
  };
}
