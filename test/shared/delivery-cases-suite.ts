/**
 * Every shared delivery case for one runtime, in one `describe`: the order and isolation cases
 * (delivery-cases-order.ts), the dead letters (delivery-cases-dead-letters.ts), then the
 * outages (delivery-cases-outages.ts), whose restart goes last. The harness each runner brings,
 * the configuration and the helpers are in delivery-cases.ts.
 */
import { describe } from "vitest";
import type { DeliveryHarness } from "./delivery-cases.js";
import { deadLetterCases } from "./delivery-cases-dead-letters.js";
import { orderCases } from "./delivery-cases-order.js";
import { outageCases } from "./delivery-cases-outages.js";

/**
 * Defines the cases for one runtime. `harness` is called when a case starts (runners build
 * it in `beforeAll`); `timeoutMs` bounds each wait and each case.
 */
export function deliveryCases(
  runtime: string,
  harness: () => DeliveryHarness,
  timeoutMs = 30_000,
  options: { readonly restarts: boolean } = { restarts: true },
): void {
  const context = { runtime, harness, timeoutMs, restarts: options.restarts };

  describe(`the shared delivery cases: ${runtime}`, () => {
    orderCases(context);
    deadLetterCases(context);
    outageCases(context);
  });
}
