/**
 * `npm run test:image`: the Containerfile, built and run for real with buildah, as CI runs it.
 * The base image it names is made from local parts under that name (local-base-image.ts): no
 * registry is reached. The built image is checked for what docs/deployment.md promises, then
 * started with chroot isolation (the host's network: the service binds a free loopback port),
 * its configuration, secret and state mounted as a user would; it answers a message with a
 * signed reply to a receiver on the host, reports healthy, and exits 0 on SIGTERM.
 */
import type { ChildProcess } from "node:child_process";
import {
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReceivedReply, type Receiver, startReceiver } from "../../src/node/receiver/sample-receiver.js";
import { nodeKeyPair, signedAttemptOf, verifiesV1a } from "../support/ed25519-pair.js";
import { freePort } from "../support/free-port.js";
import { requireTool } from "../support/test-tools.js";
import { waitFor } from "../support/wait-for.js";
import { type Buildah, createBuildah } from "./buildah.js";
import { buildLocalBaseImage } from "./local-base-image.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const IMAGE = "localhost/webhook-channel:test";
const SECRET = "image-test-secret-0123456789abcdefghij";
/** The image's volume for state_dir. */
const STATE = "/var/lib/webhook-channel";
/** The image's `node` user, which owns the state volume. */
const UID = 1000;

/** What `buildah inspect` says of an image's configuration (the Docker format keeps HEALTHCHECK). */
interface ImageConfig {
  readonly User: string;
  readonly Entrypoint: string[];
  readonly Cmd: string[];
  readonly WorkingDir: string;
  readonly Volumes: Record<string, unknown>;
  readonly StopSignal: string;
  readonly Healthcheck: { readonly Test: string[] };
  readonly Env: string[];
}

let dir: string;
let buildah: Buildah;
let config: ImageConfig;

/** The Containerfile's base image, or the same for this machine's Node major version. */
function baseImage(): { name: string; buildArgs: string[] } {
  const containerfile = readFileSync(join(root, "Containerfile"), "utf8");
  const named = /^ARG NODE_IMAGE=(\S+)$/m.exec(containerfile)?.[1];
  if (named === undefined) throw new Error("the Containerfile has no ARG NODE_IMAGE=<image> line");
  const major = process.versions.node.split(".")[0] ?? "";
  const name = named.replace(/:\d+-/, `:${major}-`);
  return { name, buildArgs: name === named ? [] : ["--build-arg", `NODE_IMAGE=${name}`] };
}

/** Every descendant of `pid`, from /proc (chroot isolation runs the container's processes on the host). */
function descendants(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parents.set(Number(entry), parent);
    } catch {
      // The process ended meanwhile.
    }
  }
  const found: number[] = [];
  const walk = (of: number): void => {
    for (const [child, parent] of parents) {
      if (parent === of) {
        found.push(child);
        walk(child);
      }
    }
  };
  walk(pid);
  return found;
}

/** The service's own process among the container's: what `docker stop` would signal as PID 1. */
function serviceProcess(container: ChildProcess, entrypoint: readonly string[]): number | undefined {
  if (container.pid === undefined) return undefined;
  return descendants(container.pid).find((pid) => {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      return argv[0]?.endsWith("/node") === true && argv[1] === entrypoint[1];
    } catch {
      return false;
    }
  });
}

beforeAll(async () => {
  requireTool("buildah", "image");
  requireTool("mmdebstrap", "image");
  if (process.getuid?.() !== 0) {
    throw new Error("npm run test:image builds and runs containers with buildah as root: run it as root (sudo)");
  }
  dir = mkdtempSync(join(tmpdir(), "webhook-channel-image-"));
  buildah = createBuildah(dir);
  const base = baseImage();
  const started = Date.now();
  await buildLocalBaseImage(buildah, base.name, dir);
  const based = Date.now();
  await buildah.exec(
    [
      "bud",
      "--isolation",
      "chroot",
      "--format",
      "docker",
      "--pull=never",
      ...base.buildArgs,
      "-f",
      "Containerfile",
      "-t",
      IMAGE,
      root,
    ],
    900_000,
  );
  process.stdout.write(
    `test:image: base image ${base.name} in ${Math.round((based - started) / 1000)} s, the Containerfile in ${Math.round((Date.now() - based) / 1000)} s\n`,
  );
  const inspected = JSON.parse(await buildah.exec(["inspect", "--type", "image", IMAGE])) as {
    Docker: { config: ImageConfig };
  };
  config = inspected.Docker.config;
}, 1_200_000);

