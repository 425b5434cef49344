import { z } from "zod";

/** The reserved health path; no channel may use it. */
export const HEALTH_PATH = "/healthz";
/** The reserved readiness path; no channel may use it. */
export const READY_PATH = "/readyz";
/** The reserved metrics path (Node's Prometheus exposition); no channel may use it. */
export const METRICS_PATH = "/metrics";
/**
 * Where the admin API lives: `/admin` and every path under it are reserved, whether or not
 * `admin` is on, so that turning the API on never takes a channel's path (nor a channel one
 * of the API's); without `admin` they answer 404.
 */
export const ADMIN_PATH_PREFIX = "/admin/";

/** True for `/admin` and any path under it: the admin API's, never a channel's. */
export function isAdminPath(path: string): boolean {
  return path === ADMIN_PATH_PREFIX.slice(0, -1) || path.startsWith(ADMIN_PATH_PREFIX);
}

const PATH_CHARS = /^\/[A-Za-z0-9._~/-]*$/;

/**
 * True when `path` holds a `.` or `..` segment, which clients resolve before a request is sent
 * (the URL parser does), so the path as written would never be asked for.
 */
function hasDotSegment(path: string): boolean {
  return path.split("/").some((segment) => segment === "." || segment === "..");
}

/** A channel's inbound path: never one of the service's own, nor one no client would send as written. */
export const webhookPath = z
  .string({ error: 'must be a URL path starting with "/", e.g. "/webhook"' })
  .regex(PATH_CHARS, {
    error: 'must be a URL path starting with "/" made of letters, digits and . _ ~ - /, e.g. "/webhook"',
  })
  .refine((value) => !hasDotSegment(value), {
    error:
      'must not hold a "." or ".." segment: clients resolve them before sending, so no request would reach the path as written',
    params: { fix: 'write the path as clients send it, e.g. "/webhook"' },
  })
  .refine((value) => value !== HEALTH_PATH, {
    error: '"/healthz" is reserved for the health check; pick another path',
    params: { fix: 'pick a path of its own, e.g. "/webhook"' },
  })
  .refine((value) => value !== READY_PATH, {
    error: '"/readyz" is reserved for the readiness check; pick another path',
    params: { fix: 'pick a path of its own, e.g. "/webhook"' },
  })
  .refine((value) => value !== METRICS_PATH, {
    error: '"/metrics" is reserved for the Prometheus metrics; pick another path',
    params: { fix: 'pick a path of its own, e.g. "/webhook"' },
  })
  .refine((value) => !isAdminPath(value), {
    error: '"/admin" and every path under it are reserved for the admin API, even when admin is off',
    params: { fix: 'pick a path outside /admin, e.g. "/webhook"' },
  });
