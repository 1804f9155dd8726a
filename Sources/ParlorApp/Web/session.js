// Signing in and the session: /auth, the WebSocket session (sdk/parlor.js: requests, reconnects, session:resume)
// and its state line, an expired token renewed, and what a resume means for the room: carry on, or join again.
import { ParlorError, Session } from './sdk/parlor.js';
import { state, saved, server } from './state.js';
import { $, show, announce } from './ui.js';
import { enterLobby, offerSharedRoom, stopRoomsPolling } from './lobby.js';
import { joinRoom, leaveRoom } from './room.js';
import { showPage } from './audience.js';
import { onEvent } from './events.js';

export async function signIn(name, code) {
  try {
    const reply = await server.auth(name, { code });
    saved.set(reply.name, reply.jwt);
    startSession();
  } catch (error) {
    // A server started with --access code wants the access code too.
    const needsCode = error.code === 'auth:error:invalid-code'
      || (error.code === 'request:error:missing-field' && /^code\b/.test(error.message));
    if (!needsCode) throw error;
    $('login-code-field').hidden = false;
    $('login-code').focus();
    throw new ParlorError(error.code, code ? 'The access code is wrong.' : 'This server needs an access code.');
  }
}

export function startSession() {
  $('who').hidden = false;
  $('who-name').textContent = saved.name;
  const connection = new Session(server, saved.token);
  state.connection = connection;
  connection.on('state', showConnection);
  connection.on('event', onEvent);
  connection.on('session', onSession);
  connection.on('resumed', onResumed);
  connection.on('error', (error) => console.warn('parlor: server error', error.code, error.detail));
  connection.open();
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

/** Why the server ended the session (4003, 4004, 4005), or null: reconnecting on our own would not help. */
function endReason(connection) {
  const error = connection?.endError;
  return error && !error.code.startsWith('client:') ? error.message : null;
}

function showConnection(connectionState) {
  const { connection } = state;
  $('connection').hidden = !connection;
  $('connection').dataset.state = connectionState;
  $('connection-text').textContent = connectionState;
  $('reconnect').hidden = connectionState !== 'offline' || !connection;
  if (connectionState === 'offline' && endReason(connection)) announce(`${endReason(connection)} Reconnect to continue here.`);
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
    await server.http('GET', '/rooms?page_size=1', { token: saved.token });
  } catch (error) {
    if (error.status === 401) await renewToken();
  } finally {
    checkingToken = false;
  }
}

export async function renewToken() {
  try {
    const reply = await server.auth(saved.name);
    saved.set(reply.name, reply.jwt);
    if (state.connection) {
      state.connection.token = reply.jwt;
      state.connection.retry();
    }
  } catch (error) {
    if (error.status) signOut('Your sign-in has expired. Please sign in again.');
  }
}

/** Every session:success: the session's media mode and ICE servers (TURN credentials are time-limited). */
function onSession(body) {
  state.session = {
    id: body.session_id, iceServers: body.ice_servers || [], maxSenders: body.max_audio_senders,
    // A server from before the SFU says nothing about media: it relays the mesh's rtc:* signalling.
    media: body.media?.mode === 'sfu' ? { mode: 'sfu', slots: body.media.slots || 8 } : { mode: 'mesh' },
  };
  state.room?.media?.setIceServers(state.session.iceServers);
}

/** The client resumed our rooms after a reconnect: carry on in the room, or join it afresh if it was lost. */
function onResumed({ resumed }) {
  const connection = state.connection;
  state.session.id = connection.sessionId;
  // The resume hands out fresh TURN credentials too.
  state.session.iceServers = connection.iceServers;
  const current = state.room;
  if (!current?.cid) return;
  current.media?.setIceServers(state.session.iceServers);
  if (resumed.includes(current.cid)) {
    // An encrypted room's key messages are relayed, never stored: those sent while we were away (a rotation) are
    // lost to us, so we join afresh, as a new member every sender sends its key to.
    if (current.e2ee) {
      leaveRoom({ tellServer: true, message: 'Rejoining the encrypted room…' });
      joinRoom(current.cid, current.displayName, { e2ee: true });
      return;
    }
    state.resumes += 1;
    current.media?.recover();
    // room:audience is not stored, so none was replayed: read the audience page shown again.
    if (current.audience) showPage(current, current.audience.pageIndex);
    announce('Reconnected.');
    return;
  }
  // The membership is gone: join afresh (a new member with new connections).
  const { cid, displayName } = current;
  leaveRoom({ tellServer: false, message: 'Rejoining the room…' });
  joinRoom(cid, displayName, { e2ee: current.encrypted });
}
