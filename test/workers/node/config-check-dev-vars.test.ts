import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runConfigCheck } from "../../../src/cli/config-check.js";
import { parseDevVars } from "../../../src/cli/read-dev-vars.js";
import { freePort } from "../../support/free-port.js";

const CONFIG = {
  channels: [
    {
      type: "webhook",
      token_env: "WEBHOOK_SECRET",
      webhook: { outbound_url: "http://127.0.0.1:8091/replies" },
    },
  ],
  routes: [{ channel: "webhook", brain: "echo" }],
};

let dir = "";
let configFile = "";

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "webhook-channel-dev-vars-"));
  configFile = join(dir, "config.json");
  await writeFile(configFile, JSON.stringify(CONFIG));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function check(env: Record<string, string> = {}): Promise<{ status: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const status = await runConfigCheck(configFile, true, {
    env,
    out: (text) => {
      out += text;
    },
    err: (text) => {
      err += text;
    },
  });
  return { status, out, err };
}

describe("config check --preflight with .dev.vars", () => {
  it("confirms a secret that only .dev.vars sets, says where it was found, and never prints it", async () => {
    await writeFile(join(dir, ".dev.vars"), "# local secrets\nWEBHOOK_SECRET=s3cr3t-value-0123456789abcdefghijkl\n");
    const { status, out, err } = await check();
    expect(status).toBe(0);
    expect(out).toContain("WEBHOOK_SECRET (channels[0].token_env) is set in .dev.vars (wrangler dev)");
    expect(out).toContain("OK (environment confirmed)");
    expect(out + err).not.toContain("s3cr3t-value");
  });

  it("names both places when a secret is set in neither", async () => {
    await writeFile(join(dir, ".dev.vars"), "OTHER=1\n");
    const { status, err } = await check();
    expect(status).toBe(1);
    expect(err).toContain("environment variable WEBHOOK_SECRET is not set, nor in");
    expect(err).toContain("add a line WEBHOOK_SECRET=<value> to");
  });

  it("counts an empty value in .dev.vars as missing", async () => {
    await writeFile(join(dir, ".dev.vars"), "WEBHOOK_SECRET=\n");
    expect((await check()).status).toBe(1);
  });

  it("behaves as before without a .dev.vars file", async () => {
    expect((await check({ WEBHOOK_SECRET: "x".repeat(32) })).out).toBe(`${configFile}: OK (environment confirmed)\n`);
    expect((await check()).status).toBe(1);
  });

  it("validates a CONFIG_JSON in .dev.vars, which replaces the file under wrangler dev", async () => {
    const bad = { ...CONFIG, channels: [{ ...CONFIG.channels[0], mode: "push" }] };
    await writeFile(join(dir, ".dev.vars"), `WEBHOOK_SECRET=${"x".repeat(32)}\nCONFIG_JSON='${JSON.stringify(bad)}'\n`);
    const failed = await check();
    expect(failed.status).toBe(1);
    expect(failed.err).toContain("CONFIG_JSON in");
    expect(failed.err).toContain("channels[0].mode");

    await writeFile(
      join(dir, ".dev.vars"),
      `WEBHOOK_SECRET=${"x".repeat(32)}\nCONFIG_JSON='${JSON.stringify(CONFIG)}'\n`,
    );
    const passed = await check();
    expect(passed.status).toBe(0);
    expect(passed.out).toContain("CONFIG_JSON in");
  });

  it("prints the warnings of a CONFIG_JSON in .dev.vars, but not a bind's, which a Worker has none of", async () => {
    const webhook = { ...CONFIG.channels[0]?.webhook, bind: "0.0.0.0:8090", delivery: { max_attempts: 4 } };
    const warned = { ...CONFIG, channels: [{ ...CONFIG.channels[0], webhook }] };
    await writeFile(
      join(dir, ".dev.vars"),
      `WEBHOOK_SECRET=${"x".repeat(32)}\nCONFIG_JSON='${JSON.stringify(warned)}'\n`,
    );
    const { status, err } = await check();
    expect(status).toBe(0);
    expect(err).toContain(
      `warning CONFIG_JSON in ${join(dir, ".dev.vars")}: channels[0].webhook.delivery.max_attempts: 4 is below circuit_failures (5)`,
    );
    expect(err).not.toContain("channels[0].webhook.bind");
  });
});

