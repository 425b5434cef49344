import type { ChatContentPart, ChatMessage } from "./chat-message.js";

/** What separates two turns of one role merged into one message: a blank line. */
const TURN_SEPARATOR = "\n\n";

/**
 * The earlier turns and the new message as strict chat templates (Mistral's, Gemma's, behind
 * vLLM or llama.cpp) accept them: user and assistant alternating, from a user turn to the new
 * user message. A window cut between a message and its answer leaves the answer first: it is
 * dropped, since its question is gone. Turns of one role in a row (several replies to one
 * message, a message that got none) are merged into one message, joined by a blank line, and a
 * trailing unanswered user turn takes the new message into it. `history` is oldest first and
 * holds no system message; with no new message, the history alone is returned, normalised.
 */
export function alternatingRoles(history: readonly ChatMessage[], current: ChatMessage | undefined): ChatMessage[] {
  const start = history.findIndex((message) => message.role === "user");
  const messages: ChatMessage[] = [];
  for (const message of start < 0 ? [] : history.slice(start)) appendTurn(messages, message);
  if (current !== undefined) appendTurn(messages, current);
  return messages;
}

function appendTurn(messages: ChatMessage[], message: ChatMessage): void {
  const last = messages.at(-1);
  if (last === undefined || last.role !== message.role) messages.push(message);
  else messages[messages.length - 1] = { role: last.role, content: mergedContent(last.content, message.content) };
}

function mergedContent(first: ChatMessage["content"], second: ChatMessage["content"]): ChatMessage["content"] {
  if (typeof first === "string" && typeof second === "string") return `${first}${TURN_SEPARATOR}${second}`;
  const parts = [...asParts(first)];
  const [head, ...rest] = asParts(second);
  const tail = parts.at(-1);
  if (head === undefined) return parts;
  // Templates join a message's text parts each their own way: joined here, the texts get the
  // blank line that turns sent as strings get.
  if (tail?.type === "text" && head.type === "text") {
    parts[parts.length - 1] = { type: "text", text: `${tail.text}${TURN_SEPARATOR}${head.text}` };
  } else parts.push(head);
  parts.push(...rest);
  return parts;
}

function asParts(content: ChatMessage["content"]): readonly ChatContentPart[] {
  return typeof content === "string" ? [{ type: "text", text: content }] : content;
}
