import type { Clock } from "../../core/clock.js";
import type { ChannelConfig, Config } from "../../core/config/config-schema.js";
import { channelName } from "../../core/config/validate-config.js";
import type { Metrics } from "../../core/metrics/metrics.js";
import type { OperatorEvents } from "../../core/operator-events/operator-events.js";
import { circuitPolicyOf } from "../../core/receiver/receiver-circuit.js";
import type { TimelineRecorder } from "../../core/timeline/timeline-recorder.js";
import type { NodeAdmin } from "../admin/node-admin.js";
import type { Listener } from "../listener/serve-listeners.js";
import { createCommitLag } from "../queue/commit-lag.js";
import { createJobQueue, type JobQueue } from "../queue/job-queue.js";
import type { JobQueueEvent } from "../queue/job-queue-options.js";
import type { LaneOwnership } from "../queue/lane-ownership.js";
import { replayHintFor } from "../queue/replay-hint.js";
import type { StateBackend } from "../state/state-backend.js";
import type { ServiceOptions } from "./service-options.js";
import type { RunningConsumer } from "./start-consumer.js";

/** What the channels' queues are built from. */
export interface QueueInputs {
  readonly options: ServiceOptions;
  readonly clock: Clock;
  readonly state: StateBackend;
  readonly consumer: RunningConsumer;
  readonly admin: NodeAdmin;
  /** With replicas, which conversations this one runs. */
  readonly ownership: LaneOwnership | undefined;
  readonly metrics: Metrics;
  /** The progress log's count of each event. */
  readonly progress: (event: JobQueueEvent) => void;
  /** The configuration in force: a reload replaces it. */
  readonly liveConfig: () => Config;
  /** Where each listener listens, once it does. */
  readonly served: () => readonly Listener[];
  /** Where each run's calls, POSTs and settlement are recorded. */
  readonly timeline: TimelineRecorder;
  /** Where dead letters and receiver changes are raised as operator events. */
  readonly operatorEvents: OperatorEvents;
}

/**
 * Step 3 of a start: one bounded job queue per channel, by name, each running its lanes on the
 * state backend's lane store and the consumer, with the channel's receiver circuit over the
 * backend's circuit store, and one tracker of the backend's waiting commits for them all.
 */
export function buildQueues(inputs: QueueInputs): Map<string, JobQueue> {
  const { options, clock, state, consumer, admin } = inputs;
  const { config } = options;
  const queues = new Map<string, JobQueue>();
  // One database behind every channel: a commit that lags for one lags for all, so a quiet
  // channel's first messages during a freeze are refused at once too rather than each waiting.
  // On a monotonic clock: a step of the wall clock must not start or end a spell of refusals.
  // What the backend knows stops its writes refuses at once too, through a freeze of any length.
  const commitLag = createCommitLag(() => performance.now(), options.logger, undefined, state.knownWriteProblem);
  for (const channel of config.channels) {
    const name = channelName(channel);
    const replayHint = replayHintFor({
      configPath: options.configPath,
      durable: state.mode !== "memory",
      admin:
        config.admin === undefined
          ? undefined
          : {
              url: () => baseUrlOf(inputs.served(), name),
              // Read per line: a reload may name another variable.
              get tokenEnv() {
                return inputs.liveConfig().admin?.token_env ?? "";
              },
            },
    });
    const queue = createJobQueue({
      capacity: channel.webhook.buffer_capacity,
      run: (job, hooks, admission) => consumer.run(job, hooks, admission),
      receiver: {
        channel: name,
        // The live configuration's: a reload of webhook.delivery reaches the circuit at once.
        policy: () => circuitPolicyOf(liveChannel(inputs.liveConfig(), channel).webhook),
        outboundUrl: () => liveChannel(inputs.liveConfig(), channel).webhook.outbound_url,
        store: state.circuits,
        refreshMs: state.circuitRefreshMs,
      },
      store: state.lanes,
      commitLag,
      epoch: state.epoch,
      ownership: inputs.ownership,
      logger: options.logger,
      now: () => clock.now(),
      onEvent: (event) => {
        inputs.progress(event);
        admin.tally.record(name, event);
      },
      onDeadLetter: admin.onDeadLetter,
      replayHint,
      metrics: inputs.metrics,
      timeline: inputs.timeline,
      operatorEvents: inputs.operatorEvents,
    });
    queues.set(name, queue);
  }
  return queues;
}

/** A channel as the live configuration has it (a reload replaces it; channels never change in number or name). */
function liveChannel(config: Config, channel: ChannelConfig): ChannelConfig {
  const name = channelName(channel);
  return config.channels.find((candidate) => channelName(candidate) === name) ?? channel;
}

/** The base URL a channel is served on, its bind until it listens (an IPv6 host in brackets). */
function baseUrlOf(served: readonly Listener[], channel: string): string {
  const listener = served.find((candidate) => candidate.channels.includes(channel));
  if (listener === undefined) return "http://127.0.0.1:8090";
  const host = listener.host.includes(":") ? `[${listener.host}]` : listener.host;
  return `http://${host}:${listener.port}`;
}
