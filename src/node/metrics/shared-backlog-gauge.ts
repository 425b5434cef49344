import { Gauge, type Registry } from "prom-client";

/**
 * `webhook_channel_shared_backlog{channel}`, with several replicas on Postgres: the accepted
 * messages not yet finished of all replicas together. One replica reports it (the live one
 * with the lowest id) and the others report 0, so that `sum()` and `max()` over the replicas
 * both give the backlog, and no dashboard counts it three times.
 */
export function registerSharedBacklog(
  registry: Registry,
  channels: readonly string[],
  read: () => ReadonlyMap<string, number> | undefined,
): void {
  new Gauge({
    name: "webhook_channel_shared_backlog",
    help: "Accepted messages not yet finished in Postgres, all replicas together; reported by one replica, 0 on the others.",
    labelNames: ["channel"],
    registers: [registry],
    collect() {
      const counts = read();
      for (const channel of channels) this.set({ channel }, counts?.get(channel) ?? 0);
    },
  });
}
