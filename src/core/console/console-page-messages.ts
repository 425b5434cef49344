import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import { CONSOLE_PATHS } from "./console-paths.js";

/**
 * The console's search for a message or a conversation, and the part that shows what it found:
 * a conversation's messages, each linking to its timeline, or one message's timeline. Empty
 * until a search or a link (`#message=<id>`, `#conversation=<id>`) fills it.
 */
export function messageSections(): HtmlEscapedString | Promise<HtmlEscapedString> {
  return html`<section aria-labelledby="search-title">
          <h2 id="search-title">Where is a message?</h2>
          <form id="search" role="search" method="get" action="${CONSOLE_PATHS.page}">
            <label for="search-id">Message id or conversation id</label>
            <input id="search-id" name="id" type="search" autocomplete="off" spellcheck="false" required />
            <button type="submit" id="search-submit">Find</button>
          </form>
          <p id="search-off" class="error" role="status" hidden></p>
          <p class="meta">
            A message id (the <code>message_id</code> the webhook answered) shows what happened to it; a
            conversation id lists its messages, newest first.
          </p>
        </section>
        <section id="found" aria-labelledby="found-title" hidden>
          <h2 id="found-title" tabindex="-1">Found</h2>
          <p id="found-state" role="status"></p>
          <p id="found-detail" class="meta" hidden></p>
          <div id="conversation" hidden>
            <div class="scroll" tabindex="0" role="region" aria-label="Table of the conversation's messages">
              <table id="conversation-messages">
                <thead>
                  <tr>
                    <th scope="col">Accepted</th>
                    <th scope="col">Message</th>
                    <th scope="col">Channel</th>
                    <th scope="col">Status</th>
                    <th scope="col">Last change</th>
                  </tr>
                </thead>
                <tbody></tbody>
              </table>
            </div>
            <button type="button" id="conversation-more" hidden>Show older messages</button>
          </div>
          <div id="timeline" hidden>
            <dl id="timeline-fields"></dl>
            <h3 id="timeline-events-title">What happened, oldest first</h3>
            <ol id="timeline-events" class="timeline" aria-labelledby="timeline-events-title"></ol>
          </div>
          <div class="toolbar">
            <button type="button" id="timeline-dead-letter" hidden>Show the dead letter</button>
            <button type="button" id="found-close">Close</button>
          </div>
        </section>`;
}
