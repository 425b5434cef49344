#!/usr/bin/env node
// Entry of `npm run receiver`: prints every reply the service posts. With
// WEBHOOK_SIGNING_SECRET set (the same whsec_ value the service signs with), it verifies each
// reply's v1 signature with the `standardwebhooks` package, an implementation that is not ours;
// with WEBHOOK_SIGNING_PUBLIC_KEY (the whpk_ of the service's whsk_ key), its v1a signature
// with node:crypto. Either verifies a reply.
import { parseArgs } from "node:util";
import { errorMessage } from "../../core/channel-error.js";
import { type Receiver, type ReceiverOptions, startReceiver } from "./sample-receiver.js";
import { createSignatureCheck, type SignatureCheck } from "./signature-check.js";

const HELP = `usage: npm run receiver -- [--port <port>] [--host <host>]
   or: node dist/receiver.js [--port <port>] [--host <host>]

A sample outbound receiver: prints every reply the service POSTs (any path) and answers 200.
With WEBHOOK_SIGNING_SECRET set to the service's whsec_ secret, it verifies v1 signatures;
with WEBHOOK_SIGNING_PUBLIC_KEY set to the whpk_ public key of its whsk_ key (npx webhook-channel
public-key prints it), v1a signatures. A reply passes with either.

options:
  --port <port>  port to listen on, 0 to 65535 (default 8091, what config.json's outbound_url uses)
  --host <host>  address to listen on (default 127.0.0.1)
  -h, --help     print this help
`;

/** A problem worth one line to the user, not a stack trace. */
class ReceiverExit extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

function readArgs(): { host: string; port: number } {
  let values: { port: string; host: string; help: boolean };
  try {
    ({ values } = parseArgs({
      options: {
        port: { type: "string", default: "8091" },
        host: { type: "string", default: "127.0.0.1" },
        help: { type: "boolean", short: "h", default: false },
      },
      strict: true,
    }));
  } catch (error) {
    throw new ReceiverExit(`${errorMessage(error)} (see --help)`, 2);
  }
  if (values.help) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  const port = Number(values.port);
  if (!/^\d{1,5}$/.test(values.port) || port > 65535) {
    throw new ReceiverExit(`--port must be a number from 0 to 65535, not "${values.port}"`, 2);
  }
  return { host: values.host, port };
}

async function listen(host: string, port: number, onReply: ReceiverOptions["onReply"]): Promise<Receiver> {
  try {
    return await startReceiver({ host, port, ...(onReply === undefined ? {} : { onReply }) });
  } catch (error) {
    const code = error instanceof Error && "code" in error ? error.code : undefined;
    const why =
      code === "EADDRINUSE"
        ? "the port is in use (is another receiver running?); stop it or pick another with --port <port> and change outbound_url to match"
        : errorMessage(error);
    throw new ReceiverExit(`cannot listen on ${host}:${port}: ${why}`, 1);
  }
}

async function main(): Promise<void> {
  const { host, port } = readArgs();
  let check: SignatureCheck | undefined;
  try {
    check = await createSignatureCheck(process.env.WEBHOOK_SIGNING_SECRET, process.env.WEBHOOK_SIGNING_PUBLIC_KEY);
  } catch (error) {
    throw new ReceiverExit(errorMessage(error), 1);
  }
  const receiver: Receiver = await listen(host, port, (reply) => {
    const headers = Object.fromEntries(
      Object.entries(reply.headers).flatMap(([name, value]) => (typeof value === "string" ? [[name, value]] : [])),
    );
    const verdict = check?.(reply.raw, headers);
    const signature =
      verdict === undefined ? "" : verdict.ok ? ` (signature verified: ${verdict.scheme})` : " (SIGNATURE INVALID)";
    process.stdout.write(
      `receiver: reply ${headers["webhook-id"] ?? ""}${signature}\n${JSON.stringify(reply.body, null, 2)}\n`,
    );
  });
  process.stdout.write(
    `receiver: listening on ${receiver.url} (any path), answering 200${check === undefined ? "" : ", verifying signatures"}\n`,
  );
  const stop = (): void => {
    void receiver.close().then(() => process.exit(0));
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

try {
  await main();
} catch (error) {
  // One line, no stack: what went wrong and what to do is all a user of a sample needs.
  process.stderr.write(`receiver: ${errorMessage(error)}\n`);
  process.exit(error instanceof ReceiverExit ? error.status : 1);
}
