// The joined room: joining (members, media, microphone), sending or listening, mute, role changes that start or
// stop the microphone, and leaving. The audio itself goes through `room.media`: the server's forwarding unit
// (sfu.js) or, when the server says so in session:success, the browser mesh (rtc.js).
import { ParlorError } from './sdk/parlor.js';
import { state, saved, server } from './state.js';
import { $, show, plural, announce, describeError } from './ui.js';
import { enterLobby, stopRoomsPolling } from './lobby.js';
import { renderTiles, renderTile } from './tiles.js';
import { updateRoomHead, updateHandButton } from './moderation.js';
import { loadChatHistory } from './chat.js';
import { startSpeakingDetector, setSpeaking } from './speaking.js';
import { Mesh } from './rtc.js';
import { Sfu } from './sfu.js';
import { enterSummary } from './audience.js';
import { E2eeRoom, canEncrypt } from './e2ee-room.js';

const CANNOT_ENCRYPT = 'This room is end-to-end encrypted, and this browser cannot encrypt audio (no encoded transforms).';

async function getMicrophone() {
  if (!navigator.mediaDevices?.getUserMedia) {
    return { stream: null, why: 'This page needs HTTPS (or localhost) to use the microphone: you can listen.' };
  }
  try {
    const stream = await navigator.mediaDevices.getUserMedia({
      audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true }, video: false,
    });
    return { stream, why: '' };
  } catch (error) {
    return { stream: null, why: `No microphone (${error.name}): you can listen.` };
  }
}

/** The room's audio, as the server's session:success asked: one connection to the server, or one per member. */
function createMedia(current) {
  const options = {
    cid: current.cid, memberId: current.memberId, iceServers: state.session.iceServers,
    send: (type, body) => state.connection.request(type, body),
    onChange: (id) => { if (state.room === current) id ? renderTile(id) : renderTiles(); },
    onBlocked: () => { if (state.room === current) $('play-audio').hidden = false; },
    e2ee: current.e2ee,
  };
  const { media } = state.session;
  return media.mode === 'sfu' ? new Sfu({ ...options, slots: media.slots }) : new Mesh(options);
}

/**
 * conversation:join, saying we encrypt when the room is known to be encrypted (the lobby's list says so) or the server
 * says it must be: a shared link does not tell.
 */
async function requestJoin(connection, cid, encrypted) {
  if (encrypted && !canEncrypt()) throw new ParlorError('room:error:encryption-required', CANNOT_ENCRYPT);
  try {
    return await connection.request('conversation:join', encrypted ? { cid, e2ee: true } : { cid });
  } catch (error) {
    if (error.code !== 'room:error:encryption-required' || encrypted) throw error;
    if (!canEncrypt()) throw new ParlorError(error.code, CANNOT_ENCRYPT);
    return connection.request('conversation:join', { cid, e2ee: true });
  }
}

/** An encrypted room's keys, before any audio flows: frames are never sent unencrypted. */
async function startEncryption(current) {
  const memberOf = (id) => current.members.get(id);
  const me = memberOf(current.memberId);
  current.e2ee = await E2eeRoom.start({
    cid: current.cid, memberId: current.memberId,
    userId: me?.user?.id || saved.name,
    others: [...current.members.keys()].filter((id) => id !== current.memberId),
    userIdOf: (id) => memberOf(id)?.user?.id || null,
    send: (type, body) => state.connection.request(type, body),
    onChange: (id) => { if (state.room === current) renderTile(id); },
  });
  state.lastE2ee = current.e2ee;  // the test hook reads a left room's keys too
}

