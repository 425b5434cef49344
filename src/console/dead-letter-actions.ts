import { api, describe } from "./admin-api.js";
import { setChannel } from "./channel-filter.js";
import { confirmAction } from "./confirm-action.js";
import { state } from "./console-state.js";
import { closeDetail } from "./dead-letter-detail.js";
import { refreshLetters } from "./dead-letter-list.js";
import { byId } from "./dom.js";
import { refreshNow } from "./live-refresh.js";
import { notify } from "./notice.js";
import { signOut } from "./sign-out.js";

/** One confirmed call: the question, its confirm button, and the request. */
interface Action {
  readonly question: string;
  readonly label: string;
  readonly method: "POST" | "DELETE";
  readonly path: string;
  readonly body?: unknown;
  /** What the notice calls it: "Replay of <id>". */
  readonly what: string;
  /** Runs once the API took the action, before the redraw (which would otherwise find the open letter gone). */
  readonly done?: () => void;
}

/** Runs one action once confirmed, shows the API's answer, and redraws at once; resolves whether it succeeded. */
async function act(action: Action): Promise<boolean> {
  if (!(await confirmAction(action.question, action.label))) {
    notify(`${action.what}: cancelled, nothing was sent.`);
    return false;
  }
  const answer = await api(action.method, action.path, action.body);
  if (answer.status === 401) {
    signOut(`Signed out: the API answered ${describe(answer)}`);
    return false;
  }
  notify(`${action.what}: the API answered ${describe(answer)}`, !answer.ok);
  if (answer.ok) action.done?.();
  state.letters = "";
  // A refresh that fails says so in its own line; the action's answer above stays what it was.
  await refreshNow();
  // A refusal (a channel no longer configured, say) is read where it is written, above the
  // tables, however far down the action was; otherwise the list's title takes the focus.
  if (!answer.ok) byId("notice", HTMLParagraphElement).focus();
  else if (byId("detail", HTMLElement).hidden) byId("dead-letters-title", HTMLHeadingElement).focus();
  return answer.ok;
}

/** Replays the dead letter open in the detail. */
export async function replayDetail(): Promise<void> {
  const item = state.detail;
  if (item === null) return;
  const again =
    item.stage === "brain"
      ? "The brain is asked again."
      : "Its undelivered replies are posted again; the brain is not asked again.";
  await act({
    question: `Replay the dead letter ${item.id} of channel ${item.channel}? ${again}`,
    label: "Replay",
    method: "POST",
    path: `/admin/dead-letters/${encodeURIComponent(item.id)}/replay`,
    what: `Replay of ${item.id}`,
    done: closeDetail,
  });
}

/** Deletes the dead letter open in the detail. */
export async function deleteDetail(): Promise<void> {
  const item = state.detail;
  if (item === null) return;
  await act({
    question: `Delete the dead letter ${item.id} of channel ${item.channel}? It can then never be replayed.`,
    label: "Delete",
    method: "DELETE",
    path: `/admin/dead-letters/${encodeURIComponent(item.id)}`,
    what: `Delete of ${item.id}`,
    done: closeDetail,
  });
}

/** Replays the dead letters ticked in the table. */
export async function replaySelected(): Promise<void> {
  const ids = [...state.selected];
  if (ids.length === 0) {
    notify("Select dead letters first, with the boxes in the table's first column.", true);
    return;
  }
  await act({
    question: `Replay the ${ids.length} selected dead letter${ids.length === 1 ? "" : "s"}?`,
    label: `Replay ${ids.length}`,
    method: "POST",
    path: "/admin/dead-letters/replay",
    body: { ids },
    what: `Replay of ${ids.length} selected`,
    // Before the redraw, so that a letter the replay left listed is drawn unticked.
    done: () => state.selected.clear(),
  });
}

/** Replays every dead letter of the chosen channel, or of every channel. */
export async function replayAll(): Promise<void> {
  const { channel } = state;
  await act({
    question:
      channel === "" ? "Replay every dead letter of every channel?" : `Replay every dead letter of channel ${channel}?`,
    label: "Replay all",
    method: "POST",
    path: "/admin/dead-letters/replay",
    body: channel === "" ? {} : { channel },
    what: channel === "" ? "Replay of all" : `Replay of all of ${channel}`,
  });
}

/** Filters the dead letters (and "Replay all") to the channel chosen. */
export function chooseChannel(): Promise<void> {
  setChannel(byId("dead-letter-channel", HTMLSelectElement).value);
  return refreshLetters();
}
