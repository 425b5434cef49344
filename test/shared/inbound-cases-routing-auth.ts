/**
 * The shared inbound cases on routing and authentication: which path and method is served,
 * and that only the Bearer secret gets further, before the media type is looked at.
 * inbound-cases.ts puts them first in INBOUND_CASES.
 */
import { AUTH, type InboundCase, JSON_TYPE, post } from "./inbound-case-requests.js";
import { INBOUND_CASES_SECRET } from "./inbound-cases-config.js";

/** Routing, then check 1 (authentication). */
export const ROUTING_AND_AUTH_CASES: readonly InboundCase[] = [
  // Routing comes first.
  {
    name: "404 for an unknown path, before authentication",
    request: { method: "POST", path: "/nope", headers: { "content-type": JSON_TYPE }, body: "{}" },
    expect: { status: 404, code: "not_found", headers: { "content-type": "application/problem+json" } },
  },
  {
    name: "405 with Allow: POST for GET on the inbound path",
    request: { method: "GET", path: "/webhook", headers: { authorization: AUTH } },
    expect: { status: 405, code: "method_not_allowed", headers: { allow: "POST" } },
  },
  {
    name: "405 for PUT on the inbound path, before authentication",
    request: { method: "PUT", path: "/webhook", headers: { "content-type": JSON_TYPE }, body: "{}" },
    expect: { status: 405, code: "method_not_allowed", headers: { allow: "POST" } },
  },
  {
    name: "GET /healthz answers 200 without authentication",
    request: { method: "GET", path: "/healthz", headers: {} },
    expect: { status: 200, json: { status: "ok" } },
  },
  {
    name: "405 with Allow: GET, HEAD for POST /healthz",
    request: { method: "POST", path: "/healthz", headers: {} },
    expect: { status: 405, code: "method_not_allowed", headers: { allow: "GET, HEAD" } },
  },
  {
    name: "405 with Allow: GET, HEAD for POST /readyz",
    request: { method: "POST", path: "/readyz", headers: {} },
    expect: { status: 405, code: "method_not_allowed", headers: { allow: "GET, HEAD" } },
  },
  // Check 1: authentication.
  {
    name: "401 with WWW-Authenticate without an Authorization header",
    request: {
      method: "POST",
      path: "/webhook",
      headers: { "content-type": JSON_TYPE },
      body: '{"sender_id":"u1","text":"hi"}',
    },
    expect: {
      status: 401,
      code: "unauthorized",
      headers: { "www-authenticate": 'Bearer realm="webhook-channel"', "content-type": "application/problem+json" },
    },
  },
  {
    name: "401 for a wrong token",
    request: post("/webhook", '{"sender_id":"u1","text":"hi"}', { authorization: `Bearer ${INBOUND_CASES_SECRET}x` }),
    expect: { status: 401, code: "unauthorized", headers: { "www-authenticate": 'Bearer realm="webhook-channel"' } },
  },
  {
    name: "401 for another scheme",
    request: post("/webhook", '{"sender_id":"u1","text":"hi"}', { authorization: `Basic ${INBOUND_CASES_SECRET}` }),
    expect: { status: 401, code: "unauthorized" },
  },
  {
    name: "401 comes before 415 (wrong token and text/plain)",
    request: post("/webhook", "hello", { authorization: "Bearer wrong", "content-type": "text/plain" }),
    expect: { status: 401, code: "unauthorized", headers: { "www-authenticate": 'Bearer realm="webhook-channel"' } },
  },
  {
    name: "200 with the scheme in another case (bEaReR)",
    request: post("/webhook", '{"sender_id":"u1","text":"hi"}', { authorization: `bEaReR ${INBOUND_CASES_SECRET}` }),
    expect: { status: 200, conversationId: "u1" },
  },
];
