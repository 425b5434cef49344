/**
 * The console script's dead letters: the table (the oldest page of the chosen channel), the
 * detail of one letter, and replay one, replay selected, replay all (of a channel) and delete,
 * each confirmed first and followed by the API's answer in the notice. Plain browser
 * JavaScript, kept as text (see `console-script-base.ts`).
 */
export const CONSOLE_SCRIPT_DEAD_LETTERS = String.raw`
function errorText(error) {
  return error.code + (error.status === null ? "" : " (HTTP " + error.status + ")") + ": " + error.message;
}

function letterRow(item) {
  var box = el("input", { type: "checkbox", key: "select:" + item.id, "aria-label": "Select the dead letter of conversation " + item.conversation_id + " (" + item.id + ")" });
  box.checked = state.selected.has(item.id);
  box.addEventListener("change", function () {
    if (box.checked) state.selected.add(item.id); else state.selected.delete(item.id);
  });
  var show = el("button", { type: "button", key: "show:" + item.id, text: "Show", "aria-label": "Show the dead letter " + item.id });
  show.addEventListener("click", guarded(function () { return showDetail(item.id); }));
  return el("tr", { "data-id": item.id }, [
    el("td", {}, [box]),
    el("td", { text: item.channel }),
    el("td", {}, [el("code", { text: item.conversation_id })]),
    el("td", {}, [timeEl(item.failed_at)]),
    el("td", { text: item.stage }),
    el("td", { text: errorText(item.error) }),
    el("td", { className: "num", text: String(item.attempts) }),
    el("td", {}, [show]),
  ]);
}

/** Redraws the table only when the page changed, keeping the selection and the focused control. */
async function refreshLetters() {
  var query = "?limit=" + PAGE_LIMIT + (state.channel === "" ? "" : "&channel=" + encodeURIComponent(state.channel));
  var answer = await api("GET", "/admin/dead-letters" + query);
  if (answer.status === 401) { signOut("Signed out: the API answered " + describe(answer)); return; }
  if (!answer.ok) throw new Error("listing dead letters answered " + describe(answer));
  var key = state.channel + "\n" + answer.text;
  if (key === state.letters) return;
  state.letters = key;
  var items = answer.data.items;
  var ids = new Set(items.map(function (item) { return item.id; }));
  state.selected.forEach(function (id) { if (!ids.has(id)) state.selected.delete(id); });
  var body = byId("dead-letters").tBodies[0];
  var focused = document.activeElement && body.contains(document.activeElement) ? document.activeElement.dataset.key : undefined;
  body.replaceChildren.apply(body, items.map(letterRow));
  if (focused !== undefined) {
    var again = body.querySelector('[data-key="' + CSS.escape(focused) + '"]');
    (again || byId("dead-letters-title")).focus();
  }
  var empty = byId("dead-letters-empty");
  empty.textContent = items.length > 0 ? "" : "No dead letters" + (state.channel === "" ? "" : " on channel " + state.channel) +
    ": every message accepted so far was delivered, is still being tried, or was replayed or deleted.";
  empty.hidden = items.length > 0;
  byId("dead-letters").closest(".scroll").hidden = items.length === 0;
  var more = byId("dead-letters-more");
  more.textContent = answer.data.next_cursor === null ? "" : "Showing the oldest " + PAGE_LIMIT +
    ". More follow once these are replayed or deleted; webhook-channel dead-letters list shows them all.";
  more.hidden = answer.data.next_cursor === null;
}

function field(list, name, value) {
  list.append(el("dt", { text: name }), el("dd", {}, [value === null || value === undefined ? "none" : value]));
}

async function showDetail(id) {
  var answer = await api("GET", "/admin/dead-letters/" + encodeURIComponent(id));
  if (!answer.ok) { notify("Could not show " + id + ": the API answered " + describe(answer), true); return; }
  var item = answer.data;
  state.detail = item;
  byId("detail-title").textContent = "Dead letter " + item.id;
  var list = byId("detail-fields");
  list.replaceChildren();
  field(list, "Channel", item.channel);
  field(list, "Conversation", el("code", { text: item.conversation_id }));
  field(list, "Message id", el("code", { text: item.message_id }));
  field(list, "Failed at", timeEl(item.failed_at));
  field(list, "Stage", item.stage === "brain" ? "brain: the brain never answered" : "reply: a reply could not be delivered");
  field(list, "Attempts", String(item.attempts));
  field(list, "Error", errorText(item.error));
  field(list, "Sender", item.message.sender_id + (item.message.sender_name === null ? "" : " (" + item.message.sender_name + ")"));
  field(list, "Text", item.message.text);
  field(list, "Media", item.message.media_url === null ? null : item.message.media_url + (item.message.media_type === null ? "" : " (" + item.message.media_type + ")"));
  field(list, "Received at", timeEl(item.message.received_at));
  field(list, "Idempotency-Key", item.message.idempotency_key);
  var replies = byId("detail-replies").tBodies[0];
  replies.replaceChildren.apply(replies, item.replies.map(function (reply) {
    var body = typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body, null, 2);
    return el("tr", {}, [
      el("td", { className: "num", text: String(reply.sequence) }),
      el("td", { text: reply.delivered ? "yes" : "no: posted again on replay" }),
      el("td", {}, [el("code", { text: reply.id })]),
      el("td", {}, [el("pre", { text: body })]),
    ]);
  }));
  byId("detail-replies-empty").hidden = item.replies.length > 0;
  byId("detail-replies").closest(".scroll").hidden = item.replies.length === 0;
  byId("detail").hidden = false;
  byId("detail-title").focus();
}

function closeDetail() {
  var item = state.detail;
  state.detail = null;
  byId("detail").hidden = true;
  var show = item === null ? null : document.querySelector('[data-key="show:' + CSS.escape(item.id) + '"]');
  (show || byId("dead-letters-title")).focus();
}

/** Runs one confirmed action, shows the API's answer, and redraws at once. */
async function act(question, label, method, path, body, what) {
  if (!(await confirmAction(question, label))) { notify(what + ": cancelled, nothing was sent."); return false; }
  var answer = await api(method, path, body);
  if (answer.status === 401) { signOut("Signed out: the API answered " + describe(answer)); return false; }
  notify(what + ": the API answered " + describe(answer), !answer.ok);
  state.letters = "";
  await refresh();
  return answer.ok;
}

async function replayDetail() {
  var item = state.detail;
  if (item === null) return;
  var question = "Replay the dead letter " + item.id + " of channel " + item.channel + "? " +
    (item.stage === "brain" ? "The brain is asked again." : "Its undelivered replies are posted again; the brain is not asked again.");
  var path = "/admin/dead-letters/" + encodeURIComponent(item.id) + "/replay";
  if (await act(question, "Replay", "POST", path, undefined, "Replay of " + item.id)) closeDetail();
}

async function deleteDetail() {
  var item = state.detail;
  if (item === null) return;
  var question = "Delete the dead letter " + item.id + " of channel " + item.channel + "? It can then never be replayed.";
  var path = "/admin/dead-letters/" + encodeURIComponent(item.id);
  if (await act(question, "Delete", "DELETE", path, undefined, "Delete of " + item.id)) closeDetail();
}

async function replaySelected() {
  var ids = Array.from(state.selected);
  if (ids.length === 0) { notify("Select dead letters first, with the boxes in the table's first column.", true); return; }
  var question = "Replay the " + ids.length + " selected dead letter" + (ids.length === 1 ? "" : "s") + "?";
  if (await act(question, "Replay " + ids.length, "POST", "/admin/dead-letters/replay", { ids: ids }, "Replay of " + ids.length + " selected")) state.selected.clear();
}

async function replayAll() {
  var channel = state.channel;
  var question = channel === "" ? "Replay every dead letter of every channel?" : "Replay every dead letter of channel " + channel + "?";
  var body = channel === "" ? {} : { channel: channel };
  await act(question, "Replay all", "POST", "/admin/dead-letters/replay", body, channel === "" ? "Replay of all" : "Replay of all of " + channel);
}

function chooseChannel() {
  state.channel = byId("dead-letter-channel").value;
  byId("replay-all").textContent = state.channel === "" ? "Replay all (every channel)" : "Replay all of " + state.channel;
  state.letters = "";
  return refreshLetters();
}
`;
