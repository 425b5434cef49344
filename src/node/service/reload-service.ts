import { errorMessage } from "../../core/channel-error.js";
import type { Config } from "../../core/config/config-schema.js";
import { envReferences } from "../../core/config/preflight/preflight.js";
import { channelName } from "../../core/config/validate-config.js";
import type { Logger } from "../../core/log/logger.js";
import {
  createOperatorEventRoutes,
  type OperatorEventRoutes,
} from "../../core/operator-events/operator-event-routes.js";
import type { OperatorEventSender } from "../../core/operator-events/operator-event-sender.js";
import { readAdminSecret } from "../admin/admin-secret.js";
import { maxConnectionsOf, type PlannedListener } from "../listener/build-listeners.js";
import { channelSecrets } from "./channel-secrets.js";
import { compareConfigs } from "./config-changes.js";
import type { RunningConsumer } from "./start-consumer.js";

/** A reloaded configuration and its secrets, read and validated as a start reads them. */
export interface ReloadInputs {
  readonly config: Config;
  /** Inbound secret per channel name, none empty. */
  readonly secrets: ReadonlyMap<string, string>;
  /** Reads the variables that brains and delivery name (`*_env`); files already read. */
  readonly env: (name: string) => string | undefined;
}

/** What a reload did. */
export type ReloadResult =
  | {
      readonly ok: true;
      /** JSON paths of the keys that changed. */
      readonly changed: readonly string[];
      /** Names of the variables whose secret changed (never their values). */
      readonly secrets: readonly string[];
    }
  /** Keys that change only with a restart; nothing was applied. */
  | { readonly ok: false; readonly reason: "restart_needed"; readonly keys: readonly string[] }
  /** The new brains or routes could not be built, or the service is stopping; nothing was applied. */
  | { readonly ok: false; readonly reason: "unusable" | "shutting_down"; readonly message: string };

/** What a running service swaps at a reload; the fields change in place. */
export interface LiveSettings {
  config: Config;
  /** Each channel's inbound secrets (two while rotating), read by the inbound path on every request. */
  secrets: ReadonlyMap<string, readonly string[]>;
  /** The admin secret (`admin.token_env`), read by the admin routes on every request; undefined without `admin`. */
  adminSecret: string | undefined;
  /** The value of every variable the configuration names, to tell which secrets changed. */
  variables: ReadonlyMap<string, string | undefined>;
}

/** The running parts a reload reaches. */
export interface ReloadScope {
  readonly live: LiveSettings;
  readonly consumer: RunningConsumer;
  /** Takes the operator events' new routes. */
  readonly operatorEvents: Pick<OperatorEventSender, "use">;
  readonly listeners: readonly PlannedListener[];
  readonly logger: Logger;
  readonly isShuttingDown: () => boolean;
  /** Told once the new configuration is live: the receiver circuits decide under it at once. */
  readonly settingsChanged: () => void;
}

/** The value of every variable `config` names, as `env` resolves it. */
export function variablesOf(
  config: Config,
  env: (name: string) => string | undefined,
): Map<string, string | undefined> {
  return new Map(envReferences(config).map(({ variable }) => [variable, env(variable)]));
}

/**
 * Swaps a reloaded configuration into a running service, all or nothing, and logs the
 * verdict. Refused when a key that needs a restart changed (naming the keys) or when the new
 * brains and routes cannot be built; the service then carries on with what it had. Applied
 * in an order that cannot half-fail: everything that can fail first (reading the variables,
 * splitting the inbound secrets, checking the admin secret, the operator events' and the
 * consumer's new routes), then the swaps that cannot. No connection is closed and no accepted
 * message is touched: a job's next attempt reads the new routes.
 */
export async function applyReload(scope: ReloadScope, next: ReloadInputs): Promise<ReloadResult> {
  const { live, logger } = scope;
  const carryOn = "the service carries on with the configuration it had";
  if (scope.isShuttingDown()) {
    const message = "the service is shutting down";
    logger.warn(`reload refused: ${message}`);
    return { ok: false, reason: "shutting_down", message };
  }
  const changes = compareConfigs(live.config, next.config);
  if (changes.restart.length > 0) {
    logger.error(`reload refused: these keys change only with a restart; ${carryOn}`, { keys: changes.restart });
    return { ok: false, reason: "restart_needed", keys: changes.restart };
  }
  let variables: Map<string, string | undefined>;
  let secrets: Map<string, readonly string[]>;
  let adminSecret: string | undefined;
  let operatorRoutes: OperatorEventRoutes;
  try {
    variables = variablesOf(next.config, next.env);
    // The pool was opened with the URL of the start: a new one in its file takes a restart.
    const database = next.config.postgres_url_env;
    if (database !== undefined && live.variables.get(database) !== variables.get(database)) {
      const keys = [`postgres_url_env (the value of ${database})`];
      logger.error(`reload refused: these keys change only with a restart; ${carryOn}`, { keys });
      return { ok: false, reason: "restart_needed", keys };
    }
    secrets = channelSecrets(next.config, next.secrets);
    adminSecret = readAdminSecret(next.config, next.env, secrets);
    operatorRoutes = await createOperatorEventRoutes(next.config, next.env);
    await scope.consumer.reload(next.config, next.env);
  } catch (error) {
    const message = errorMessage(error);
    logger.error(`reload refused: ${message}; ${carryOn}`);
    return { ok: false, reason: "unusable", message };
  }
  const changed = changedSecrets(live, { secrets, adminSecret }, next.config, variables);
  live.config = next.config;
  live.secrets = secrets;
  live.adminSecret = adminSecret;
  live.variables = variables;
  scope.operatorEvents.use(operatorRoutes);
  scope.settingsChanged();
  for (const { channels, server } of scope.listeners) {
    const names = new Set(channels.map(channelName));
    server.maxConnections = maxConnectionsOf(next.config.channels.filter((channel) => names.has(channelName(channel))));
  }
  if (changes.live.length === 0 && changed.length === 0) logger.info("configuration reloaded: nothing changed");
  else logger.info("configuration reloaded", { changed: changes.live, secrets_changed: changed });
  return { ok: true, changed: changes.live, secrets: changed };
}

/** Names of the variables whose value differs, the inbound and admin secrets included; never the values. */
function changedSecrets(
  live: LiveSettings,
  next: Pick<LiveSettings, "secrets" | "adminSecret">,
  config: Config,
  variables: ReadonlyMap<string, string | undefined>,
): string[] {
  const { secrets } = next;
  const names = new Set<string>();
  for (const [name, value] of variables) {
    if (live.variables.has(name) && live.variables.get(name) !== value) names.add(name);
  }
  for (const channel of config.channels) {
    const name = channelName(channel);
    if (live.secrets.get(name)?.join(" ") !== secrets.get(name)?.join(" ")) names.add(channel.token_env);
  }
  // Also when admin.token_env names another variable holding another secret.
  if (config.admin !== undefined && live.adminSecret !== next.adminSecret) names.add(config.admin.token_env);
  return [...names].sort();
}
