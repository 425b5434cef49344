/**
 * The shared inbound cases on the media type and the size: checks 2 and 3, which come after
 * authentication and before the body is read as JSON. inbound-cases.ts puts them after the
 * routing and authentication cases.
 */
import { AUTH, type InboundCase, paddedBody, post } from "./inbound-case-requests.js";
import { ONE_MIB } from "./inbound-cases-config.js";

const exactlyOneMib = paddedBody(ONE_MIB);
const overOneMib = paddedBody(ONE_MIB + 1);

/** Check 2 (media type), then check 3 (size). */
export const MEDIA_TYPE_AND_SIZE_CASES: readonly InboundCase[] = [
  // Check 2: media type.
  {
    name: "415 for text/plain",
    request: post("/webhook", '{"sender_id":"u1","text":"hi"}', { "content-type": "text/plain" }),
    expect: { status: 415, code: "unsupported_media_type", headers: { "content-type": "application/problem+json" } },
  },
  {
    name: "415 without a Content-Type",
    request: {
      method: "POST",
      path: "/webhook",
      headers: { authorization: AUTH },
      body: '{"sender_id":"u1","text":"hi"}',
    },
    expect: { status: 415, code: "unsupported_media_type" },
  },
  {
    name: "415 for a body sent with Content-Encoding: gzip",
    request: post("/webhook", '{"sender_id":"u1","text":"hi"}', { "content-encoding": "gzip" }),
    expect: { status: 415, code: "unsupported_media_type", headers: { "content-type": "application/problem+json" } },
  },
  {
    name: "415 for a body sent with Content-Encoding: identity, br",
    request: post("/webhook", '{"sender_id":"u1","text":"hi"}', { "content-encoding": "identity, br" }),
    expect: { status: 415, code: "unsupported_media_type" },
  },
  {
    name: "200 for a body sent with Content-Encoding: Identity",
    request: post("/webhook", '{"sender_id":"u1","text":"hi"}', { "content-encoding": "Identity" }),
    expect: { status: 200 },
  },
  {
    name: "415 for application/json; charset=latin1",
    request: post("/webhook", '{"sender_id":"u1","text":"hi"}', { "content-type": "application/json; charset=latin1" }),
    expect: { status: 415, code: "unsupported_media_type" },
  },
  {
    name: "415 comes before 413 (text/plain, body over 1 MiB)",
    request: post("/webhook", overOneMib, { "content-type": "text/plain" }),
    expect: { status: 415, code: "unsupported_media_type" },
  },
  {
    name: "200 for APPLICATION/JSON",
    request: post("/webhook", '{"sender_id":"u1","text":"hi"}', { "content-type": "APPLICATION/JSON" }),
    expect: { status: 200, conversationId: "u1" },
  },
  {
    name: "200 for application/json; charset=utf-8",
    request: post("/webhook", '{"sender_id":"u1","text":"hi"}', { "content-type": "application/json; charset=utf-8" }),
    expect: { status: 200, conversationId: "u1" },
  },
  {
    name: '200 for application/json; charset="UTF-8" (quoted, upper case)',
    request: post("/webhook", '{"sender_id":"u1","text":"hi"}', {
      "content-type": 'application/json; charset="UTF-8"',
    }),
    expect: { status: 200, conversationId: "u1" },
  },
  {
    name: "200 for application/json with another parameter",
    request: post("/webhook", '{"sender_id":"u1","text":"hi"}', { "content-type": "application/json; version=2" }),
    expect: { status: 200, conversationId: "u1" },
  },
  {
    name: "200 for a quoted parameter that holds ;charset=latin1 in its value",
    request: post("/webhook", '{"sender_id":"u1","text":"hi"}', {
      "content-type": 'application/json; profile="a;charset=latin1"',
    }),
    expect: { status: 200, conversationId: "u1" },
  },
  // Check 3: size.
  {
    name: "413 for a Content-Length over 1 MiB",
    request: post("/webhook", overOneMib, { "content-length": String(ONE_MIB + 1) }),
    expect: { status: 413, code: "payload_too_large", headers: { "content-type": "application/problem+json" } },
  },
  {
    name: "413 comes before 400 (a body over 1 MiB that is not JSON)",
    request: post("/webhook", `{${"x".repeat(ONE_MIB + 10)}`, { "content-length": String(ONE_MIB + 11) }),
    expect: { status: 413, code: "payload_too_large" },
  },
  {
    name: "200 for a body of exactly 1 MiB",
    request: post("/webhook", exactlyOneMib, { "content-length": String(ONE_MIB) }),
    expect: { status: 200, conversationId: "u1" },
  },
];
