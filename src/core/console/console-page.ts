import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import { VERSION } from "../version.js";
import { activitySection } from "./console-page-activity.js";
import { messageSections } from "./console-page-messages.js";
import { CONSOLE_PATHS } from "./console-paths.js";

/**
 * The console's page: a shell with no data in it (it is served without the admin secret), whose
 * same-origin script signs in and fills it from the JSON admin API. Every live part has its
 * empty state written here, so that the page reads sensibly before the first answer. The search
 * and the charts are parts of their own (console-page-messages.ts, console-page-activity.ts).
 */
export function consolePage(): HtmlEscapedString | Promise<HtmlEscapedString> {
  return html`<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>webhook-channel console</title>
    <link rel="icon" href="${CONSOLE_PATHS.icon}" type="image/svg+xml" />
    <link rel="stylesheet" href="${CONSOLE_PATHS.style}" />
    <script src="${CONSOLE_PATHS.script}" defer></script>
  </head>
  <body>
    <a class="skip" href="#main">Skip to the content</a>
    <header>
      <h1>webhook-channel console</h1>
      <p class="meta">Version ${VERSION}</p>
      <p id="session" hidden>
        Signed in for this tab only. <button type="button" id="sign-out">Sign out</button>
      </p>
    </header>
    <main id="main">
      <noscript>
        <p>This console needs JavaScript. Without it, use the admin API or <code>webhook-channel dead-letters</code>.</p>
      </noscript>
      <section id="sign-in-section" aria-labelledby="sign-in-title">
        <h2 id="sign-in-title">Sign in</h2>
        <form id="sign-in" method="post" action="${CONSOLE_PATHS.page}">
          <label for="secret">Admin secret (the value of the variable <code>admin.token_env</code> names)</label>
          <input id="secret" name="secret" type="password" autocomplete="off" required autofocus />
          <button type="submit">Sign in</button>
          <p id="sign-in-error" class="error" role="alert"></p>
        </form>
        <p class="meta">
          The secret stays in this tab (session storage) and goes only to this service, as
          <code>Authorization: Bearer</code>; closing the tab forgets it.
        </p>
      </section>
      <div id="console" hidden>
        <p id="notice" role="status" aria-live="polite" tabindex="-1"></p>
        ${messageSections()}
        <section aria-labelledby="channels-title">
          <h2 id="channels-title" tabindex="-1">Channels</h2>
          <p class="meta" id="refresh-state">Not loaded yet.</p>
          <div class="scroll" tabindex="0" role="region" aria-label="Table of channels">
            <table id="channels">
              <thead>
                <tr>
                  <th scope="col">Channel</th>
                  <th scope="col" class="num">Accepted</th>
                  <th scope="col" class="num">Delivered</th>
                  <th scope="col" class="num">Retrying</th>
                  <th scope="col" class="num">Dead-lettered</th>
                  <th scope="col" class="num">Queue depth / capacity</th>
                  <th scope="col">Oldest pending</th>
                  <th scope="col">Receiver</th>
                  <th scope="col" class="num">Waiting for it</th>
                </tr>
              </thead>
              <tbody></tbody>
            </table>
          </div>
        </section>
        ${activitySection()}
        <section aria-labelledby="brains-title">
          <h2 id="brains-title">Brains</h2>
          <p id="brains-empty" class="empty" hidden></p>
          <div class="scroll" tabindex="0" role="region" aria-label="Table of brains">
            <table id="brains">
              <thead>
                <tr>
                  <th scope="col">Brain</th>
                  <th scope="col" class="num">Calls in flight</th>
                  <th scope="col">Paused</th>
                </tr>
              </thead>
              <tbody></tbody>
            </table>
          </div>
        </section>
        <section id="unavailable-section" aria-labelledby="unavailable-title" hidden>
          <h2 id="unavailable-title">Not available on this runtime</h2>
          <ul id="unavailable"></ul>
        </section>
        <section aria-labelledby="dead-letters-title">
          <h2 id="dead-letters-title" tabindex="-1">Dead letters <span id="dead-letter-count" class="meta"></span></h2>
          <div class="toolbar">
            <label for="dead-letter-channel">Channel</label>
            <select id="dead-letter-channel">
              <option value="">All channels</option>
            </select>
            <button type="button" id="replay-selected">Replay selected</button>
            <button type="button" id="replay-all">Replay all</button>
          </div>
          <p id="dead-letters-empty" class="empty" hidden></p>
          <div class="scroll" tabindex="0" role="region" aria-label="Table of dead letters">
            <table id="dead-letters">
              <thead>
                <tr>
                  <th scope="col"><span class="visually-hidden">Select</span></th>
                  <th scope="col">Channel</th>
                  <th scope="col">Conversation</th>
                  <th scope="col">Failed at</th>
                  <th scope="col">Stage</th>
                  <th scope="col">Error</th>
                  <th scope="col" class="num">Attempts</th>
                  <th scope="col"><span class="visually-hidden">Timeline</span></th>
                  <th scope="col"><span class="visually-hidden">Details</span></th>
                </tr>
              </thead>
              <tbody></tbody>
            </table>
          </div>
          <p id="dead-letters-more" class="meta" hidden></p>
        </section>
        <section id="detail" aria-labelledby="detail-title" hidden>
          <h2 id="detail-title" tabindex="-1">Dead letter</h2>
          <dl id="detail-fields"></dl>
          <h3>Replies</h3>
          <p id="detail-replies-empty" class="empty" hidden>
            None: the brain never answered (stage <code>brain</code>); a replay asks it again.
          </p>
          <div class="scroll" tabindex="0" role="region" aria-label="Table of the dead letter's replies">
            <table id="detail-replies">
              <thead>
                <tr>
                  <th scope="col" class="num">Sequence</th>
                  <th scope="col">Delivered</th>
                  <th scope="col">Reply id</th>
                  <th scope="col">Body</th>
                </tr>
              </thead>
              <tbody></tbody>
            </table>
          </div>
          <div class="toolbar">
            <button type="button" id="detail-replay">Replay</button>
            <button type="button" id="detail-delete" class="danger">Delete</button>
            <button type="button" id="detail-close">Close</button>
          </div>
        </section>
      </div>
      <dialog id="confirm" aria-labelledby="confirm-text">
        <form method="dialog">
          <p id="confirm-text"></p>
          <div class="toolbar">
            <button value="cancel" id="confirm-cancel">Cancel</button>
            <button value="ok" id="confirm-ok">Confirm</button>
          </div>
        </form>
      </dialog>
    </main>
  </body>
</html>
`;
}