export async function joinRoom(cid, displayName, { e2ee: encrypted = false } = {}) {
  const { connection } = state;
  if (connection?.state !== 'connected') {
    announce('Not connected to the server yet; try again in a moment.');
    return;
  }
  if (state.room?.cid) return;
  let reply;
  try {
    reply = await requestJoin(connection, cid, encrypted);
  } catch (error) {
    announce(`Could not join: ${describeError(error)}`);
    if (location.hash) history.replaceState(null, '', location.pathname);
    return;
  }
  stopRoomsPolling();
  const current = {
    cid,
    displayName: displayName || cid,
    memberId: reply.member_id,
    lastEventId: reply.last_event_id || 0,
    // handAt: when the hand went up (ms, orders the queue of hands), null when it is down.
    members: new Map(reply.members.map((m, index) => [m.member_id, {
      ...m, speaking: false, handAt: m.hand_raised ? (Date.parse(m.hand_raised_at) || index) : null,
    }])),
    mode: reply.mode || reply.room?.mode || 'open',
    locked: !!(reply.locked ?? reply.room?.locked),
    names: new Map(),       // member_id → name, also of members who left (chat senders)
    tiles: new Map(),
    sending: false,
    muted: false,
    muteRequests: 0,        // our own mute changes on the way: their echoes are not news
    stream: null,
    detector: null,
    media: null,            // Sfu or Mesh
    audience: null,         // summary presence of a big stage room: see audience.js
    recording: reply.recording || null,  // {recording_id, by, started_at} while the room is recorded
    encrypted: !!(reply.e2ee ?? reply.room?.e2ee ?? reply.properties?.e2ee),
    e2ee: null,             // E2eeRoom (e2ee-room.js) in an encrypted room
    liveStream: reply.stream || null,    // {public, listeners}: who listens through GET /rooms/{id}/live.ogg
  };
  state.room = current;
  const me = current.members.get(current.memberId);
  if (me && reply.role) me.role = reply.role;
  history.replaceState(null, '', `#${encodeURIComponent(cid)}`);
  $('room-title').textContent = current.displayName;
  $('room-note').textContent = 'Connecting audio…';
  $('tiles').replaceChildren();
  $('audience').replaceChildren();
  $('chat-log').replaceChildren();
  $('chat-empty').hidden = false;
  $('play-audio').hidden = true;
  updateMuteButton();
  updateRoomHead();
  show('room-view');
  // The room's name when we came by id (and its mode from a server whose join reply does not say).
  if (!displayName || reply.mode === undefined) server.room(cid, { token: saved.token })
    .then((r) => {
      if (state.room !== current) return;
      if (!displayName) $('room-title').textContent = current.displayName = r.display_name;
      current.mode = r.mode || r.properties?.mode || current.mode;
      if (r.locked !== undefined) current.locked = !!r.locked;
      updateRoomHead();
      renderTiles();
    })
    .catch(() => {});
  if (current.encrypted) {
    try {
      await startEncryption(current);
    } catch (error) {
      if (state.room === current) leaveRoom({ tellServer: true, message: `Could not set up encryption: ${describeError(error)}` });
      return;
    }
    if (state.room !== current) { current.e2ee.close(); return; }
  }
  loadChatHistory(current, current.lastEventId);
  if (reply.presence === 'summary') enterSummary(current, reply.audience_count ?? 0, reply.members);

  current.media = createMedia(current);
  for (const member of current.members.values()) {
    if (!member.media?.audio_settings?.enabled) current.media.silence(member.member_id, true);
  }
  renderTiles();
  announce(`You joined ${current.displayName}.`);

  // Send audio if our role may speak, we have a microphone and the room has room for another sender; otherwise
  // listen (the audience of a stage room is not even asked for the microphone).
  if (maySpeak(current.members.get(current.memberId))) {
    await startSending(current);
  } else {
    $('room-note').textContent = 'You are in the audience. Raise your hand to ask to speak.';
  }
  if (state.room !== current) return;
  current.media.start(current.sending ? current.stream : null);
  for (const id of current.members.keys()) current.media.connectTo(id);
  renderTiles();
}

function maySpeak(member) {
  return member?.role !== 'listener';
}

