/**
 * The console's icon: served from its own path so that the browser's icon request is
 * answered (a 404 would be a console error) and the policy needs no `data:` source.
 */
export const CONSOLE_ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1f3a5f"/><path d="M3 5h10M3 8h7M3 11h10" stroke="#fff" stroke-width="1.5"/></svg>`;
