import { Agent } from "undici";

/** Node's `fetch` for brain calls, with the connections it owns. */
export interface BrainFetch {
  readonly fetch: typeof globalThis.fetch;
  /**
   * Closes its connections, ending the calls in flight: by then the stop has waited
   * `shutdown_timeout_ms` for them, and what is left waits in the state (or is logged as lost).
   */
  close(): Promise<void>;
}

/**
 * Node's `fetch` on a dispatcher with no time limit of its own, so that a brain's `timeout_ms`
 * (which aborts the call, its answer's body included) is the only one. Node's default dispatcher
 * ends a call that waits five minutes for its answer's headers, or between two pieces of its body,
 * as a network failure: a slow model given a longer `timeout_ms` (a local one writing a long
 * answer before it sends anything) failed there, and was asked again to fail again.
 */
export function createBrainFetch(base: typeof globalThis.fetch = globalThis.fetch): BrainFetch {
  const dispatcher = new Agent({ headersTimeout: 0, bodyTimeout: 0 });
  let closed: Promise<void> | undefined;
  return {
    // The package's Agent and the one Node's types describe are the same interface, typed apart.
    fetch: (input, init) => base(input, Object.assign({}, init, { dispatcher })),
    // Once: a service's stop and its owner's close may both close it.
    close: () => {
      closed ??= dispatcher.destroy().then(() => undefined);
      return closed;
    },
  };
}
