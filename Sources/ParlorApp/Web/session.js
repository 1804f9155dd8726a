// Signing in and the session: /auth, the WebSocket connection and its state line, an expired token renewed, and a
// reconnected socket resuming the room (or rejoining it when the server let the membership go).
import { api, ApiError, Connection } from './protocol.js';
import { state, saved } from './state.js';
import { $, show, announce } from './ui.js';
import { enterLobby, offerSharedRoom, stopRoomsPolling } from './lobby.js';
import { joinRoom, leaveRoom } from './room.js';
import { showPage } from './audience.js';
import { onEvent } from './events.js';

export async function signIn(name, code) {
  const body = saved.authBody(name, code);
  try {
    const reply = await api('POST', '/auth', { body });
    saved.set(reply.name, reply.jwt, reply.claim);
    startSession();
  } catch (error) {
    // A server started with --access code wants the access code too.
    const needsCode = error.code === 'auth:error:invalid-code'
      || (error.code === 'request:error:missing-field' && /^code\b/.test(error.message));
    if (!needsCode) throw error;
    $('login-code-field').hidden = false;
    $('login-code').focus();
    throw new ApiError(error.code, code ? 'The access code is wrong.' : 'This server needs an access code.');
  }
}

export function startSession() {
  $('who').hidden = false;
  $('who-name').textContent = saved.name;
  state.connection = new Connection(saved.token, { onState: showConnection, onEvent, onSession });
  state.connection.open();
  enterLobby();
  const wanted = decodeURIComponent(location.hash.slice(1));
  if (wanted) offerSharedRoom(wanted);
}

export function signOut(message) {
  if (state.room?.cid) leaveRoom({ tellServer: true });
  state.room = null;
  saved.clear();
  state.connection?.close();
  state.connection = null;
  stopRoomsPolling();
  $('who').hidden = true;
  showConnection('offline');
  show('login-view');
  if (message) announce(message);
}

function showConnection(connectionState) {
  const { connection } = state;
  $('connection').hidden = !connection;
  $('connection').dataset.state = connectionState;
  $('connection-text').textContent = connectionState;
  $('reconnect').hidden = connectionState !== 'offline' || !connection;
  if (connectionState === 'offline' && connection?.endReason) announce(`${connection.endReason} Reconnect to continue here.`);
  if (connectionState === 'reconnecting' || connectionState === 'offline') checkToken();
}

/**
 * A socket that keeps failing may hold an expired token (the server closes sessions when their token expires).
 * Get a fresh one for the same name, so the room resumes; if the server wants more than a name, sign out.
 */
let checkingToken = false;
async function checkToken() {
  if (checkingToken || !saved.token) return;
  checkingToken = true;
  try {
    await api('GET', '/rooms?page_size=1', { token: saved.token });
  } catch (error) {
    if (error.status === 401) await renewToken();
  } finally {
    checkingToken = false;
  }
}

export async function renewToken() {
  try {
    const reply = await api('POST', '/auth', { body: saved.authBody(saved.name) });
    saved.set(reply.name, reply.jwt, reply.claim);
    if (state.connection) {
      state.connection.token = reply.jwt;
      state.connection.retry();
    }
  } catch (error) {
    if (error.status) signOut('Your sign-in has expired. Please sign in again.');
  }
}

/** A (re)connected socket: resume the room we were in, or rejoin it if the server let our membership go. */
async function onSession(body, isReconnect) {
  const previous = state.session.id;
  state.session = {
    id: body.session_id, iceServers: body.ice_servers || [], maxSenders: body.max_audio_senders,
    // A server from before the SFU says nothing about media: it relays the mesh's rtc:* signalling.
    media: body.media?.mode === 'sfu' ? { mode: 'sfu', slots: body.media.slots || 8 } : { mode: 'mesh' },
  };
  state.room?.media?.setIceServers(state.session.iceServers);
  if (!isReconnect || !state.room?.cid || !previous) return;
  const current = state.room;
  try {
    const reply = await state.connection.request('session:resume', {
      session_id: previous, last_event_ids: { [current.cid]: current.lastEventId },
    });
    state.session.id = reply.session_id || state.session.id;
    // TURN credentials in ice_servers are time-limited: the resume hands out fresh ones.
    if (reply.ice_servers) state.session.iceServers = reply.ice_servers;
    if (state.room !== current) return;
    current.media?.setIceServers(state.session.iceServers);
    // An encrypted room's key messages are relayed, never stored: those sent while we were away (a rotation) are
    // lost to us, so we join afresh, as a new member every sender sends its key to.
    if (current.e2ee && (reply.resumed || []).some((r) => r.cid === current.cid)) {
      leaveRoom({ tellServer: true, message: 'Rejoining the encrypted room…' });
      joinRoom(current.cid, current.displayName, { e2ee: true });
      return;
    }
    if ((reply.resumed || []).some((r) => r.cid === current.cid)) {
      state.resumes += 1;
      current.media?.recover();
      // room:audience is not stored, so none was replayed: read the audience page shown again.
      if (current.audience) showPage(current, current.audience.pageIndex);
      announce('Reconnected.');
      return;
    }
  } catch (error) {
    if (state.room !== current) return;
    if (!(error instanceof ApiError) || error.code?.startsWith('connection:')) return;  // dropped again: next try
  }
  // The membership is gone: join afresh (a new member with new connections).
  const { cid, displayName } = current;
  leaveRoom({ tellServer: false, message: 'Rejoining the room…' });
  joinRoom(cid, displayName, { e2ee: current.encrypted });
}
