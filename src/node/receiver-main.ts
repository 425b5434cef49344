#!/usr/bin/env node
// Entry of `npm run receiver`: prints every reply the service posts.
import { parseArgs } from "node:util";
import { startReceiver } from "./sample-receiver.js";

const { values } = parseArgs({
  options: { port: { type: "string", default: "8091" }, host: { type: "string", default: "127.0.0.1" } },
  strict: true,
});
const receiver = await startReceiver({
  host: values.host,
  port: Number(values.port),
  onReply: (reply) => {
    process.stdout.write(
      `receiver: reply ${String(reply.headers["webhook-id"] ?? "")}\n${JSON.stringify(reply.body, null, 2)}\n`,
    );
  },
});
process.stdout.write(`receiver: listening on ${receiver.url} (any path), answering 200\n`);
const stop = (): void => {
  void receiver.close().then(() => process.exit(0));
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
