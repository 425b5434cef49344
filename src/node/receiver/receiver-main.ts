#!/usr/bin/env node
// Entry of `npm run receiver`: prints every reply the service posts. With
// WEBHOOK_SIGNING_SECRET set (the same whsec_ value the service signs with), it verifies each
// reply's signature with the `standardwebhooks` package, an implementation that is not ours.
import { parseArgs } from "node:util";
import { startReceiver } from "./sample-receiver.js";

const { values } = parseArgs({
  options: { port: { type: "string", default: "8091" }, host: { type: "string", default: "127.0.0.1" } },
  strict: true,
});
const signingSecret = process.env.WEBHOOK_SIGNING_SECRET;
let verify: ((raw: string, headers: Record<string, string>) => boolean) | undefined;
if (signingSecret !== undefined && signingSecret !== "") {
  const { Webhook } = await import("standardwebhooks");
  const webhook = new Webhook(signingSecret);
  verify = (raw, headers) => {
    try {
      webhook.verify(raw, headers);
      return true;
    } catch {
      return false;
    }
  };
}
const receiver = await startReceiver({
  host: values.host,
  port: Number(values.port),
  onReply: (reply) => {
    const headers = Object.fromEntries(
      Object.entries(reply.headers).flatMap(([name, value]) => (typeof value === "string" ? [[name, value]] : [])),
    );
    const signature =
      verify === undefined ? "" : verify(reply.raw, headers) ? " (signature verified)" : " (SIGNATURE INVALID)";
    process.stdout.write(
      `receiver: reply ${headers["webhook-id"] ?? ""}${signature}\n${JSON.stringify(reply.body, null, 2)}\n`,
    );
  },
});
process.stdout.write(
  `receiver: listening on ${receiver.url} (any path), answering 200${verify === undefined ? "" : ", verifying signatures"}\n`,
);
const stop = (): void => {
  void receiver.close().then(() => process.exit(0));
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
