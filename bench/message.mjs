// The one inbound message every load test sends, and the secret both servers check.
import { randomBytes } from "node:crypto";

/** A fresh secret per run, shaped like `webhook-channel secret` output. */
export const newSecret = () => randomBytes(32).toString("base64url");

/** The channel path both servers serve. */
export const CHANNEL_PATH = "/webhook";

/**
 * About 300 bytes of JSON with every common field, so validation does its full work.
 * `conversation` lets a load spread messages over many conversations: the service
 * processes one conversation's messages one at a time, so a single one would serialize
 * delivery and measure round trips instead of throughput.
 */
export function messageBody(conversation = "conv-0001") {
  return JSON.stringify({
    sender_id: "user-4711",
    sender_name: "Ada Lovelace",
    conversation_id: conversation,
    text:
      "Hello from the benchmark. This message is about three hundred bytes long, " +
      "like a typical chat line with some context, so that parsing and validation " +
      "do realistic work on every request; nothing in it is special.",
  });
}

/** Request headers of an accepted message. */
export const messageHeaders = (secret) => ({
  authorization: `Bearer ${secret}`,
  "content-type": "application/json; charset=utf-8",
});
