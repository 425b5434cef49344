/**
 * The Node base image the Containerfile names (`node:<major>-bookworm-slim`), made here from local
 * parts under that same name, for machines that reach no image registry (CI's): a minimal Debian
 * root filesystem from this machine's Debian mirror (mmdebstrap), with this machine's Node binary,
 * its headers and npm where the official image keeps them (/usr/local), and its `node` user (uid
 * 1000). Users build the same Containerfile on the official image with docker or podman.
 */

import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import type { Buildah } from "./buildah.js";

const run = promisify(execFile);

/** The Debian mirror this machine's apt uses for `suite`, from its sources; deb.debian.org otherwise. */
export function debianMirror(suite: string): string {
  const texts: string[] = [];
  const folder = "/etc/apt/sources.list.d";
  if (existsSync("/etc/apt/sources.list")) texts.push(readFileSync("/etc/apt/sources.list", "utf8"));
  if (existsSync(folder)) {
    for (const name of readdirSync(folder))
      if (/\.(list|sources)$/.test(name)) texts.push(readFileSync(join(folder, name), "utf8"));
  }
  for (const text of texts) {
    // deb822 (.sources): a stanza with URIs and Suites; one-line format: deb <uri> <suite> <components>.
    for (const stanza of text.split(/\n\s*\n/)) {
      const uri = /^URIs:\s*(\S+)/m.exec(stanza)?.[1];
      const suites = /^Suites:\s*(.+)$/m.exec(stanza)?.[1]?.split(/\s+/) ?? [];
      if (uri !== undefined && suites.includes(suite) && /\/debian\/?$/.test(uri)) return uri;
    }
    const line = new RegExp(`^deb\\s+(?:\\[[^\\]]*\\]\\s+)?(\\S+/debian/?)\\s+${suite}\\s`, "m").exec(text)?.[1];
    if (line !== undefined) return line;
  }
  return "http://deb.debian.org/debian";
}

/** Where this machine's Node keeps its binary, headers and npm (a Debian or nodesource layout, or a tarball's). */
function nodeParts(): { binary: string; include: string; npm: string } {
  const binary = realpathSync(process.execPath);
  const prefix = dirname(dirname(binary));
  const include = join(prefix, "include", "node");
  const npm = join(prefix, "lib", "node_modules", "npm");
  for (const [what, path] of [
    ["headers", include],
    ["npm", npm],
  ] as const) {
    if (!existsSync(path)) throw new Error(`this machine's Node has no ${what} at ${path}: the base image needs them`);
  }
  return { binary, include, npm };
}

/**
 * Builds `name` (e.g. `docker.io/library/node:20-bookworm-slim`) into `buildah`'s storage from the
 * Debian release its tag names. When this machine's Node trusts extra CAs (NODE_EXTRA_CA_CERTS,
 * as behind a TLS-inspecting proxy), the image gets that bundle too, so that npm in the build
 * reaches the registry as npm here does.
 */
export async function buildLocalBaseImage(buildah: Buildah, name: string, dir: string): Promise<void> {
  const suite = /-(\w+)-slim$/.exec(name)?.[1];
  if (suite === undefined) throw new Error(`${name} is not a node:<major>-<debian release>-slim image`);
  const { binary, include, npm } = nodeParts();
  const extraCa = process.env.NODE_EXTRA_CA_CERTS;
  const caHooks =
    extraCa !== undefined && existsSync(extraCa)
      ? [`mkdir -p "$1${dirname(extraCa)}" && cp "${extraCa}" "$1${extraCa}"`]
      : [];
  const hooks = [
    'mkdir -p "$1/usr/local/bin" "$1/usr/local/include" "$1/usr/local/lib/node_modules"',
    `cp "${binary}" "$1/usr/local/bin/node"`,
    `cp -a "${include}" "$1/usr/local/include/node"`,
    `cp -a "${npm}" "$1/usr/local/lib/node_modules/npm"`,
    'ln -s ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/local/bin/npm"',
    'ln -s ../lib/node_modules/npm/bin/npx-cli.js "$1/usr/local/bin/npx"',
    'chroot "$1" groupadd --gid 1000 node',
    'chroot "$1" useradd --uid 1000 --gid node --shell /bin/bash --create-home node',
    ...caHooks,
  ];
  const rootfs = join(dir, "base-rootfs.tar");
  await run(
    "mmdebstrap",
    [
      "--variant=minbase",
      "--mode=root",
      "--quiet",
      // What Debian's slim images leave out.
      "--dpkgopt=path-exclude=/usr/share/doc/*",
      "--dpkgopt=path-include=/usr/share/doc/*/copyright",
      "--dpkgopt=path-exclude=/usr/share/man/*",
      "--dpkgopt=path-exclude=/usr/share/locale/*",
      ...hooks.map((hook) => `--customize-hook=${hook}`),
      suite,
      rootfs,
      debianMirror(suite),
    ],
    { timeout: 600_000, maxBuffer: 16 * 1024 * 1024 },
  );
  const container = (await buildah.exec(["from", "scratch"])).trim();
  await buildah.exec(["add", container, rootfs, "/"], 300_000);
  const env = [
    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    `NODE_VERSION=${process.versions.node}`,
    ...(caHooks.length > 0 && extraCa !== undefined ? [`NODE_EXTRA_CA_CERTS=${extraCa}`] : []),
  ];
  await buildah.exec(["config", ...env.flatMap((entry) => ["--env", entry]), "--cmd", "node", container]);
  await buildah.exec(["commit", "--quiet", "--format", "docker", "--rm", container, name], 300_000);
}
