/**
 * Where the console and its files are served. They hold no data, so they are the only paths
 * under `/admin/` answered without the admin secret (`isConsoleAsset`).
 */
export const CONSOLE_PATHS = {
  page: "/admin/",
  script: "/admin/console.js",
  style: "/admin/console.css",
  icon: "/admin/console.svg",
} as const;

/** The console's files, and `/admin` itself, which only redirects to the page. */
const ASSETS: ReadonlySet<string> = new Set([...Object.values(CONSOLE_PATHS), "/admin"]);

/** Whether a request is for one of the console's files: a GET or HEAD of one of its paths. */
export function isConsoleAsset(method: string, path: string): boolean {
  return (method === "GET" || method === "HEAD") && ASSETS.has(path);
}
