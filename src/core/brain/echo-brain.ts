import type { BrainReply } from "../message/outbound-reply.js";
import type { Brain, BrainRequest } from "./brain.js";

/** The built-in brain: replies with the inbound text, and the inbound media when there is any. */
export function createEchoBrain(name = "echo"): Brain {
  return {
    name,
    historyLimit: 0,
    reply({ message }: BrainRequest): Promise<readonly BrainReply[]> {
      const reply: { text?: string; mediaUrl?: string; mediaType?: string } = {};
      if (message.text !== undefined && message.text.trim() !== "") reply.text = message.text;
      if (message.mediaUrl !== undefined) {
        reply.mediaUrl = message.mediaUrl;
        if (message.mediaType !== undefined) reply.mediaType = message.mediaType;
      }
      return Promise.resolve([reply]);
    },
  };
}
