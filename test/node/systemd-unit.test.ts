// deploy/webhook-channel.service: the settings docs/deployment.md promises, a stop timeout above
// shutdown_timeout_ms, and `systemd-analyze verify` (Debian package systemd; npm test checks that it
// is installed, and npm run test:tools installs it). Also that
// docs/deployment.md shows every file of deploy/ as it is (`npm run test:proxies` runs the proxy
// configurations; this keeps the page that people copy from equal to what was run).
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { requireTool } from "../support/test-tools.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const unitText = readFileSync(join(root, "deploy/webhook-channel.service"), "utf8");
const schema = JSON.parse(readFileSync(join(root, "config.schema.json"), "utf8")) as {
  properties: Record<string, { default?: unknown }>;
};

/** Every `Key=value` line of the unit, in order (a key may repeat). */
const settings: [string, string][] = unitText
  .split("\n")
  .map((line) => line.trim())
  .filter((line) => line !== "" && !line.startsWith("#") && !line.startsWith("[") && line.includes("="))
  .map((line) => {
    const at = line.indexOf("=");
    return [line.slice(0, at), line.slice(at + 1)];
  });
const values = (key: string): string[] => settings.filter(([name]) => name === key).map(([, value]) => value);
const value = (key: string): string | undefined => values(key).at(-1);

/** The version of systemd-analyze; a missing one fails the file, naming its package. */
function systemdVersion(): number {
  const result = spawnSync(requireTool("systemd-analyze", "test"), ["--version"], { encoding: "utf8" });
  return Number(/^systemd (\d+)/.exec(result.stdout)?.[1] ?? 0);
}
const version = systemdVersion();

const temp = mkdtempSync(join(tmpdir(), "webhook-channel-unit-"));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/**
 * The unit as this machine can verify it: `verify` insists that the ExecStart binary exists, so
 * the copy runs this test's own node on this checkout's dist/node.js. Everything else is as shipped.
 */
function verifiableCopy(): string {
  const execStart = value("ExecStart") ?? "";
  expect(execStart.startsWith("/usr/bin/node /opt/webhook-channel/dist/node.js ")).toBe(true);
  const local = execStart
    .replace("/usr/bin/node", process.execPath)
    .replace("/opt/webhook-channel/dist/node.js", join(root, "dist/node.js"));
  const file = join(temp, "webhook-channel.service");
  writeFileSync(file, unitText.replace(`ExecStart=${execStart}`, `ExecStart=${local}`));
  return file;
}

describe("deploy/webhook-channel.service", () => {
  it("runs node dist/node.js itself with the configuration under /etc", () => {
    expect(value("ExecStart")).toBe(
      "/usr/bin/node /opt/webhook-channel/dist/node.js --config /etc/webhook-channel/config.json",
    );
    expect(value("WorkingDirectory")).toBe("/opt/webhook-channel");
    expect(value("EnvironmentFile")).toBe("/etc/webhook-channel/env");
  });

  it("has the usual hardening", () => {
    expect(value("DynamicUser")).toBe("yes");
    expect(value("StateDirectory")).toBe("webhook-channel");
    expect(value("ProtectSystem")).toBe("strict");
    expect(value("NoNewPrivileges")).toBe("yes");
    expect(value("ProtectHome")).toBe("yes");
    expect(value("PrivateTmp")).toBe("yes");
    expect(value("RestrictAddressFamilies")).toBe("AF_INET AF_INET6 AF_UNIX");
    expect(value("Restart")).toBe("on-failure");
    // V8 compiles to memory that is writable and executable.
    expect(values("MemoryDenyWriteExecute")).toEqual([]);
  });

  it("stops with SIGTERM and gives the drain more time than shutdown_timeout_ms", () => {
    expect(value("KillSignal")).toBe("SIGTERM");
    const shutdownMs = schema.properties.shutdown_timeout_ms?.default;
    expect(shutdownMs).toBe(30_000);
    const stopSeconds = Number(value("TimeoutStopSec"));
    expect(stopSeconds * 1000).toBeGreaterThan(Number(shutdownMs));
  });

  it("passes systemd-analyze verify without a warning", () => {
    const result = spawnSync("systemd-analyze", ["verify", verifiableCopy()], { encoding: "utf8" });
    expect(`${result.stdout}${result.stderr}`.trim()).toBe("");
    expect(result.status).toBe(0);
  });

  // `security --offline` came with systemd 250.
  it.skipIf(version < 250)("has a low exposure in systemd-analyze security (skipped: systemd older than 250)", () => {
    const output = execFileSync("systemd-analyze", ["security", "--offline=true", verifiableCopy()], {
      encoding: "utf8",
    });
    const level = /Overall exposure level for \S+: ([\d.]+)/.exec(output)?.[1];
    expect(level, output).toBeDefined();
    expect(Number(level)).toBeLessThanOrEqual(2);
  });
});

describe("docs/deployment.md", () => {
  const page = readFileSync(join(root, "docs/deployment.md"), "utf8");
  it.each([
    ["deploy/webhook-channel.service", "ini"],
    ["deploy/nginx.conf", "nginx"],
    ["deploy/Caddyfile", "caddy"],
    ["deploy/kubernetes.yaml", "yaml"],
    ["Containerfile", "dockerfile"],
    ["deploy/container/config.json", "json"],
  ])("shows %s verbatim", (file, language) => {
    const text = readFileSync(join(root, file), "utf8");
    expect(page, `copy ${file} into docs/deployment.md again`).toContain(`\`\`\`${language}\n${text}\`\`\`\n`);
  });
});
