/**
 * The shared inbound cases on the body: check 4 (it is a JSON object), check 5 (it is a valid
 * message, each wrong field named) and the channel's mapping of its keys. inbound-cases.ts puts
 * them last in INBOUND_CASES.
 */
import { type InboundCase, post } from "./inbound-case-requests.js";

/** Check 4 (JSON), check 5 (the message), then the mapping. */
export const MESSAGE_CASES: readonly InboundCase[] = [
  // Check 4: JSON.
  {
    name: "400 invalid_json for a syntax error",
    request: post("/webhook", '{"sender_id":'),
    expect: { status: 400, code: "invalid_json", headers: { "content-type": "application/problem+json" } },
  },
  {
    name: "400 invalid_json for an empty body",
    request: post("/webhook", ""),
    expect: { status: 400, code: "invalid_json" },
  },
  {
    name: "400 invalid_json for a top-level array",
    request: post("/webhook", '[{"sender_id":"u1","text":"hi"}]'),
    expect: { status: 400, code: "invalid_json" },
  },
  {
    name: "400 invalid_json for a top-level string",
    request: post("/webhook", '"hi"'),
    expect: { status: 400, code: "invalid_json" },
  },
  {
    name: "400 invalid_json for null",
    request: post("/webhook", "null"),
    expect: { status: 400, code: "invalid_json" },
  },
  // Check 5: the message.
  {
    name: "400 invalid_message naming sender_id and text for an empty object",
    request: post("/webhook", "{}"),
    expect: { status: 400, code: "invalid_message", errorFields: ["sender_id", "text"] },
  },
  {
    name: "400 invalid_message naming text for blank text and no media",
    request: post("/webhook", '{"sender_id":"u1","text":"   "}'),
    expect: { status: 400, code: "invalid_message", errorFields: ["text"] },
  },
  {
    name: "400 invalid_message naming each field of the wrong type",
    request: post("/webhook", '{"sender_id":true,"text":5,"media_url":"ftp://example.com/a.png"}'),
    expect: { status: 400, code: "invalid_message", errorFields: ["sender_id", "text", "media_url"] },
  },
  {
    name: "400 invalid_message for a sender_id over 256 characters",
    request: post("/webhook", JSON.stringify({ sender_id: "u".repeat(257), text: "hi" })),
    expect: { status: 400, code: "invalid_message", errorFields: ["sender_id"] },
  },
  {
    name: "400 invalid_message naming a conversation_id with a lone surrogate escape",
    request: post("/webhook", '{"sender_id":"u1","text":"hi","conversation_id":"c\\udc00"}'),
    expect: { status: 400, code: "invalid_message", errorFields: ["conversation_id"] },
  },
  {
    // Postgres cannot hold it in text: refused there as "the state cannot be written", for ever.
    name: "400 invalid_message naming a sender_id and a conversation_id holding U+0000",
    request: post("/webhook", '{"sender_id":"u\\u0000","text":"hi","conversation_id":"c\\u0000d"}'),
    expect: { status: 400, code: "invalid_message", errorFields: ["sender_id", "conversation_id"] },
  },
  {
    name: "400 invalid_message naming a media_url the URL parser would forgive (spaces around it)",
    request: post("/webhook", '{"sender_id":"u1","media_url":"  https://example.com/a.png  "}'),
    expect: { status: 400, code: "invalid_message", errorFields: ["media_url"] },
  },
  {
    name: "400 invalid_message naming both a wrong field and an Idempotency-Key over 256 characters",
    request: post("/webhook", '{"sender_id":true,"text":"hi"}', { "idempotency-key": "k".repeat(257) }),
    expect: { status: 400, code: "invalid_message", errorFields: ["sender_id", "Idempotency-Key"] },
  },
  {
    // Runtimes read such bytes differently (Node one character per byte, workerd as UTF-8),
    // so they would be counted and told apart differently: one rule everywhere instead.
    name: "400 invalid_message naming an Idempotency-Key with bytes outside printable ASCII",
    request: post("/webhook", '{"sender_id":"u1","text":"hi"}', { "idempotency-key": "caf\u00c3\u00a9" }),
    expect: { status: 400, code: "invalid_message", errorFields: ["Idempotency-Key"] },
  },
  {
    name: "200 for an Idempotency-Key of 256 printable ASCII characters, spaces and symbols among them",
    request: post("/webhook", '{"sender_id":"u1","text":"hi"}', { "idempotency-key": "a b~!".repeat(51).concat("z") }),
    expect: { status: 200, conversationId: "u1" },
  },
  {
    name: "400 invalid_message for a media_type that is not type/subtype",
    request: post("/webhook", '{"sender_id":"u1","media_url":"https://example.com/a.png","media_type":"png"}'),
    expect: { status: 400, code: "invalid_message", errorFields: ["media_type"] },
  },
  {
    name: "200 for media without text",
    request: post("/webhook", '{"sender_id":"u1","media_url":"https://example.com/a.png","media_type":"image/png"}'),
    expect: { status: 200, conversationId: "u1" },
  },
  {
    name: "200 with the conversation id the client sent",
    request: post("/webhook", '{"sender_id":"u1","text":"hi","conversation_id":"c-7"}'),
    expect: { status: 200, conversationId: "c-7" },
  },
  {
    name: "200 for a numeric sender_id, turned into a string",
    request: post("/webhook", '{"sender_id":42,"text":"hi"}'),
    expect: { status: 200, conversationId: "42" },
  },
  {
    name: "200 ignoring unknown keys and null optional fields",
    request: post("/webhook", '{"sender_id":"u1","text":"hi","extra":{"a":1},"sender_name":null}'),
    expect: { status: 200, conversationId: "u1" },
  },
  // The mapping.
  {
    name: "mapping: 200 reading the mapped keys",
    request: post("/mapped", '{"user":"u9","message":"hi","thread":"t-1"}'),
    expect: { status: 200, conversationId: "t-1" },
  },
  {
    name: "mapping: missing content names the mapped text key",
    request: post("/mapped", '{"user":"u9"}'),
    expect: { status: 400, code: "invalid_message", errorFields: ["message"] },
  },
  {
    name: "mapping: a mapped field is read only from its mapped key",
    request: post("/mapped", '{"sender_id":"u9","text":"hi"}'),
    expect: { status: 400, code: "invalid_message", errorFields: ["user", "message"] },
  },
  {
    name: "mapping: an unmapped field keeps its own key",
    request: post("/mapped", '{"user":"u9","media_url":"https://example.com/a.png"}'),
    expect: { status: 200, conversationId: "u9" },
  },
];
