import type { Brain } from "../brain/brain.js";
import type { Clock, IdGenerator } from "../clock/clock.js";
import type { Config } from "../config/config-schema.js";
import { type KeyMapping, resolveMapping } from "../config/message-fields.js";
import { envValueProblem } from "../config/preflight.js";
import { channelName } from "../config/validate-config.js";
import { type ConversationStore, type ConversationTurn, conversationKey } from "../conversation/conversation-store.js";
import { baseReplyHeaders, deliverReply } from "../delivery/deliver-reply.js";
import { redactUrl } from "../delivery/fetch-poster.js";
import type { Job, JobError, JobOutcome, PendingReply } from "../delivery/job.js";
import type { Poster } from "../delivery/poster.js";
import { createReplySigner, type ReplySigner } from "../delivery/reply-signer.js";
import { mayRetry, nextDelayMs, parseRetryAfterMs, type RetryPolicy } from "../delivery/retry-policy.js";
import { ChannelError, errorMessage, isChannelError } from "../errors/channel-error.js";
import type { Logger } from "../log/logger.js";
import type { InboundMessage, QueuedMessage } from "../message/inbound-message.js";
import { type BrainReply, renderReplyBody } from "../message/outbound-reply.js";
import type { SequenceCounter } from "../sequence/sequence-counter.js";

/** What the consumer is built from. */
export interface ConsumerDeps {
  readonly config: Config;
  readonly brains: ReadonlyMap<string, Brain>;
  readonly poster: Poster;
  readonly store: ConversationStore;
  readonly sequences: SequenceCounter;
  readonly clock: Clock;
  /** Uniform in [0, 1), for backoff jitter. */
  readonly random: () => number;
  readonly newId: IdGenerator;
  readonly logger: Logger;
  /** Reads `signing_secret_env` and `outbound_token_env` variables. */
  readonly env: (name: string) => string | undefined;
}

/** Called after each step of a job that a queue may want to persist. */
export type ProgressHook = (job: Job) => void | Promise<void>;

/** Takes accepted messages off a queue and answers them. */
export interface Consumer {
  /**
   * Runs a job as far as it goes: asks the brain unless the job already holds its replies,
   * then delivers the undelivered replies in order. Stops at the first failure and says
   * whether to retry (and after how long) or to dead-letter the job. Never rejects.
   */
  run(job: Job, onProgress?: ProgressHook): Promise<JobOutcome>;
}

interface ChannelRuntime {
  readonly brain: Brain;
  readonly keys: KeyMapping;
  readonly url: string;
  readonly timeoutMs: number;
  readonly policy: RetryPolicy;
  readonly headers: Readonly<Record<string, string>>;
  readonly signer: ReplySigner | undefined;
}

/**
 * Builds the consumer. Per-channel work (routing, headers, mapping, signing keys) is done once
 * here; a signing secret that is not `whsec_<base64>` rejects with a `config_invalid` error.
 */
