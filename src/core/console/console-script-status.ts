/**
 * The console script's live view of `GET /admin/status`: a row per channel, a row per brain,
 * and what the runtime cannot show, said in words. A value the runtime does not have shows as
 * "n/a", never as 0. Plain browser JavaScript, kept as text (see `console-script-base.ts`).
 */
export const CONSOLE_SCRIPT_STATUS = String.raw`
function notAvailable() {
  return el("abbr", { title: "Not available on this runtime: see the list below", text: "n/a" });
}

function numberCell(value) {
  return el("td", { className: "num" }, [value === null || value === undefined ? notAvailable() : String(value)]);
}

function receiverCell(receiver) {
  if (receiver === null) return el("td", {}, [notAvailable()]);
  if (receiver.up) return el("td", { className: "state-up", text: "up" });
  return el("td", { className: "state-down" }, [
    "down since ", timeEl(receiver.since), "; next try ", timeEl(receiver.next_probe_at),
  ]);
}

function pendingCell(queue, now) {
  if (queue === null) return el("td", {}, [notAvailable()]);
  if (queue.oldest_pending_at === null) return el("td", { text: "none pending" });
  var age = duration(now - Date.parse(queue.oldest_pending_at));
  return el("td", {}, [timeEl(queue.oldest_pending_at), " (" + age + " ago)"]);
}

function channelRow(channel, now) {
  var counts = channel.counts || {};
  var queue = channel.queue;
  return el("tr", {}, [
    el("th", { scope: "row", text: channel.channel }),
    numberCell(counts.accepted),
    numberCell(counts.delivered),
    numberCell(counts.retrying),
    numberCell(counts.dead_lettered),
    queue === null ? el("td", { className: "num" }, [notAvailable()]) : el("td", { className: "num", text: queue.depth + " / " + queue.capacity }),
    pendingCell(queue, now),
    receiverCell(channel.receiver),
    numberCell(channel.receiver === null ? null : channel.receiver.waiting),
  ]);
}

/** The end first: it says when calls go through again; the start only how long it has lasted. */
function pausedCell(brain) {
  if (!brain.paused) return el("td", { text: "no" });
  // A pause reported without its end (the status field is null then) still shows its start.
  if (brain.paused_until === null) {
    return el("td", { className: "state-down" }, ["paused since ", timeEl(brain.paused_since)]);
  }
  return el("td", { className: "state-down" }, [
    "paused until ", timeEl(brain.paused_until), " (since ", timeEl(brain.paused_since), ")",
  ]);
}

function brainRow(brain) {
  return el("tr", {}, [
    el("th", { scope: "row", text: brain.brain }),
    numberCell(brain.in_flight),
    pausedCell(brain),
  ]);
}

/** Keeps the channel filter's options equal to the configured channels, and its choice. */
function syncChannelOptions(names) {
  var key = names.join("\n");
  if (key === state.channels) return;
  state.channels = key;
  var select = byId("dead-letter-channel");
  var options = [el("option", { value: "", text: "All channels" })].concat(names.map(function (name) {
    return el("option", { value: name, text: name });
  }));
  select.replaceChildren.apply(select, options);
  select.value = names.indexOf(state.channel) >= 0 ? state.channel : "";
}

function renderStatus(report) {
  var now = Date.parse(report.generated_at);
  var channels = byId("channels").tBodies[0];
  var rows = report.channels.map(function (channel) { return channelRow(channel, now); });
  if (rows.length === 0) rows = [el("tr", {}, [el("td", { colspan: 9, className: "empty", text: "No channels are configured." })])];
  channels.replaceChildren.apply(channels, rows);

  var brains = byId("brains");
  var brainsEmpty = byId("brains-empty");
  if (report.brains === null) {
    brainsEmpty.textContent = "Not available on this runtime: see the list below.";
  } else if (report.brains.length === 0) {
    brainsEmpty.textContent = "No brain that calls out is in use (echo answers itself), so there are no calls to count or pause.";
  } else {
    brainsEmpty.textContent = "";
  }
  brainsEmpty.hidden = brainsEmpty.textContent === "";
  brains.closest(".scroll").hidden = !brainsEmpty.hidden;
  var brainBody = brains.tBodies[0];
  brainBody.replaceChildren.apply(brainBody, (report.brains || []).map(brainRow));

  var missing = byId("unavailable");
  missing.replaceChildren.apply(missing, report.not_available.map(function (text) { return el("li", { text: text }); }));
  byId("unavailable-section").hidden = report.not_available.length === 0;

  byId("dead-letter-count").textContent = report.dead_letters === null
    ? "(the dead-letter store did not answer)"
    : "(" + report.dead_letters + " listed)";
  syncChannelOptions(report.channels.map(function (channel) { return channel.channel; }));

  var line = byId("refresh-state");
  var on = report.replica === undefined ? report.runtime : report.runtime + ", replica " + report.replica;
  var parts = ["Updated ", timeEl(report.generated_at), ", every " + REFRESH_MS / 1000 + " s, on " + on + "."];
  if (report.counting_since !== null) parts.push(" Counts since ", timeEl(report.counting_since), ".");
  line.replaceChildren.apply(line, parts);
}
`;
