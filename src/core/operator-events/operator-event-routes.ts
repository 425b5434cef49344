import { fallbackChain } from "../brain/fallback-brain.js";
import { ChannelError } from "../channel-error.js";
import type { Config } from "../config/config-schema.js";
import type { OperatorEventsConfig } from "../config/operator-events-schema.js";
import type { EnvLookup } from "../config/preflight/preflight.js";
import { channelName } from "../config/validate-config.js";
import { createReplySigner, type ReplySigner, type SigningValue } from "../outbound/reply-signer.js";
import type { OperatorEventInput, OperatorEventType } from "./operator-event.js";

/** One operator URL, with what it is signed with and what it takes. */
export interface OperatorDestination {
  readonly url: string;
  readonly signer: ReplySigner;
  /** The event types it takes; undefined: all. */
  readonly events: ReadonlySet<OperatorEventType> | undefined;
  readonly timeoutMs: number;
}

/** Where each operator event goes, worked out from the configuration at start and at each reload. */
export interface OperatorEventRoutes {
  /** The destinations of `event` that take its type, each once. */
  destinationsOf(event: OperatorEventInput): readonly OperatorDestination[];
  /** True when no channel has a destination: events are not even built. */
  readonly empty: boolean;
}

/** Routes that send nothing. */
export const NO_OPERATOR_EVENT_ROUTES: OperatorEventRoutes = { destinationsOf: () => [], empty: true };

/**
 * The routes of `config`: a channel's events go to its own `operator_events`, else the top
 * level's; a brain's to the destination of each channel whose route asks it, directly or as a
 * fallback (so a team that watches its channel hears of the brains it depends on), each
 * destination once. Signing keys are read from `env` and imported here, once per destination.
 * Rejects with `config_invalid`, naming the variable and never a value, when one is unset or
 * unusable.
 */
export async function createOperatorEventRoutes(config: Config, env: EnvLookup): Promise<OperatorEventRoutes> {
  const built = new Map<string, OperatorDestination>();
  const destinationOf = async (settings: OperatorEventsConfig | undefined) => {
    if (settings === undefined) return undefined;
    const key = JSON.stringify([
      settings.url,
      settings.signing_secret_env,
      settings.signing_key_env,
      settings.events,
      settings.timeout_ms,
    ]);
    let destination = built.get(key);
    if (destination === undefined) {
      destination = {
        url: settings.url,
        signer: await createReplySigner({
          secrets: signingValue(env, settings.signing_secret_env),
          keys: signingValue(env, settings.signing_key_env),
        }),
        events: settings.events === undefined ? undefined : new Set(settings.events),
        timeoutMs: settings.timeout_ms,
      };
      built.set(key, destination);
    }
    return destination;
  };
  const byChannel = new Map<string, OperatorDestination>();
  for (const channel of config.channels) {
    const destination = await destinationOf(channel.operator_events ?? config.operator_events);
    if (destination !== undefined) byChannel.set(channelName(channel), destination);
  }
  if (byChannel.size === 0) return NO_OPERATOR_EVENT_ROUTES;
  const byBrain = new Map<string, Set<OperatorDestination>>();
  for (const route of config.routes) {
    const destination = byChannel.get(route.channel);
    if (destination === undefined) continue;
    for (const brain of fallbackChain(route.brain, config.brains ?? {})) {
      const destinations = byBrain.get(brain) ?? new Set();
      byBrain.set(brain, destinations.add(destination));
    }
  }
  const takes = (destination: OperatorDestination, type: OperatorEventType) =>
    destination.events === undefined || destination.events.has(type);
  return {
    empty: false,
    destinationsOf(event) {
      const candidates = "channel" in event ? [byChannel.get(event.channel)] : [...(byBrain.get(event.brain) ?? [])];
      return candidates.filter(
        (destination): destination is OperatorDestination =>
          destination !== undefined && takes(destination, event.type),
      );
    },
  };
}

function signingValue(env: EnvLookup, variable: string | undefined): SigningValue | undefined {
  if (variable === undefined) return undefined;
  const value = env(variable);
  if (value === undefined || value === "") {
    throw new ChannelError(
      "config_invalid",
      `environment variable ${variable} (operator_events) is ${value === undefined ? "not set" : "empty"}`,
      { variable },
    );
  }
  return { value, variable };
}
