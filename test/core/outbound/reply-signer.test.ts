import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { createReplySigner } from "../../../src/core/outbound/reply-signer.js";

const secret = `whsec_${Buffer.from("k".repeat(24)).toString("base64")}`;

describe("createReplySigner", () => {
  it("produces a v1 signature that standardwebhooks accepts", async () => {
    const signer = await createReplySigner(secret, "SIGNING_SECRET");
    const timestamp = Math.floor(Date.now() / 1000);
    const body = '{"text":"hi"}';
    const signature = await signer.sign("msg_1", timestamp, body);
    expect(signature).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const headers = { "webhook-id": "msg_1", "webhook-timestamp": String(timestamp), "webhook-signature": signature };
    expect(new Webhook(secret).verify(body, headers)).toEqual({ text: "hi" });
  });

  it.each(["plain", "whsec_", "whsec_***", `${secret} nope`])("rejects the secret %j", async (value) => {
    await expect(createReplySigner(value, "SIGNING_SECRET")).rejects.toMatchObject({
      code: "config_invalid",
      message: expect.stringContaining("SIGNING_SECRET"),
    });
  });
});
