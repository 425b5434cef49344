import { AsyncLocalStorage } from "node:async_hooks";
import type { Consumer } from "../../core/consumer/create-consumer.js";
import type { Job } from "../../core/lifecycle/job.js";
import type { Answered } from "../../core/lifecycle/lane-store.js";
import { redactUrl } from "../../core/log/redact-url.js";
import type { Poster } from "../../core/outbound/poster.js";
import { type Telemetry, traceparentOf } from "./telemetry.js";
import { failureFields } from "./traced-brains.js";

/** The job a run is at: the one it started with, then each step it stored. */
interface RunScope {
  job: Job;
}

/** The run in progress, for the reply POSTs it makes: the poster is handed only a URL and headers. */
const runs = new AsyncLocalStorage<RunScope>();

/**
 * The consumer, telling the traced poster which job each POST belongs to: every run goes on
 * in a scope that holds its job, updated as the run stores each step (the step that made the
 * replies first), so that a POST finds its reply's sequence and the message's trace.
 */
export function tracedConsumer(consumer: Consumer): Consumer {
  return {
    ...consumer,
    run(job, hooks, admission) {
      const scope: RunScope = { job };
      const traced =
        hooks === undefined
          ? undefined
          : {
              ...hooks,
              save: (next: Job, answered?: Answered) => {
                scope.job = next;
                return hooks.save(next, answered);
              },
            };
      return runs.run(scope, () => consumer.run(job, traced, admission));
    },
  };
}

/**
 * The poster with a client span around each reply POST attempt, child of the message's trace:
 * its channel, message, conversation, reply id and sequence, attempt, redacted URL, and the
 * status or error code it ended with. The POST's `traceparent` names this span, so the
 * receiver's spans hang under it.
 */
export function tracedPoster(poster: Poster, telemetry: Telemetry): Poster {
  return {
    async post(url, body, headers, timeoutMs, tls) {
      const job = runs.getStore()?.job;
      const replyId = headers["webhook-id"];
      const span = telemetry.start("POST reply", "client", job?.message.trace, {
        channel: job?.message.channel,
        messageId: job?.message.id,
        conversationId: job?.message.message.conversationId,
        replyId,
        replySequence: job?.replies?.find((reply) => reply.id === replyId)?.sequence,
        attempt: job === undefined ? undefined : job.attempts + 1,
        httpMethod: "POST",
        url: redactUrl(url),
      });
      const sent =
        headers.traceparent === undefined ? headers : { ...headers, traceparent: traceparentOf(span.context) };
      try {
        const result = await poster.post(url, body, sent, timeoutMs, tls);
        const ok = result.status >= 200 && result.status < 300;
        // Anything but a 2xx is a `delivery_failed` (see `deliverReply`).
        span.set({ httpStatus: result.status, ...(ok ? {} : { errorCode: "delivery_failed" }) });
        span.end(!ok);
        return result;
      } catch (error) {
        span.set(failureFields(error));
        span.end(true);
        throw error;
      }
    },
  };
}
