import { Agent } from "undici";

/** Node's `fetch` for brain calls, with the connections it owns. */
export interface BrainFetch {
  readonly fetch: typeof globalThis.fetch;
  /**
   * Closes its connections once the calls in flight end, without waiting for them: by then the
   * stop has waited `shutdown_timeout_ms` for them, and what is left waits in the state (or is
   * logged as lost). A call is not ended here: cut short, it would count as the brain's failure.
   */
  close(): Promise<void>;
  /**
   * Ends every call in flight now, their connections closed (each fails as a network error);
   * later calls go through new connections. For calls that count against no share any more.
   */
  cutInFlight(): void;
}

/**
 * Node's `fetch` on a dispatcher with no time limit of its own, so that a brain's `timeout_ms`
 * (which aborts the call, its answer's body included) is the only one. Node's default dispatcher
 * ends a call that waits five minutes for its answer's headers, or between two pieces of its body,
 * as a network failure: a slow model given a longer `timeout_ms` (a local one writing a long
 * answer before it sends anything) failed there, and was asked again to fail again.
 */
export function createBrainFetch(base: typeof globalThis.fetch = globalThis.fetch): BrainFetch {
  const agent = () => new Agent({ headersTimeout: 0, bodyTimeout: 0 });
  let dispatcher = agent();
  let closed = false;
  return {
    // The package's Agent and the one Node's types describe are the same interface, typed apart.
    fetch: (input, init) => base(input, Object.assign({}, init, { dispatcher })),
    cutInFlight: () => {
      const cut = dispatcher;
      dispatcher = agent();
      void cut.destroy().catch(() => undefined);
    },
    // Once: a service's stop and its owner's close may both close it.
    close: () => {
      // Not awaited: the calls in flight end on their own time, or with the process.
      if (!closed) void dispatcher.close().catch(() => undefined);
      closed = true;
      return Promise.resolve();
    },
  };
}
