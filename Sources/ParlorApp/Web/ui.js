// Small helpers for the page: element lookup, switching views, the status line, error wording.

export const $ = (id) => document.getElementById(id);

export function show(view) {
  for (const id of ['login-view', 'lobby-view', 'room-view']) $(id).hidden = id !== view;
  // Focus moves to the new view's heading (its name is read out), or to the field that needs typing.
  const focusTarget = { 'login-view': 'login-name', 'lobby-view': 'lobby-title', 'room-view': 'room-title' }[view];
  $(focusTarget)?.focus();
}

export function plural(count, noun) {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

export function announce(text) {
  $('status').textContent = text;
}

/** The server's refusals in words a person can act on; anything else keeps the server's own detail. */
export function describeError(error) {
  const code = error?.code || '';
  if (code === 'member:error:not-allowed') return 'Only a moderator can do that (or your role does not allow it).';
  if (code === 'room:error:locked') return 'The room is locked: nobody new can join until a moderator unlocks it.';
  if (code === 'room:error:banned') return 'You are banned from this room for now.';
  if (code.endsWith(':error:rate-limited')) return 'That was too fast: wait a few seconds and try again.';
  if (code === 'message:error:invalid-text') return `The message was not accepted: ${error.message}`;
  return error?.message || String(error);
}