/** Microphone on and audio:enable: on joining, and when a moderator brings us on stage. */
export async function startSending(current) {
  if (current.sending || current.startingToSend) return;
  current.startingToSend = true;
  const { stream, why } = await getMicrophone();
  current.startingToSend = false;
  if (state.room !== current) { stream?.getTracks().forEach((t) => t.stop()); return; }
  let note = why;
  if (stream) {
    try {
      await state.connection.request('audio:enable', { cid: current.cid });
      current.sending = true;
      current.stream = stream;
    } catch (error) {
      stream.getTracks().forEach((t) => t.stop());
      note = error.code === 'media:error:too-many-senders'
        ? `This room has its maximum of ${plural(state.session.maxSenders, 'speaker')}: you are listening.`
        : `Could not turn on your microphone (${describeError(error)}): you are listening.`;
    }
  }
  if (state.room !== current) { stream?.getTracks().forEach((t) => t.stop()); return; }
  const me = current.members.get(current.memberId);
  if (current.sending && me?.media?.audio_settings?.muted) setMuted(true, { tellServer: false });
  if (current.sending) current.detector = startSpeakingDetector(current);
  $('room-note').textContent = note;
  updateMuteButton();
  if (current.sending) current.media?.setLocalStream(current.stream);  // a no-op before the media has started
}

/** Moved to the audience: the server already stopped our audio; stop the microphone too. */
export function stopSending(current) {
  if (!current.sending) return;
  setSpeaking(false);
  current.sending = false;
  current.muted = false;
  current.detector?.stop();
  current.detector = null;
  current.media?.setLocalStream(null);
  current.stream?.getTracks().forEach((t) => t.stop());
  current.stream = null;
  updateMuteButton();
}

/** Leaves the room: tells the server (unless it already ended the membership) and goes back to the lobby. */
export function leaveRoom({ tellServer, message } = {}) {
  const current = state.room;
  if (!current?.cid) return;
  state.room = null;
  current.detector?.stop();
  current.media?.close({ tellServer });
  current.e2ee?.close();
  if (tellServer) state.connection?.request('conversation:leave', { cid: current.cid }).catch(() => {});
  current.stream?.getTracks().forEach((t) => t.stop());
  history.replaceState(null, '', location.pathname);
  enterLobby();
  announce(message || `You left ${current.displayName}.`);
}

export function setMuted(muted, { tellServer = true } = {}) {
  const { room } = state;
  if (!room?.sending) return;
  room.muted = muted;
  const track = room.stream?.getAudioTracks()[0];
  if (track) track.enabled = !muted;  // a disabled track sends silence
  const me = room.members.get(room.memberId);
  if (me) me.media = { audio_settings: { ...(me.media?.audio_settings || {}), enabled: true, muted } };
  if (muted) setSpeaking(false);
  if (tellServer) {
    announce(muted ? 'You are muted.' : 'You are unmuted.');
    room.muteRequests += 1;
    state.connection.request(muted ? 'audio:mute:on' : 'audio:mute:off', { cid: room.cid })
      .catch((error) => announce(`Could not ${muted ? 'mute' : 'unmute'}: ${error.message}`))
      .finally(() => { room.muteRequests -= 1; });
  }
  updateMuteButton();
  renderTile(room.memberId);
}

export function updateMuteButton() {
  const { room } = state;
  const button = $('mute');
  button.disabled = !room?.sending;
  button.textContent = room?.muted ? 'Unmute' : 'Mute';  // the name says what a press does
  button.dataset.muted = String(!!room?.muted);
  button.title = room?.sending ? '' : 'You are listening only';
  updateHandButton();
}

/** Our own role changed: on stage we start sending, back in the audience we stop. */
export function onMyRole(role) {
  const current = state.room;
  if (role === 'listener') {
    stopSending(current);
    $('room-note').textContent = 'You are in the audience. Raise your hand to ask to speak.';
    announce('A moderator moved you to the audience.');
  } else {
    announce(role === 'moderator' ? 'You are now a moderator.' : 'You are on stage: you can speak.');
    if (!current.sending) startSending(current);
  }
  renderTiles();
}

/** Browsers start sound only after a click or key press: on one, start whatever is waiting to play. */
export function unlockAudio() {
  for (const audio of document.querySelectorAll('audio')) {
    if (audio.srcObject && audio.paused) audio.play().catch(() => {});
  }
  state.room?.detector?.resume();
  $('play-audio').hidden = true;
}