export async function createConsumer(deps: ConsumerDeps): Promise<Consumer> {
  const { clock, logger, newId, poster, random, sequences, store } = deps;
  const channels = new Map<string, ChannelRuntime>();
  for (const channel of deps.config.channels) {
    const name = channelName(channel);
    const route = deps.config.routes.find((candidate) => candidate.channel === name);
    const brain = route === undefined ? undefined : deps.brains.get(route.brain);
    if (brain === undefined) throw new ChannelError("config_invalid", `channel "${name}" has no usable route`);
    const { webhook } = channel;
    const headers: Record<string, string> = { ...baseReplyHeaders() };
    if (webhook.outbound_token_env !== undefined) {
      headers.authorization = `Bearer ${requireHeaderSafeEnv(deps.env, webhook.outbound_token_env)}`;
    }
    const signer =
      webhook.signing_secret_env === undefined
        ? undefined
        : await createReplySigner(requireEnv(deps.env, webhook.signing_secret_env), webhook.signing_secret_env);
    channels.set(name, {
      brain,
      keys: resolveMapping(webhook.mapping),
      url: webhook.outbound_url,
      timeoutMs: webhook.delivery.timeout_ms,
      policy: {
        initialDelayMs: webhook.delivery.initial_delay_ms,
        maxDelayMs: webhook.delivery.max_delay_ms,
        maxAttempts: webhook.delivery.max_attempts,
        maxAgeMs: webhook.delivery.max_age_ms,
      },
      headers,
      signer,
    });
  }

  const produce = async (runtime: ChannelRuntime, queued: QueuedMessage): Promise<PendingReply[]> => {
    const { brain } = runtime;
    const key = conversationKey(queued.channel, queued.message.conversationId);
    const history = brain.historyLimit > 0 ? await store.history(key, brain.historyLimit) : [];
    let replies: readonly BrainReply[];
    try {
      replies = await brain.reply({ message: queued.message, history, messageId: queued.id, channel: queued.channel });
    } catch (error) {
      if (isChannelError(error)) throw error;
      throw new ChannelError("brain_failed", `brain "${brain.name}" failed: ${errorMessage(error)}`, {
        retryable: true,
        cause: error,
      });
    }
    // Sequence numbers are reserved before the turns are stored: if storing fails, the retry
    // asks the brain again and skips numbers, which is visible; the other order would store
    // the same turns twice, which is not.
    const first = replies.length === 0 ? 0 : await sequences.reserve(key, replies.length);
    const createdAt = clock.now();
    if (brain.historyLimit > 0) {
      const turns: ConversationTurn[] = [toTurn("user", queued.message, queued.receivedAt)];
      for (const reply of replies) turns.push(toTurn("assistant", reply, createdAt));
      await store.append(key, turns);
    }
    return replies.map((reply, index) => {
      const id = newId();
      const sequence = first + index;
      const body = renderReplyBody(
        reply,
        {
          id,
          inReplyTo: queued.id,
          conversationId: queued.message.conversationId,
          recipientId: queued.message.senderId,
          brain: brain.name,
          createdAt,
          sequence,
        },
        runtime.keys,
      );
      return { id, sequence, body };
    });
  };

  const deliver = async (runtime: ChannelRuntime, reply: PendingReply): Promise<void> => {
    const timestamp = Math.floor(clock.now() / 1000);
    const headers: Record<string, string> = {
      ...runtime.headers,
      "webhook-id": reply.id,
      "webhook-timestamp": String(timestamp),
    };
    if (runtime.signer !== undefined) {
      headers["webhook-signature"] = await runtime.signer.sign(reply.id, timestamp, reply.body);
    }
    await deliverReply(poster, { url: runtime.url, body: reply.body, headers, timeoutMs: runtime.timeoutMs });
  };

  const failure = (runtime: ChannelRuntime, job: Job, thrown: unknown, attemptAt: number): JobOutcome => {
    const error = isChannelError(thrown)
      ? thrown
      : new ChannelError("internal_error", errorMessage(thrown), { retryable: true, cause: thrown });
    const attempts = job.attempts + 1;
    const stepStartedAt = job.stepStartedAt ?? attemptAt;
    const now = clock.now();
    // Delivery errors carry the receiver's status, brain errors the model server's.
    const upstream = error.details.status ?? error.details.upstream_status;
    const status = typeof upstream === "number" ? upstream : undefined;
    const lastError: JobError = {
      code: error.code,
      message: error.message,
      retryable: error.retryable,
      ...(status === undefined ? {} : { status }),
    };
    const next: Job = { ...job, attempts, stepStartedAt, lastError };
    const retryAfter = error.details.retry_after;
    const retryAfterMs =
      typeof retryAfter === "string"
        ? parseRetryAfterMs(retryAfter, now)
        : typeof error.details.retry_after_ms === "number"
          ? error.details.retry_after_ms
          : undefined;
    const delayMs = nextDelayMs(attempts, runtime.policy, random, retryAfterMs);
    const fields = {
      channel: job.message.channel,
      message_id: job.message.id,
      conversation_id: job.message.message.conversationId,
      reply_id: job.replies?.[job.delivered]?.id,
      step: job.replies === undefined ? "brain" : "delivery",
      code: error.code,
      status,
      attempts,
      ...(job.replies === undefined ? {} : { url: redactUrl(runtime.url) }),
    };
    if (mayRetry(error, attempts, stepStartedAt, now + delayMs, runtime.policy)) {
      logger.warn(`attempt failed, retrying: ${error.message}`, { ...fields, retry_in_ms: delayMs });
      return { kind: "retry", job: next, delayMs };
    }
    if (status === 410 && job.replies !== undefined) {
      logger.error("outbound_url answered 410 Gone: the receiver says it no longer exists", fields);
    }
    return { kind: "dead", job: next, error: lastError };
  };

  const run = async (job: Job, onProgress?: ProgressHook): Promise<JobOutcome> => {
    const runtime = channels.get(job.message.channel);
    if (runtime === undefined) {
      const error: JobError = {
        code: "config_invalid",
        message: `no channel named "${job.message.channel}" is configured`,
        retryable: false,
      };
      return { kind: "dead", job: { ...job, lastError: error }, error };
    }
    let current = job;
    if (current.replies === undefined) {
      const attemptAt = clock.now();
      let replies: PendingReply[];
      try {
        replies = await produce(runtime, current.message);
      } catch (error) {
        return failure(runtime, current, error, attemptAt);
      }
      current = { message: current.message, replies, delivered: 0, attempts: 0 };
      if (replies.length > 0) {
        const saved = await save(onProgress, current);
        if (saved !== undefined) return failure(runtime, current, saved, attemptAt);
      }
    }
    const replies = current.replies ?? [];
    while (current.delivered < replies.length) {
      const reply = replies[current.delivered];
      if (reply === undefined) break;
      const attemptAt = clock.now();
      try {
        await deliver(runtime, reply);
      } catch (error) {
        return failure(runtime, current, error, attemptAt);
      }
      if (logger.enabled("debug")) {
        logger.debug("reply delivered", { message_id: current.message.id, reply_id: reply.id, body: reply.body });
      }
      current = { message: current.message, replies, delivered: current.delivered + 1, attempts: 0 };
      if (current.delivered < replies.length) {
        const saved = await save(onProgress, current);
        if (saved !== undefined) return failure(runtime, current, saved, attemptAt);
      }
    }
    return { kind: "done", job: current };
  };

  return { run };
}

