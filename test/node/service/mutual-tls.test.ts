/**
 * Mutual TLS end to end on Node: `node dist/node.js` with `webhook.tls` read from `<NAME>_FILE`
 * variables delivers to a real HTTPS receiver that requires a client certificate from its CA;
 * a key that is not the certificate's stops the start, naming the variables only.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { runService } from "../../../src/node/run-service.js";
import { startService } from "../../../src/node/service/start-service.js";
import { configDocument } from "../../support/configs.js";
import { createLogSink } from "../../support/log-sink.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../../support/spawn-node.js";
import { CLIENT_CN, makeTestPki, type TestPki } from "../../support/test-pki.js";
import { startTlsReceiver, type TlsDelivery, type TlsReceiver } from "../../support/tls-receiver.js";
import { waitFor } from "../../support/wait-for.js";

const SECRET = "mutual-tls-secret-0123456789abcdef";
const TLS = { client_cert_env: "RECEIVER_CLIENT_CERT", client_key_env: "RECEIVER_CLIENT_KEY", ca_env: "RECEIVER_CA" };
let pki: TestPki;
let receiver: TlsReceiver;
let spawned: Spawned | undefined;

beforeAll(async () => {
  pki = makeTestPki();
  receiver = await startTlsReceiver(pki);
});

afterEach(() => {
  spawned?.child.kill("SIGKILL");
  spawned = undefined;
});

afterAll(async () => {
  await receiver?.close();
});

function send(url: string, text: string): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" },
    body: JSON.stringify({ sender_id: "alice", text }),
  });
}

/** The reply to the message whose text is `text`, once the TLS receiver has it. */
function deliveryOf(text: string): Promise<TlsDelivery> {
  return waitFor(() => receiver.deliveries.find((candidate) => candidate.body.includes(text)), 10_000, "the reply");
}

describe("webhook.tls on Node", () => {
  it.each([
    ["on the main thread", false],
    ["with delivery_thread", true],
  ])("presents the client certificate from its files and delivers (%s)", async (_, thread) => {
    const config = await writeTempConfig(
      configDocument({ bind: "127.0.0.1:0", outbound_url: receiver.url, tls: TLS }, { delivery_thread: thread }),
    );
    spawned = spawnNode("dist/node.js", ["--config", config], {
      WEBHOOK_SECRET: SECRET,
      RECEIVER_CLIENT_CERT_FILE: pki.files.clientCert,
      RECEIVER_CLIENT_KEY_FILE: pki.files.clientKey,
      RECEIVER_CA_FILE: pki.files.caCert,
    });
    const url = await listeningUrl(spawned);
    const text = `over mutual TLS ${thread ? "from the thread" : ""}`;
    expect((await send(url, text)).status).toBe(200);
    expect((await deliveryOf(text)).clientCn).toBe(CLIENT_CN);
  });

  it("is refused without the client certificate, and delivers the retry once a reload adds it", async () => {
    const document = (tls: Record<string, unknown>) => {
      const result = validateConfig(
        configDocument({
          bind: "127.0.0.1:0",
          outbound_url: receiver.url,
          tls,
          delivery: { initial_delay_ms: 50, max_delay_ms: 50 },
        }),
      );
      if (!result.ok) throw new Error(JSON.stringify(result.problems));
      return result.config;
    };
    const values: Record<string, string> = {
      RECEIVER_CLIENT_CERT: pki.clientCert,
      RECEIVER_CLIENT_KEY: pki.clientKey,
      RECEIVER_CA: pki.caCert,
    };
    const env = (name: string) => values[name];
    const { logger, lines } = createLogSink();
    const service = await startService({
      config: document({ ca_env: "RECEIVER_CA" }),
      secrets: new Map([["webhook", SECRET]]),
      logger,
      env,
    });
    try {
      const text = "refused, then delivered";
      expect((await send(`http://127.0.0.1:${service.listeners[0]?.port}/webhook`, text)).status).toBe(200);
      await waitFor(
        () => lines.find((line) => String(line.msg).startsWith("attempt failed, retrying")),
        5_000,
        "a refused attempt",
      );
      expect(receiver.deliveries.some((delivery) => delivery.body.includes(text))).toBe(false);
      expect(
        await service.reload({ config: document(TLS), secrets: new Map([["webhook", SECRET]]), env }),
      ).toMatchObject({
        ok: true,
        changed: ["channels[0].webhook.tls.client_cert_env", "channels[0].webhook.tls.client_key_env"],
      });
      expect((await deliveryOf(text)).clientCn).toBe(CLIENT_CN);
    } finally {
      await service.stop(1_000);
    }
  });

  it("refuses to start with a key that is not the certificate's, naming the variables and never the PEM", async () => {
    const config = await writeTempConfig(configDocument({ bind: "127.0.0.1:0", outbound_url: receiver.url, tls: TLS }));
    const lines: string[] = [];
    const code = await runService({
      configPath: config,
      env: {
        WEBHOOK_SECRET: SECRET,
        RECEIVER_CLIENT_CERT: pki.clientCert,
        RECEIVER_CLIENT_KEY: pki.strangerKey,
        RECEIVER_CA: pki.caCert,
      },
      write: (line) => lines.push(line),
    });
    expect(code).toBe(1);
    const log = lines.join("\n");
    expect(log).toContain(
      "channels[0].webhook.tls.client_key_env: RECEIVER_CLIENT_KEY is not the private key of the certificate in RECEIVER_CLIENT_CERT",
    );
    expect(log).not.toContain("PRIVATE KEY");
    expect(log).not.toContain(pki.clientCert.split("\n")[1]);
  });
});
