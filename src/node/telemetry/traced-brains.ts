import { AsyncLocalStorage } from "node:async_hooks";
import type { Brain, BrainCall } from "../../core/brain/brain.js";
import { isChannelError } from "../../core/channel-error.js";
import type { SpanFields, Telemetry, TelemetrySpan } from "./telemetry.js";
import { traceparentOf } from "./telemetry.js";

/** The span of the brain call in progress, for the HTTP request the brain makes within it. */
const brainCalls = new AsyncLocalStorage<TelemetrySpan>();

/**
 * The brains with a client span around each call, child of the message's trace: its channel,
 * message, conversation and brain, how many replies it gave or the error code it failed with.
 * A fallback chain is one span, with a child per brain of the chain it asked (timed by the
 * chain, so drawn after the call), naming the brain and its error.
 */
export function tracedBrains(brains: ReadonlyMap<string, Brain>, telemetry: Telemetry): ReadonlyMap<string, Brain> {
  return new Map([...brains].map(([name, brain]) => [name, tracedBrain(brain, telemetry)]));
}

function tracedBrain(brain: Brain, telemetry: Telemetry): Brain {
  return {
    ...brain,
    async reply(request) {
      const span = telemetry.start(`brain ${brain.name}`, "client", request.trace, {
        channel: request.channel,
        messageId: request.messageId,
        conversationId: request.message.conversationId,
        brain: brain.name,
      });
      const { onCall } = request;
      const traced = {
        ...request,
        onCall: (call: BrainCall) => {
          const endedAt = Date.now();
          const callSpan = telemetry.start(
            `brain call ${call.brain}`,
            "internal",
            span.context,
            { brain: call.brain, ...failureFields(call.error) },
            endedAt - call.seconds * 1000,
          );
          callSpan.end(call.error !== undefined, endedAt);
          onCall?.(call);
        },
      };
      try {
        const replies = await brainCalls.run(span, () => brain.reply(traced));
        span.set({ replies: replies.length });
        span.end();
        return replies;
      } catch (error) {
        span.set(failureFields(error));
        span.end(true);
        throw error;
      }
    },
  };
}

/**
 * The brains' HTTP client, with the `traceparent` of each request naming the brain call's span
 * (rather than a span id made up for the request and exported by no one), so that the brain
 * server's own spans hang under it; the span gets the answer's status.
 */
export function tracedFetch(fetch: typeof globalThis.fetch): typeof globalThis.fetch {
  return async (input, init) => {
    const span = brainCalls.getStore();
    const headers = init?.headers;
    if (span === undefined || init === undefined || !isPlainHeaders(headers) || headers.traceparent === undefined) {
      return fetch(input, init);
    }
    const response = await fetch(input, { ...init, headers: { ...headers, traceparent: traceparentOf(span.context) } });
    span.set({ httpStatus: response.status });
    return response;
  };
}

/** The error code and upstream status of a failure (`internal_error` for anything but a ChannelError); none for no failure. */
export function failureFields(error: unknown): SpanFields {
  if (!isChannelError(error)) return error === undefined ? {} : { errorCode: "internal_error" };
  return { errorCode: error.code, httpStatus: error.upstreamStatus };
}

/** Headers given as a plain record, as the brains give them (not a `Headers` object, nor pairs). */
function isPlainHeaders(headers: unknown): headers is Readonly<Record<string, string>> {
  return typeof headers === "object" && headers !== null && !Array.isArray(headers) && !(headers instanceof Headers);
}
