/**
 * The console script's base: the tab's secret, calls to the admin API with it, the notice,
 * the confirmation dialog and how times are shown. Plain ES2020 for the browser, kept as text
 * (`String.raw`, so regular expressions keep their backslashes) and served by the service
 * itself; it builds every element with `textContent`, never with markup from data.
 */
// biome-ignore lint/complexity/noUselessStringRaw: raw like every part, so that a backslash added later reaches the browser as written
export const CONSOLE_SCRIPT_BASE = String.raw`
var SECRET_KEY = "webhook-channel-admin-secret";
var REFRESH_MS = 3000;
var PAGE_LIMIT = 100;
var state = { timer: null, selected: new Set(), detail: null, letters: "", channel: "", channels: "" };

function byId(id) { return document.getElementById(id); }

/** An element with text and attributes; null, undefined and false attributes are left out. */
function el(tag, attributes, children) {
  var node = document.createElement(tag);
  Object.keys(attributes || {}).forEach(function (name) {
    var value = attributes[name];
    if (value === null || value === undefined || value === false) return;
    if (name === "text") node.textContent = String(value);
    else if (name === "className") node.className = value;
    else if (name === "key") node.dataset.key = value;
    else node.setAttribute(name, value === true ? "" : String(value));
  });
  (children || []).forEach(function (child) { node.append(child); });
  return node;
}

/** A time in the viewer's zone, the UTC time on hover. */
function timeEl(iso) {
  if (iso === null || iso === undefined) return document.createTextNode("none");
  var date = new Date(iso);
  var utc = date.toISOString().replace("T", " ").replace(/Z$/, " UTC");
  return el("time", { datetime: date.toISOString(), title: utc, text: date.toLocaleString() });
}

/** "4 s", "3 min 20 s", "2 h 5 min". */
function duration(ms) {
  var s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return s + " s";
  var m = Math.floor(s / 60);
  if (m < 60) return m + " min " + (s % 60) + " s";
  return Math.floor(m / 60) + " h " + (m % 60) + " min";
}

function secret() { return sessionStorage.getItem(SECRET_KEY); }

/** One call to the admin API with the tab's secret; the answer's status, parsed body and text. */
async function api(method, path, body) {
  var headers = { authorization: "Bearer " + (secret() || "") };
  var init = { method: method, headers: headers, cache: "no-store", credentials: "omit", referrerPolicy: "no-referrer" };
  if (body !== undefined) {
    headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  var response = await fetch(path, init);
  var text = await response.text();
  var data = null;
  try { data = text === "" ? null : JSON.parse(text); } catch (error) { data = null; }
  return { status: response.status, ok: response.ok, data: data, text: text };
}

/** What the API answered, for a person: a problem's code and detail, else the status and body. */
function describe(answer) {
  var data = answer.data;
  if (data !== null && typeof data === "object" && typeof data.detail === "string") {
    return answer.status + " " + (data.code || data.title || "") + ": " + data.detail;
  }
  if (answer.text === "") return answer.status + " (no body)";
  return answer.status + " " + answer.text;
}

function notify(text, failed) {
  var notice = byId("notice");
  notice.textContent = text;
  notice.classList.toggle("failed", failed === true);
}

/** Asks before an action; resolves true only for the dialog's confirm button. Cancel has the focus. */
function confirmAction(text, label) {
  return new Promise(function (resolve) {
    var dialog = byId("confirm");
    byId("confirm-text").textContent = text;
    byId("confirm-ok").textContent = label;
    dialog.returnValue = "";
    dialog.addEventListener("close", function () { resolve(dialog.returnValue === "ok"); }, { once: true });
    dialog.showModal();
    byId("confirm-cancel").focus();
  });
}

/** Runs an event handler's promise, showing what went wrong instead of leaving it unhandled. */
function guarded(run) {
  return function (event) {
    run(event).catch(function (error) { notify("Something went wrong: " + (error && error.message ? error.message : error), true); });
  };
}

function showSignIn(message) {
  clearTimeout(state.timer);
  state.timer = null;
  byId("console").hidden = true;
  byId("session").hidden = true;
  byId("sign-in-section").hidden = false;
  byId("sign-in-error").textContent = message || "";
  var input = byId("secret");
  input.value = "";
  input.focus();
}

function signOut(message) {
  sessionStorage.removeItem(SECRET_KEY);
  state.selected.clear();
  state.letters = "";
  state.detail = null;
  byId("detail").hidden = true;
  notify("");
  showSignIn(message);
}

/** Tries the secret on the status endpoint; keeps it for the tab only when the API takes it. */
async function signIn(value) {
  sessionStorage.setItem(SECRET_KEY, value);
  var answer = await api("GET", "/admin/status");
  if (answer.status !== 200) {
    sessionStorage.removeItem(SECRET_KEY);
    showSignIn("Not signed in: the API answered " + describe(answer));
    return;
  }
  byId("sign-in-section").hidden = true;
  byId("session").hidden = false;
  byId("console").hidden = false;
  renderStatus(answer.data);
  await refreshLetters();
  schedule();
  byId("channels-title").focus();
}

function schedule() {
  clearTimeout(state.timer);
  state.timer = setTimeout(function () {
    refresh().catch(function (error) {
      byId("refresh-state").textContent = "Could not reach the service (" + (error && error.message ? error.message : error) + "); trying again in " + REFRESH_MS / 1000 + " s.";
    }).finally(function () { if (secret() !== null) schedule(); });
  }, REFRESH_MS);
}

/** One refresh of the live parts; a 401 (the secret was changed) signs out with the API's words. */
async function refresh() {
  var answer = await api("GET", "/admin/status");
  if (answer.status === 401) { signOut("Signed out: the API answered " + describe(answer)); return; }
  if (!answer.ok) throw new Error("the status endpoint answered " + describe(answer));
  renderStatus(answer.data);
  await refreshLetters();
}
`;
