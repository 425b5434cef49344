import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type ServiceHarness, startHarness } from "../support/node-service.js";
import { runCliCaptured } from "../support/run-cli-captured.js";
import { waitFor } from "../support/wait-for.js";

const ADMIN = "admin-secret-for-the-cli-0123";
let harness: ServiceHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function cli(args: string[], env: Record<string, string> = { WEBHOOK_ADMIN_SECRET: ADMIN }) {
  return runCliCaptured(args, env);
}

describe("dead-letters --url against a running service", () => {
  it("lists, shows, replays and deletes through the admin API", async () => {
    const accepting = { on: false };
    harness = await startHarness(
      { delivery: { max_attempts: 1 } },
      { status: () => (accepting.on ? 200 : 400) },
      { admin: { token_env: "ADMIN_SECRET" } },
      { ADMIN_SECRET: ADMIN },
    );
    const h = harness;
    const url = h.baseUrl;
    const ids: string[] = [];
    for (const text of ["first", "second"]) {
      const response = await h.post({ sender_id: "cli", conversation_id: `c-${text}`, text });
      ids.push(((await response.json()) as { message_id: string }).message_id);
    }
    const [first = "", second = ""] = ids;
    let listed = await cli(["dead-letters", "list", "--url", url, "--json"]);
    for (let tries = 0; tries < 200 && !listed.err.startsWith("2 "); tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      listed = await cli(["dead-letters", "list", "--url", url, "--json"]);
    }
    expect(listed.code).toBe(0);
    const page = JSON.parse(listed.out) as { items: { id: string }[]; next_cursor: null };
    expect(page.items.map((item) => item.id).sort()).toEqual([...ids].sort());
    expect(page.next_cursor).toBeNull();

    const table = await cli(["dead-letters", "list", "--url", url]);
    expect(table.out).toMatch(/^ID +CHANNEL/);
    expect(table.out).toContain(first);

    const shown = await cli(["dead-letters", "show", "--url", url, "--id", first, "--json"]);
    expect(JSON.parse(shown.out)).toMatchObject({ id: first, channel: "webhook", stage: "reply" });
    expect((await cli(["dead-letters", "show", "--url", url, "--id", "nope"])).code).toBe(1);

    accepting.on = true;
    const before = h.replies.length;
    const replayed = await cli(["dead-letters", "replay", "--url", url, "--id", first, "--json"]);
    expect(replayed).toMatchObject({ code: 0, out: '{"replayed":1}\n' });
    await waitFor(() => h.replies[before], 5_000, "the replayed reply");

    expect(await cli(["dead-letters", "delete", "--url", url, "--id", second])).toMatchObject({
      code: 0,
      out: `deleted ${second}\n`,
    });
    expect((await cli(["dead-letters", "delete", "--url", url, "--id", second])).code).toBe(1);
    expect(JSON.parse((await cli(["dead-letters", "list", "--url", url, "--json"])).out)).toEqual({
      items: [],
      next_cursor: null,
    });
  });

  it("needs the admin secret, and reports a refusal", async () => {
    harness = await startHarness({}, {}, { admin: { token_env: "ADMIN_SECRET" } }, { ADMIN_SECRET: ADMIN });
    const unset = await cli(["dead-letters", "list", "--url", harness.baseUrl], {});
    expect(unset).toMatchObject({ code: 1, err: expect.stringContaining("WEBHOOK_ADMIN_SECRET is not set") });
    const wrong = await cli(["dead-letters", "list", "--url", harness.baseUrl, "--admin-token-env", "OTHER"], {
      OTHER: "not-the-admin-secret",
    });
    expect(wrong).toMatchObject({ code: 1, err: expect.stringContaining("401") });
  });

  it("says why a service cannot be reached, and takes only an http(s) URL", async () => {
    // A port nothing listens on any more, as a stopped service's.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    const url = `http://127.0.0.1:${port}`;
    const refused = await cli(["dead-letters", "list", "--url", url], { WEBHOOK_ADMIN_SECRET: ADMIN });
    expect(refused).toMatchObject({
      code: 1,
      err: expect.stringContaining(`${url}: fetch failed: connect ECONNREFUSED`),
    });
    const notUrl = await cli(["dead-letters", "list", "--url", "notaurl"], { WEBHOOK_ADMIN_SECRET: ADMIN });
    expect(notUrl).toMatchObject({ code: 2, err: expect.stringContaining("--url must be the service's base URL") });
  });
});

describe("dead-letters --url never prints the URL's credentials or query", () => {
  it("refuses an admin secret a header cannot carry, naming the variable but never the value", async () => {
    // Fetch refuses such a header, quoting it (the secret) in its error.
    for (const secret of ["CLIADMIN\nCLIADMIN", "CLIADMIN\n"]) {
      const { code, err } = await runCliCaptured(["dead-letters", "list", "--url", "http://127.0.0.1:9/"], {
        WEBHOOK_ADMIN_SECRET: secret,
      });
      expect(code).toBe(1);
      expect(err).toContain("environment variable WEBHOOK_ADMIN_SECRET ");
      expect(err).not.toContain("CLIADMIN");
    }
  });

  it("keeps them out of a fetch's error that quotes the URL as it was fetched (its trailing slashes trimmed)", async () => {
    // Fetch refuses a URL with credentials and quotes it whole: the one fetched, not the one given.
    // A password, a token as the user name, either spelled without "//"; a short one spares the rest.
    for (const given of [
      "http://fuzz:CLIPASS@127.0.0.1:9///",
      "http://CLIPASS@127.0.0.1:9///",
      "http:a:CLIPASS@127.0.0.1:9/",
    ]) {
      const { code, err } = await runCliCaptured(["dead-letters", "list", "--url", given], {
        WEBHOOK_ADMIN_SECRET: ADMIN,
      });
      expect(code).toBe(1);
      expect(err).not.toContain("CLIPASS");
      expect(err).toContain("Request cannot be constructed from a URL that includes credentials");
    }
  });

  it("says why the service cannot be reached with the URL's scheme, host and path only", async () => {
    const { code, err } = await runCliCaptured(
      ["dead-letters", "list", "--url", "http://user:CLIPASS@127.0.0.1:9/?token=CLIQUERY"],
      { WEBHOOK_ADMIN_SECRET: ADMIN },
    );
    expect(code).toBe(1);
    expect(err).toContain("http://127.0.0.1:9/");
    expect(err).not.toMatch(/CLIPASS|CLIQUERY/);
    const usage = await runCliCaptured(["dead-letters", "list", "--url", "ftp://user:CLIPASS@host/"], {
      WEBHOOK_ADMIN_SECRET: ADMIN,
    });
    expect(usage.code).toBe(2);
    expect(usage.err).not.toContain("CLIPASS");
    expect(usage.err).toContain("'ftp://host/', not an http(s) URL");
    // Without "//" after the scheme, a parser reads "admin:" as one and the rest as a path: still
    // not shown, nor with slashes that end it.
    for (const given of [
      "admin:CLIPASS@127.0.0.1:8090",
      "u:CLIPASS@h?x",
      "127.0.0.1:8090/?token=CLIQUERY",
      "fuzz:CLIPASS@127.0.0.1:9///",
    ]) {
      const shown = await runCliCaptured(["dead-letters", "list", "--url", given], { WEBHOOK_ADMIN_SECRET: ADMIN });
      expect(shown.code).toBe(2);
      expect(shown.err).toContain("--url must be the service's base URL");
      expect(shown.err).not.toMatch(/CLIPASS|CLIQUERY/);
    }
  });
});
