/** Why the service is or is not ready to accept messages: `ready` answers 200, the rest 503. */
export type ReadinessStatus = "ready" | "draining" | "full" | "unavailable";

/** The body of `GET /readyz`: its `status`, and whatever the runtime can tell cheaply. */
export type ReadinessReport = { readonly status: ReadinessStatus } & Readonly<Record<string, unknown>>;

/**
 * What `GET /readyz` reports. Each runtime implements it with what it knows cheaply: on Node
 * the job queues and the state store, on Workers the configuration. It is asked on every
 * probe, so it must not do more than a cheap read.
 */
export interface Readiness {
  report(): ReadinessReport | Promise<ReadinessReport>;
}

/** The readiness of a runtime that knows nothing more than whether it is stopping. */
export function shutdownReadiness(isShuttingDown: () => boolean): Readiness {
  return { report: () => ({ status: isShuttingDown() ? "draining" : "ready" }) };
}
