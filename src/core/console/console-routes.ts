import type { Hono } from "hono";
import { CONSOLE_SCRIPT, CONSOLE_STYLES } from "./console-bundle.generated.js";
import { CONSOLE_HEADERS } from "./console-headers.js";
import { CONSOLE_ICON } from "./console-icon.js";
import { consolePage } from "./console-page.js";
import { CONSOLE_PATHS } from "./console-paths.js";

/**
 * Mounts the operator console: its page at `/admin/` and the page's script, style and icon,
 * each with {@link CONSOLE_HEADERS}. Mounted only with the admin API, whose middleware lets
 * exactly these GETs through without the secret (`isConsoleAsset`): they hold no data, and the
 * page asks for the secret before it reads any. The script and style sheet are text that
 * scripts/build-console.mjs makes from src/console/ (TypeScript with the DOM's types, and CSS),
 * so that every runtime serves the same files with nothing to read from disk.
 */
export function mountConsoleRoutes(app: Hono): void {
  app.get(CONSOLE_PATHS.page, (c) => c.html(consolePage(), 200, CONSOLE_HEADERS));
  app.get(CONSOLE_PATHS.script, (c) =>
    c.body(CONSOLE_SCRIPT, 200, { ...CONSOLE_HEADERS, "content-type": "text/javascript; charset=utf-8" }),
  );
  app.get(CONSOLE_PATHS.style, (c) =>
    c.body(CONSOLE_STYLES, 200, { ...CONSOLE_HEADERS, "content-type": "text/css; charset=utf-8" }),
  );
  app.get(CONSOLE_PATHS.icon, (c) =>
    c.body(CONSOLE_ICON, 200, { ...CONSOLE_HEADERS, "content-type": "image/svg+xml" }),
  );
  // The address without its slash, as an operator types it; the page's paths are absolute anyway.
  app.get("/admin", (c) => c.redirect(CONSOLE_PATHS.page, 308));
}
