// Parlor's web client: name → rooms → a room with everyone's tile, mute and leave. A stage room splits the tiles
// into the stage (moderators and speakers) and the audience (listeners, who raise hands); moderators get a menu on
// each tile and the room's mute-all and lock; every room has a chat and a reactions bar.
//
// This file wires the page's controls to the modules: session.js (sign-in, connection, resume), lobby.js (room
// list, shared links), room.js (joining, microphone, mute, leaving), tiles.js, moderation.js, chat.js, events.js
// (server events), and the audio: sfu.js (one connection to the server) or rtc.js (the mesh).
import { state, saved, server } from './state.js';
import { $, show, announce } from './ui.js';
import { handle } from './intents.js';
import { signIn, signOut, startSession, renewToken } from './session.js';
import { refreshRooms, isEncrypted } from './lobby.js';
import { canEncrypt } from './e2ee-room.js';
import { joinRoom, leaveRoom, setMuted, unlockAudio } from './room.js';
import { closeTileMenu, moderate } from './moderation.js';
import { sendChat } from './chat.js';
import { setUpAudiencePager } from './audience.js';
import './testhook.js';

// The lobby's requests (intents.js): it imports neither room.js nor session.js.
handle('join-room', joinRoom);
handle('renew-token', renewToken);
setUpAudiencePager();
if (!canEncrypt()) {
  $('create-e2ee').disabled = true;
  $('create-e2ee-field').title = 'This browser cannot encrypt audio (no encoded transforms).';
}

$('login-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const button = event.submitter;
  if (button) button.disabled = true;
  try {
    await signIn($('login-name').value.trim(), $('login-code').value);
  } catch (error) {
    announce(`Could not sign in: ${error.message}`);
  } finally {
    if (button) button.disabled = false;
  }
});

$('create-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const input = $('create-name');
  const displayName = input.value.trim();
  if (!displayName) return;
  try {
    const mode = $('create-mode').value;
    // Only a stage or an encrypted room says so: an open room is created exactly as before.
    const properties = {
      ...(mode === 'stage' ? { mode } : {}),
      ...($('create-e2ee').checked ? { e2ee: true } : {}),
    };
    const created = await server.createRoom(displayName, {
      token: saved.token, properties: Object.keys(properties).length ? properties : undefined,
    });
    input.value = '';
    await refreshRooms();
    await joinRoom(created.id, created.display_name, { e2ee: isEncrypted(created) });
  } catch (error) {
    announce(`Could not create the room: ${error.message}`);
  }
});

$('mute').addEventListener('click', () => setMuted(!state.room?.muted));
$('hand').addEventListener('click', () => {
  const { room } = state;
  const raised = room?.members.get(room.memberId)?.handAt != null;
  moderate(raised ? 'member:hand:lower' : 'member:hand:raise', {});
});
$('mute-all').addEventListener('click', () => moderate('room:mute-all', {}, 'Everyone is muted.'));
$('lock').addEventListener('click', () => moderate(state.room?.locked ? 'room:unlock' : 'room:lock', {}));
$('record').addEventListener('click', () => moderate(state.room?.recording ? 'room:record:stop' : 'room:record:start', {}));
$('chat-form').addEventListener('submit', (event) => {
  event.preventDefault();
  sendChat($('chat-text'));
});
$('reactions').addEventListener('click', (event) => {
  const emoji = event.target.closest('button[data-emoji]')?.dataset.emoji;
  if (emoji && state.room) moderate('reaction:send', { emoji });
});
document.addEventListener('click', (event) => {
  // A click outside an open tile menu closes it.
  if (!state.room || event.target.closest('.tile-menu')) return;
  for (const id of state.room.tiles.keys()) closeTileMenu(id);
});
$('play-audio').addEventListener('click', unlockAudio);
$('leave').addEventListener('click', () => leaveRoom({ tellServer: true }));
$('sign-out').addEventListener('click', () => signOut('Signed out.'));
$('reconnect').addEventListener('click', () => state.connection?.retry());
window.addEventListener('online', () => state.connection?.retry());
document.addEventListener('pointerdown', unlockAudio);
document.addEventListener('keydown', unlockAudio);
window.addEventListener('pagehide', () => state.connection?.close());

if (saved.token) startSession();
else show('login-view');
