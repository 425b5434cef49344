import type { Metrics } from "./metrics.js";

const ignore = (): void => undefined;

/** Metrics that record nothing: the default wherever no implementation is injected. */
export const noopMetrics: Metrics = {
  request: ignore,
  accepted: ignore,
  delivered: ignore,
  retry: ignore,
  brainCall: ignore,
  deadLetter: ignore,
  endToEnd: ignore,
  receiverState: ignore,
  brainInFlight: ignore,
  brainPaused: ignore,
  brainTokens: ignore,
  operatorEvent: ignore,
};