/** Runs the progress hook; returns its failure, as a retryable error, instead of throwing. */
async function save(onProgress: ProgressHook | undefined, job: Job): Promise<ChannelError | undefined> {
  try {
    await onProgress?.(job);
    return undefined;
  } catch (error) {
    return new ChannelError("internal_error", `cannot save progress: ${errorMessage(error)}`, {
      retryable: true,
      cause: error,
    });
  }
}

function requireEnv(env: (name: string) => string | undefined, name: string): string {
  const value = env(name);
  if (value === undefined || value === "") {
    throw new ChannelError("config_invalid", `environment variable ${name} is not set`);
  }
  return value;
}

/**
 * requireEnv for a value sent as a header. Checked here, once: a value the HTTP client
 * refuses would fail every delivery, and undici leaves the pool's connection slot stuck.
 */
function requireHeaderSafeEnv(env: (name: string) => string | undefined, name: string): string {
  const value = requireEnv(env, name);
  const problem = envValueProblem(value);
  if (problem !== undefined) throw new ChannelError("config_invalid", `environment variable ${name} ${problem}`);
  return value;
}

function toTurn(role: ConversationTurn["role"], content: BrainReply | InboundMessage, at: number): ConversationTurn {
  const turn: { -readonly [K in keyof ConversationTurn]: ConversationTurn[K] } = { role, at };
  if (content.text !== undefined) turn.text = content.text;
  if (content.mediaUrl !== undefined) turn.mediaUrl = content.mediaUrl;
  if (content.mediaType !== undefined) turn.mediaType = content.mediaType;
  return turn;
}
