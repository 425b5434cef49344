// The phases of `npm run bench` that run.mjs sequences: the inbound rounds, the stepped end-to-end
// runs, memory with a full buffer and the Worker end to end, with the run's log.
import { runBufferMemory } from "./buffer-memory.mjs";
import { bareContender, fastifyContender, fastifyInstalled, serviceContender } from "./contenders.mjs";
import { runEndToEnd } from "./end-to-end.mjs";
import { runInbound } from "./inbound.mjs";
import { startReceiver } from "./receiver-client.mjs";
import { startService } from "./service.mjs";
import { prepareWorkerdEndToEnd, runWorkerdEndToEnd } from "./workerd-end-to-end.mjs";

export const BUFFER_CAPACITY = 10_000;

export const log = (line) => process.stdout.write(`${line}\n`);
const startedAt = Date.now();
/** Whole seconds since the run started. */
export const elapsedSeconds = () => Math.round((Date.now() - startedAt) / 1000);
/** Seconds since the run started, for the log. */
export const since = () => `${elapsedSeconds()} s`;

/** Runs `body(receiver)` with a receiver child in `mode`, always stopping it. */
export async function withReceiver(mode, body) {
  const receiver = await startReceiver(mode);
  try {
    return await body(receiver);
  } finally {
    await receiver.stop();
  }
}

export async function inboundPhase(options, loader, secret, workerd) {
  log(`inbound: ${options.rounds} rounds, ${loader.description}, ${options.connections} connections (${since()})`);
  const withFastify = await fastifyInstalled();
  if (!withFastify) log("  Fastify row left out: the fastify devDependency is not installed");
  return withReceiver("never", (parked) => {
    const contenders = [bareContender(secret), serviceContender(secret, parked)];
    if (options.baseline !== null) contenders.push(baselineContender(secret, parked, options.baseline));
    if (options.sameTwice)
      contenders.push(bareContender(secret, { key: "bare-again", name: "bare node:http, second process" }));
    if (withFastify) contenders.push(fastifyContender(secret));
    if (workerd.contender !== undefined) contenders.push(workerd.contender(parked));
    const { rounds, slices, connections } = options;
    return runInbound({ contenders, loader, secret, log, rounds, slices, connections });
  });
}

/** The service of another build (`--baseline`), measured in the same rounds as this one. */
const baselineContender = (secret, parked, entry) =>
  serviceContender(secret, parked, { key: "service-baseline", name: "service, baseline build", entry });

/**
 * `entry` undefined: this build's dist/node.js; `setup` names the run in the log; `durable`
 * gives the service a fresh state_dir (see service.mjs), stepped through `options.durableRates`.
 */
export function endToEndPhase(
  options,
  secret,
  { deliveryThread = false, metrics = true, durable = false, entry, setup },
) {
  log(`end to end, ${setup}: ${options.stepSeconds} s per step (${since()})`);
  return withReceiver("answer", async (receiver) => {
    const service = await startService({
      secret,
      outboundUrl: receiver.url,
      deliveryThread,
      metrics,
      durable,
      entry,
    });
    try {
      return await runEndToEnd({
        url: service.url,
        pid: service.pid,
        secret,
        receiver,
        rates: durable ? options.durableRates : options.rates,
        seconds: options.stepSeconds,
        warmupSeconds: options.warmupSeconds,
        extraAfterFailure: options.extraAfterFailure,
        log,
      });
    } finally {
      await service.stop();
    }
  });
}

export function memoryPhase(options, secret, deliveryThread) {
  log(
    `memory${deliveryThread ? ", delivery_thread: true" : ", stock config"}: ${BUFFER_CAPACITY} messages buffered, receiver never answers (${since()})`,
  );
  return withReceiver("never", (never) =>
    runBufferMemory({
      secret,
      capacity: BUFFER_CAPACITY,
      rate: options.bufferRate,
      log,
      startService: async (capacity) => {
        const service = await startService({
          secret,
          outboundUrl: never.url,
          bufferCapacity: capacity,
          deliveryTimeoutMs: 600_000,
          deliveryThread,
        });
        return {
          ...service,
          async stop() {
            // Unpark first: the service's HTTP client waits for requests in flight on close.
            await never.setMode("answer");
            await service.stop();
          },
        };
      },
    }),
  );
}

/** The Worker end to end through workerd, this build and each `--worker-baseline`'s; null when skipped. */
export async function workerdEndToEndPhase(options, secret, workerd) {
  if (workerd.built === undefined) return null;
  const prepared = await prepareWorkerdEndToEnd({
    built: workerd.built,
    baselineCheckouts: options.workerBaselines,
    log,
  });
  try {
    log(
      `end to end through workerd: ${options.workerdMessages} messages over ${options.workerdConversations} conversations (${since()})`,
    );
    const result = await runWorkerdEndToEnd({
      builds: prepared.builds,
      secret,
      log,
      messages: options.workerdMessages,
      conversations: options.workerdConversations,
      rounds: options.workerdRounds,
    });
    return {
      ...result,
      baselineSkipped: prepared.baselineSkipped.length > 0 ? prepared.baselineSkipped.join("; ") : null,
    };
  } finally {
    await prepared.cleanup();
  }
}
