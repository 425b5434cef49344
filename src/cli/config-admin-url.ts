import { parseBind } from "../core/config/bind-address.js";
import type { Config } from "../core/config/config-schema.js";

/**
 * A base URL of the first channel's listener, where the admin API is served too, for the
 * `--url` commands the CLI suggests. A wildcard bind is reached on loopback; port 0 is known
 * only to the running service (its `listening` line).
 */
export function configAdminUrl(config: Config): string {
  const bind = parseBind(config.channels[0]?.webhook.bind ?? "");
  if (bind === undefined) return "http://<host>:<port>";
  const host = bind.host === "0.0.0.0" ? "127.0.0.1" : bind.host === "::" ? "::1" : bind.host;
  const port = bind.port === 0 ? "<port>" : String(bind.port);
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}