afterAll(async () => {
  if (buildah !== undefined) await buildah.exec(["rm", "--all"]).catch(() => undefined);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe("the container image", () => {
  it("runs node dist/node.js as the non-root node user, with a health check on /readyz and a state volume", () => {
    expect(config.User).toBe(`${UID}:${UID}`);
    expect([...config.Entrypoint, ...config.Cmd]).toEqual([
      "node",
      "dist/node.js",
      "--config",
      "/etc/webhook-channel/config.json",
    ]);
    expect(config.WorkingDir).toBe("/app");
    expect(Object.keys(config.Volumes)).toEqual([STATE]);
    expect(config.StopSignal).toBe("SIGTERM");
    expect(config.Healthcheck.Test.join(" ")).toContain("/readyz");
    expect(config.Env).toContain("NODE_ENV=production");
  });

  it("has no compiler in its runtime stage, and its code cannot be changed by the service's user", async () => {
    const container = (await buildah.exec(["from", "--pull=never", IMAGE])).trim();
    const probe =
      "for tool in g++ make python3; do command -v $tool && exit 1; done; test -w /app/dist/node.js && exit 2; exit 0";
    await expect(buildah.exec(["run", "--isolation", "chroot", container, "--", "/bin/sh", "-c", probe])).resolves.toBe(
      "",
    );
    await buildah.exec(["rm", container]);
  });

  it("answers a message with a signed reply, reports healthy, keeps its state in the volume and exits 0 on SIGTERM", async () => {
    const pair = nodeKeyPair();
    const replies: ReceivedReply[] = [];
    const receiver: Receiver = await startReceiver({ port: 0, onReply: (reply) => replies.push(reply) });
    const port = await freePort();
    const mounts = join(dir, "mounts");
    const state = join(mounts, "state");
    mkdirSync(state, { recursive: true, mode: 0o700 });
    chownSync(state, UID, UID);
    writeFileSync(
      join(mounts, "config.json"),
      JSON.stringify({
        channels: [
          {
            type: "webhook",
            token_env: "WEBHOOK_SECRET",
            webhook: { bind: `127.0.0.1:${port}`, outbound_url: receiver.url, signing_key_env: "WEBHOOK_SIGNING_KEY" },
          },
        ],
        routes: [{ channel: "webhook", brain: "echo" }],
        state_dir: STATE,
      }),
    );
    writeFileSync(join(mounts, "webhook-secret"), `${SECRET}\n`, { mode: 0o644 });
    const container = (await buildah.exec(["from", "--pull=never", IMAGE])).trim();
    // buildah 1.28's run mounts an anonymous volume for the image's VOLUME and the test's own mount
    // at the same path in no fixed order (docker and podman let the user's mount win): the working
    // container forgets the VOLUME (the first test checked that the image has it), so the
    // directory mounted here is the one the service writes to. Bind mounts are read-only unless
    // they say rw.
    await buildah.exec(["config", "--volume", `${STATE}-`, container]);
    const bind = (source: string, target: string, readOnly: boolean) => [
      "--mount",
      `type=bind,src=${source},dst=${target},${readOnly ? "ro" : "rw"}=true`,
    ];
    const service = buildah.spawn([
      "run",
      "--isolation",
      "chroot",
      ...bind(state, STATE, false),
      ...bind(join(mounts, "config.json"), "/etc/webhook-channel/config.json", true),
      ...bind(join(mounts, "webhook-secret"), "/run/secrets/webhook-secret", true),
      "-e",
      "WEBHOOK_SECRET_FILE=/run/secrets/webhook-secret",
      "-e",
      `WEBHOOK_SIGNING_KEY=${pair.secretKey}`,
      container,
      "--",
      ...config.Entrypoint,
      ...config.Cmd,
    ]);
    let output = "";
    service.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    service.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => service.on("exit", (code) => resolve(code)));
    try {
      await waitFor(
        () => (output.includes('"msg":"listening"') || service.exitCode !== null ? true : undefined),
        60_000,
        "the service to listen",
      ).catch((error: unknown) => {
        throw new Error(`${String(error)}; its output:\n${output}`);
      });
      expect(output, "the service's output").toContain('"msg":"listening"');
      const response = await fetch(`http://127.0.0.1:${port}/webhook`, {
        method: "POST",
        headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" },
        body: JSON.stringify({ sender_id: "alice", text: "from the container" }),
      });
      expect(response.status).toBe(200);
      const reply = await waitFor(() => replies[0], 10_000, "the reply");
      expect(reply.body).toMatchObject({ text: "from the container", recipient_id: "alice" });
      expect(verifiesV1a(signedAttemptOf(reply), pair.publicKey)).toBe(true);

      const health = config.Healthcheck.Test;
      expect(health[0]).toBe("CMD-SHELL");
      const check = await buildah.exec([
        "run",
        "--isolation",
        "chroot",
        "-e",
        `HEALTHCHECK_URL=http://127.0.0.1:${port}/readyz`,
        container,
        "--",
        "/bin/sh",
        "-c",
        health[1] ?? "exit 3",
      ]);
      expect(check).toBe("");

      const database = join(state, "webhook-channel.sqlite");
      expect(existsSync(database)).toBe(true);
      expect(statSync(database).uid).toBe(UID);

      const pid = await waitFor(() => serviceProcess(service, config.Entrypoint), 5_000, "the service's process");
      process.kill(pid, "SIGTERM");
      expect(await exited).toBe(0);
      expect(output).toContain("shutdown complete: every accepted message was finished");
      expect(output).not.toContain(SECRET);
    } finally {
      // Only when the test failed before its SIGTERM: the container's processes, then buildah's.
      if (service.exitCode === null && service.pid !== undefined) {
        for (const pid of descendants(service.pid).reverse()) process.kill(pid, "SIGKILL");
        service.kill("SIGKILL");
      }
      await receiver.close();
    }
  });
});
