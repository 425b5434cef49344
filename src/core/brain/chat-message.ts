/** One part of a multimodal chat message, in the Chat Completions format. */
export type ChatContentPart =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "image_url"; readonly image_url: { readonly url: string } };

/** One chat message, in the Chat Completions format (Workers AI takes the same shape). */
export interface ChatMessage {
  readonly role: "system" | "user" | "assistant";
  readonly content: string | readonly ChatContentPart[];
}