describe("config check --preflight of a CONFIG_JSON in .dev.vars", () => {
  const overriding = {
    ...CONFIG,
    channels: [{ ...CONFIG.channels[0], token_env: "OTHER_SECRET" }],
    admin: { token_env: "ADMIN_SECRET" },
  };

  it("confirms the variables it names in .dev.vars alone, as wrangler dev gives the Worker no other", async () => {
    await writeFile(
      join(dir, ".dev.vars"),
      `WEBHOOK_SECRET=${"x".repeat(32)}\nOTHER_SECRET=replace-me\nCONFIG_JSON='${JSON.stringify(overriding)}'\n`,
    );
    // Set in this shell, which the Worker under wrangler dev never sees.
    const { status, out, err } = await check({ ADMIN_SECRET: "a".repeat(32) });
    expect(status).toBe(1);
    expect(err).toMatch(/CONFIG_JSON in .*\.dev\.vars: admin\.token_env: ADMIN_SECRET is not set in .*\.dev\.vars/);
    expect(err).toContain("add a line ADMIN_SECRET=<value> to");
    expect(err).toMatch(/CONFIG_JSON in .*channels\[0\]\.token_env: .*\(read from .*\.dev\.vars\)/);
    expect(out).not.toContain("OK (environment confirmed)");
    expect(out).not.toContain("is valid; under wrangler dev");
  });

  it("does not ask for the webhook.tls PEM variables, which the Worker never reads (its mtls_binding stands for them)", async () => {
    const withTls = {
      ...CONFIG,
      channels: [
        {
          ...CONFIG.channels[0],
          webhook: {
            outbound_url: "https://receiver.example/replies",
            tls: { client_cert_env: "CLIENT_CERT", client_key_env: "CLIENT_KEY", mtls_binding: "RECEIVER_CERT" },
          },
        },
      ],
    };
    await writeFile(
      join(dir, ".dev.vars"),
      `WEBHOOK_SECRET=${"x".repeat(32)}\nCONFIG_JSON='${JSON.stringify(withTls)}'\n`,
    );
    const { status, err } = await check();
    expect(err).not.toContain("CLIENT_CERT");
    expect(status).toBe(0);
  });

  it("refuses webhook.tls without mtls_binding, as the Worker does", async () => {
    const unbound = {
      ...CONFIG,
      channels: [
        {
          ...CONFIG.channels[0],
          webhook: {
            outbound_url: "https://receiver.example/replies",
            tls: { client_cert_env: "CLIENT_CERT", client_key_env: "CLIENT_KEY" },
          },
        },
      ],
    };
    await writeFile(
      join(dir, ".dev.vars"),
      `WEBHOOK_SECRET=${"x".repeat(32)}\nCONFIG_JSON='${JSON.stringify(unbound)}'\n`,
    );
    const { status, err } = await check();
    expect(status).toBe(1);
    expect(err).toMatch(
      /CONFIG_JSON in .*channels\[0\]\.webhook\.tls: on Workers, fetch presents a client certificate only through/,
    );
  });

  it("passes once .dev.vars sets each of them", async () => {
    await writeFile(
      join(dir, ".dev.vars"),
      `WEBHOOK_SECRET=${"x".repeat(32)}\nOTHER_SECRET=${"o".repeat(32)}\nADMIN_SECRET=${"a".repeat(32)}\nCONFIG_JSON='${JSON.stringify(overriding)}'\n`,
    );
    const { status, out } = await check();
    expect(status).toBe(0);
    expect(out).toContain("is valid; under wrangler dev it replaces");
  });
});

describe("config check --preflight with CONFIG_JSON in .dev.vars", () => {
  it("tries the URLs the override names, which wrangler dev calls, not only the file's", async () => {
    const closed = await freePort();
    const override = {
      ...CONFIG,
      channels: [{ ...CONFIG.channels[0], webhook: { outbound_url: `http://127.0.0.1:${closed}/r` } }],
    };
    await writeFile(
      join(dir, ".dev.vars"),
      `WEBHOOK_SECRET=s3cr3t-value-0123456789abcdefghijkl\nCONFIG_JSON='${JSON.stringify(override)}'\n`,
    );
    const { status, err } = await check({ WEBHOOK_SECRET: "s3cr3t-value-0123456789abcdefghijkl" });
    expect(status).toBe(0);
    expect(err).toContain(
      `CONFIG_JSON in ${join(dir, ".dev.vars")}: channels[0].webhook.outbound_url: cannot connect to 127.0.0.1:${closed}`,
    );
  });
});

describe("parseDevVars", () => {
  it("reads dotenv syntax as wrangler does", () => {
    const vars = parseDevVars(
      [
        "# comment",
        "",
        "PLAIN=value  # trailing comment",
        "export EXPORTED=yes",
        "SINGLE='a # not a comment'",
        'DOUBLE="line1\\nline2"',
        'MULTI="first',
        'second"',
        "SPACED = padded ",
        "EMPTY=",
        "JSON='{\"a\":[1,2]}'",
        "not a variable",
      ].join("\n"),
    );
    expect(Object.fromEntries(vars)).toEqual({
      PLAIN: "value",
      EXPORTED: "yes",
      SINGLE: "a # not a comment",
      DOUBLE: "line1\nline2",
      MULTI: "first\nsecond",
      SPACED: "padded",
      EMPTY: "",
      JSON: '{"a":[1,2]}',
    });
  });
});
