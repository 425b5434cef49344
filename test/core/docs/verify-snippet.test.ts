/**
 * The receiver code docs/delivery.md shows for v1a runs as printed: taken from the page, it
 * accepts a reply the service signed and refuses it once the body or the key differs.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { createReplySigner } from "../../../src/core/outbound/reply-signer.js";
import { nodeKeyPair } from "../../support/ed25519-pair.js";

type VerifyReply = (headers: Record<string, string>, body: string) => boolean;

async function snippet(publicKey: string): Promise<VerifyReply> {
  const page = readFileSync(new URL("../../../docs/delivery.md", import.meta.url), "utf8");
  const section = page.split("\n### Verifying in a receiver\n")[1] ?? "";
  const code = /```js\n([\s\S]*?)```/.exec(section)?.[1];
  if (code === undefined) throw new Error("docs/delivery.md has no js block under 'Verifying in a receiver'");
  const file = join(await mkdtemp(join(tmpdir(), "webhook-channel-snippet-")), "verify.mjs");
  writeFileSync(file, code);
  process.env.WEBHOOK_SIGNING_PUBLIC_KEY = publicKey;
  try {
    const module = (await import(pathToFileURL(file).href)) as { verifyReply: VerifyReply };
    return module.verifyReply;
  } finally {
    delete process.env.WEBHOOK_SIGNING_PUBLIC_KEY;
  }
}

describe("docs/delivery.md: verifying v1a in a receiver", () => {
  it("accepts a reply the service signed, and refuses a changed body, an old timestamp or another key", async () => {
    const pair = nodeKeyPair();
    const verifyReply = await snippet(pair.publicKey);
    const signer = await createReplySigner({ keys: { value: pair.secretKey, variable: "K" } });
    const body = '{"text":"hello","sequence":1}';
    const now = Math.floor(Date.now() / 1000);
    const headers = (timestamp: number, signature: string) => ({
      "webhook-id": "msg_doc",
      "webhook-timestamp": String(timestamp),
      "webhook-signature": signature,
    });
    expect(verifyReply(headers(now, await signer.sign("msg_doc", now, body)), body)).toBe(true);
    expect(verifyReply(headers(now, await signer.sign("msg_doc", now, body)), body.replace("hello", "hullo"))).toBe(
      false,
    );
    const old = now - 600;
    expect(verifyReply(headers(old, await signer.sign("msg_doc", old, body)), body)).toBe(false);
    const other = await createReplySigner({ keys: { value: nodeKeyPair().secretKey, variable: "K" } });
    expect(verifyReply(headers(now, await other.sign("msg_doc", now, body)), body)).toBe(false);
  });
});
