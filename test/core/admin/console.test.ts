import { describe, expect, it } from "vitest";
import type { StatusReport } from "../../../src/core/admin/status-report.js";
import { CONSOLE_SCRIPT } from "../../../src/core/console/console-bundle.generated.js";
import { CONSOLE_HEADERS } from "../../../src/core/console/console-headers.js";
import { createAdminDeadLetters } from "../../../src/core/dead-letters/create-admin-dead-letters.js";
import { createMemoryDeadLetterStore } from "../../../src/core/dead-letters/memory-dead-letter-store.js";
import { createTestApp } from "../../support/test-app.js";

const ADMIN_SECRET = "console-admin-secret-0123456789";
const CONSOLE_FILES = ["/admin/", "/admin/console.js", "/admin/console.css", "/admin/console.svg"];

const REPORT: StatusReport = {
  runtime: "node",
  generated_at: "2026-11-25T10:00:00.000Z",
  counting_since: "2026-11-25T09:00:00.000Z",
  channels: [
    {
      channel: "webhook",
      counts: { accepted: 3, delivered: 2, retrying: 1, dead_lettered: 0 },
      queue: { depth: 1, capacity: 10, oldest_pending_at: "2026-11-25T09:59:58.000Z" },
      receiver: { up: true, since: null, waiting: 0, next_probe_at: null },
    },
  ],
  brains: [],
  dead_letters: 0,
  not_available: [],
};

function adminApp() {
  const store = createMemoryDeadLetterStore(() => true);
  return createTestApp({
    admin: {
      secret: () => ADMIN_SECRET,
      deadLetters: createAdminDeadLetters(store),
      status: { report: () => REPORT },
    },
  });
}

describe("the operator console", () => {
  it.each(CONSOLE_FILES)("serves %s without the admin secret, with the console's security headers", async (path) => {
    const response = await adminApp().request(path);
    expect(response.status).toBe(200);
    for (const [name, value] of Object.entries(CONSOLE_HEADERS)) expect(response.headers.get(name), name).toBe(value);
    expect(response.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect(response.headers.get("content-security-policy")).not.toContain("unsafe-inline");
    expect(response.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(response.headers.get("x-frame-options")).toBe("DENY");
    expect(response.headers.get("referrer-policy")).toBe("no-referrer");
    expect(response.headers.get("cache-control")).toBe("no-store");
  });

  it("serves each file with its media type", async () => {
    const app = adminApp();
    expect((await app.request("/admin/")).headers.get("content-type")).toMatch(/^text\/html/);
    expect((await app.request("/admin/console.js")).headers.get("content-type")).toMatch(/^text\/javascript/);
    expect((await app.request("/admin/console.css")).headers.get("content-type")).toMatch(/^text\/css/);
    expect((await app.request("/admin/console.svg")).headers.get("content-type")).toBe("image/svg+xml");
  });

  it("has a page with no inline script or style, loading only its own files", async () => {
    const page = await (await adminApp().request("/admin/")).text();
    expect(page).toContain('<script src="/admin/console.js" defer></script>');
    expect(page).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(page).not.toMatch(/\sstyle=|<style|\son[a-z]+=/i);
    expect(page).not.toMatch(/(?:src|href)="(?:https?:)?\/\//);
  });

  it("sends the bundled script: it parses, and keeps nothing in the page's globals", async () => {
    const served = await (await adminApp().request("/admin/console.js")).text();
    expect(served).toBe(CONSOLE_SCRIPT);
    expect(() => new Function(served)).not.toThrow();
    // esbuild's iife: one arrow function scope, run at once; no import or export is left.
    expect(served).toMatch(/^"use strict";\n\(\(\) => \{\n/);
    expect(served.trimEnd().endsWith("})();")).toBe(true);
    expect(served).not.toMatch(/^\s*(?:import|export)\s/m);
  });

  it("redirects /admin to the page", async () => {
    const response = await adminApp().request("/admin");
    expect(response.status).toBe(308);
    expect(response.headers.get("location")).toBe("/admin/");
  });

  it("keeps the secret on every other method of the console's paths", async () => {
    const response = await adminApp().request("/admin/", { method: "POST", body: "secret=guess" });
    expect(response.status).toBe(401);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
  });

  it("is a 404 like every /admin/ path when the admin API is off", async () => {
    const app = createTestApp();
    for (const path of [...CONSOLE_FILES, "/admin", "/admin/status"]) {
      const response = await app.request(path);
      expect(response.status, path).toBe(404);
      expect(response.headers.get("content-type"), path).toBe("application/problem+json");
      expect(response.headers.get("content-security-policy"), path).toBeNull();
    }
  });
});

describe("GET /admin/status", () => {
  it("answers 401 without the admin secret, with a wrong one and with a channel's, challenging for the admin realm", async () => {
    const app = adminApp();
    for (const authorization of [undefined, "Bearer wrong", "Bearer s"]) {
      const response = await app.request(
        "/admin/status",
        authorization === undefined ? {} : { headers: { authorization } },
      );
      expect(response.status).toBe(401);
      expect(response.headers.get("content-type")).toBe("application/problem+json");
      expect(response.headers.get("www-authenticate")).toBe('Bearer realm="admin"');
      const text = await response.text();
      expect(text).toContain('"code":"unauthorized"');
      expect(text).not.toContain(ADMIN_SECRET);
    }
  });

  it("answers the runtime's report with the admin secret, never cached", async () => {
    const response = await adminApp().request("/admin/status", {
      headers: { authorization: `Bearer ${ADMIN_SECRET}` },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(await response.json()).toEqual(REPORT);
  });

  it("answers 405 with Allow to another method", async () => {
    const response = await adminApp().request("/admin/status", {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_SECRET}` },
    });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET, HEAD");
  });
});
