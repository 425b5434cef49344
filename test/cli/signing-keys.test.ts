import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { configDocument } from "../support/configs.js";
import { nodeKeyPair, publicKeyOfSecret } from "../support/ed25519-pair.js";
import { runCliCaptured } from "../support/run-cli-captured.js";
import { writeTempConfig } from "../support/spawn-node.js";

const SECRET = "cli-signing-secret-0123456789abcdefghij";

describe("webhook-channel keypair and public-key", () => {
  it("keypair prints the whsk_ key alone on stdout and its whpk_ public key on stderr", async () => {
    const { code, out, err } = await runCliCaptured(["keypair"]);
    expect(code).toBe(0);
    expect(out).toMatch(/^whsk_[A-Za-z0-9+/]{86}==\n$/);
    const publicKey = /whpk_[A-Za-z0-9+/]{43}=/.exec(err)?.[0];
    expect(publicKey).toBe(publicKeyOfSecret(out.trim()));
  });

  it("public-key prints the whpk_ of each key in the variable, its _FILE too, in order", async () => {
    const [next, previous] = [nodeKeyPair(), nodeKeyPair()];
    expect(await runCliCaptured(["public-key"], { WEBHOOK_SIGNING_KEY: next.secretKey })).toEqual({
      code: 0,
      out: `${next.publicKey}\n`,
      err: "",
    });
    const folder = await mkdtemp(join(tmpdir(), "webhook-channel-key-"));
    await writeFile(join(folder, "key"), `${next.seedOnly} ${previous.secretKey}\n`);
    const fromFile = await runCliCaptured(["public-key", "--env", "OTHER_KEY"], {
      OTHER_KEY_FILE: join(folder, "key"),
    });
    expect(fromFile).toMatchObject({ code: 0, out: `${next.publicKey}\n${previous.publicKey}\n` });
  });

  it("public-key exits 1 with the fix when the variable is unset or holds no whsk_ key, never printing it", async () => {
    const unset = await runCliCaptured(["public-key"]);
    expect(unset).toMatchObject({ code: 1, err: expect.stringContaining("npx webhook-channel keypair") });
    const pair = nodeKeyPair();
    const wrong = await runCliCaptured(["public-key"], { WEBHOOK_SIGNING_KEY: pair.publicKey });
    expect(wrong).toMatchObject({ code: 1, err: expect.stringContaining("WEBHOOK_SIGNING_KEY is a whpk_ public key") });
    expect(wrong.err).not.toContain(pair.publicKey.slice(5));
  });

  it("public-key refuses an --env that is not a variable's name as a usage error (exit 2)", async () => {
    const shown = await runCliCaptured(["public-key", "--env", "bad name"]);
    expect(shown).toEqual({
      code: 2,
      out: "",
      err: 'webhook-channel: --env "bad name" is not a variable\'s name: letters, digits and "_", not starting with a digit\n',
    });
  });

  it("public-key and config check --preflight refuse three keys in one variable, naming it, never a key", async () => {
    const keys = [nodeKeyPair(), nodeKeyPair(), nodeKeyPair()].map((pair) => pair.secretKey).join(" ");
    const shown = await runCliCaptured(["public-key"], { WEBHOOK_SIGNING_KEY: keys });
    expect(shown).toMatchObject({ code: 1, out: "" });
    expect(shown.err).toContain("WEBHOOK_SIGNING_KEY holds 3 values: it must hold one, or two");
    const file = await writeTempConfig(configDocument({ signing_key_env: "SIGNING_KEY" }));
    const checked = await runCliCaptured(["config", "check", "--preflight", file], {
      WEBHOOK_SECRET: SECRET,
      SIGNING_KEY: keys,
    });
    expect(checked.code).toBe(1);
    expect(checked.err).toContain("channels[0].webhook.signing_key_env: SIGNING_KEY holds 3 values");
    for (const key of keys.split(" ")) expect(shown.err + checked.err).not.toContain(key.slice(5, 30));
  });

  it("config check --preflight refuses an unusable signing key with the command that makes one", async () => {
    const file = await writeTempConfig(configDocument({ signing_key_env: "SIGNING_KEY" }));
    const bad = await runCliCaptured(["config", "check", "--preflight", file], {
      WEBHOOK_SECRET: SECRET,
      SIGNING_KEY: `whsk_${Buffer.alloc(40).toString("base64")}`,
    });
    expect(bad.code).toBe(1);
    expect(bad.err).toContain("channels[0].webhook.signing_key_env: SIGNING_KEY holds 40 bytes after whsk_");
    expect(bad.err).toContain('export SIGNING_KEY="$(npx webhook-channel keypair)"');
    const unset = await runCliCaptured(["config", "check", "--preflight", file], { WEBHOOK_SECRET: SECRET });
    expect(unset).toMatchObject({ code: 1, err: expect.stringContaining("whpk_ public key it prints") });
    const good = await runCliCaptured(["config", "check", "--preflight", file], {
      WEBHOOK_SECRET: SECRET,
      SIGNING_KEY: nodeKeyPair().secretKey,
    });
    expect(good).toMatchObject({ code: 0 });
  });

  it("config check --preflight refuses a whsec_ secret that is not base64", async () => {
    const file = await writeTempConfig(configDocument({ signing_secret_env: "SIGNING_SECRET" }));
    const bad = await runCliCaptured(["config", "check", "--preflight", file], {
      WEBHOOK_SECRET: SECRET,
      SIGNING_SECRET: "whsec_***",
    });
    expect(bad).toMatchObject({ code: 1, err: expect.stringContaining("channels[0].webhook.signing_secret_env") });
  });
});
