// The lobby: the live list of open rooms, and a shared link (/#RM-…) offered before anything is joined.
import { ParlorError } from './sdk/parlor.js';
import { saved, server } from './state.js';
import { $, show, announce } from './ui.js';
import { request } from './intents.js';

const ROOMS_POLL_MS = 4000;
// A padlock drawn here: emoji fonts are not everywhere (a headless browser, some Linux desktops).
const LOCK_ICON = '<svg viewBox="0 0 24 24" width="12" height="12" aria-hidden="true" focusable="false"><path fill="currentColor" d="M12 2a5 5 0 0 0-5 5v3H6a2 2 0 0 0-2 2v8a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2v-8a2 2 0 0 0-2-2h-1V7a5 5 0 0 0-5-5zm-3 8V7a3 3 0 0 1 6 0v3H9z"/></svg>';

let roomsTimer = null;
let lastRoomsJSON = '';

export function enterLobby() {
  show('lobby-view');
  lastRoomsJSON = '';
  refreshRooms();
  clearInterval(roomsTimer);
  roomsTimer = setInterval(refreshRooms, ROOMS_POLL_MS);
}

export function stopRoomsPolling() {
  clearInterval(roomsTimer);
  roomsTimer = null;
}

export async function refreshRooms() {
  if (!saved.token) return;
  let rooms;
  try {
    rooms = await server.rooms({ token: saved.token });
  } catch (error) {
    if (error.status === 401) request('renew-token');
    return;
  }
  const json = JSON.stringify(rooms.map((r) => [r.id, r.display_name, r.member_count, roomMode(r), r.locked, isEncrypted(r)]));
  if (json === lastRoomsJSON) return;  // unchanged: keep the DOM (and the keyboard focus) as it is
  lastRoomsJSON = json;
  const focusedId = document.activeElement?.dataset?.roomId;
  const list = $('room-list');
  list.replaceChildren(...rooms.map((r) => {
    const item = document.createElement('li');
    item.className = 'room';
    const name = document.createElement('span');
    name.className = 'room-name';
    name.textContent = r.display_name;
    const count = document.createElement('span');
    count.className = 'room-count';
    count.textContent = r.member_count === 1 ? '1 person' : `${r.member_count} people`;
    const kind = document.createElement('span');
    kind.className = 'badge';
    kind.textContent = [roomMode(r) === 'stage' ? 'stage' : '', r.locked ? 'locked' : ''].filter(Boolean).join(', ');
    kind.hidden = !kind.textContent;
    const lock = document.createElement('span');
    lock.className = 'badge e2ee';
    lock.innerHTML = `${LOCK_ICON} encrypted`;
    lock.title = 'End-to-end encrypted: the server cannot hear or read this room';
    lock.hidden = !isEncrypted(r);
    const join = document.createElement('button');
    join.type = 'button';
    join.textContent = 'Join';
    join.dataset.roomId = r.id;
    join.setAttribute('aria-label', `Join ${r.display_name}`);
    join.addEventListener('click', () => request('join-room', r.id, r.display_name, { e2ee: isEncrypted(r) }));
    item.append(name, lock, kind, count, join);
    return item;
  }));
  $('room-list-empty').hidden = rooms.length > 0;
  if (focusedId) list.querySelector(`[data-room-id="${CSS.escape(focusedId)}"]`)?.focus();
}

/** A room as GET /rooms lists it, or as POST /rooms returns it, is end-to-end encrypted. */
// GET /rooms carries the mode in `properties` (a join reply has it at the top).
function roomMode(room) {
  return room?.properties?.mode ?? room?.mode;
}

export function isEncrypted(room) {
  return !!(room?.e2ee ?? room?.properties?.e2ee);
}

/**
 * A shared link (/#RM-…) names a room: show it and ask. Joining turns the microphone on, so nothing happens
 * until the user presses Join.
 */
export async function offerSharedRoom(cid) {
  let displayName = cid;
  let encrypted = false;
  try {
    const shared = await server.room(cid, { token: saved.token });
    if (shared.closed_at) throw new ParlorError('room:error:closed', 'that room has closed');
    displayName = shared.display_name || cid;
    encrypted = isEncrypted(shared);
  } catch (error) {
    if (location.hash) history.replaceState(null, '', location.pathname);
    announce(`The shared room is not available: ${error.message}`);
    return;
  }
  $('invite-text').textContent = `You were sent a link to “${displayName}”. Join it? Joining turns your microphone on.`;
  $('invite').hidden = false;
  $('invite').dataset.roomId = cid;
  $('invite-join').onclick = () => {
    $('invite').hidden = true;
    if (location.hash) history.replaceState(null, '', location.pathname);
    request('join-room', cid, displayName, { e2ee: encrypted });
  };
  $('invite-dismiss').onclick = () => {
    $('invite').hidden = true;
    if (location.hash) history.replaceState(null, '', location.pathname);
  };
  $('invite-join').focus();
}
