// Parlor's web client: name → rooms → a room with everyone's tile, mute and leave.
import { api, ApiError, Connection } from './protocol.js';
import { Mesh } from './rtc.js';

const $ = (id) => document.getElementById(id);
const ROOMS_POLL_MS = 4000;

// Speaking detection on the local microphone: every 50 ms the RMS of the last ~46 ms feeds a peak-hold envelope
// (so short syllables count), and two thresholds with hold times give hysteresis.
const SPEAK_TICK_MS = 50;
const SPEAK_DECAY = 0.85;    // envelope kept per tick
const SPEAK_ON_LEVEL = 0.03;
const SPEAK_OFF_LEVEL = 0.015;
const SPEAK_ON_TICKS = 2;    // 100 ms above the on level
const SPEAK_OFF_TICKS = 10;  // 500 ms below the off level

// Name and token per tab, so two tabs can be two people. The claim secret /auth returns for a name is kept per
// name for the whole browser (localStorage): it is what gets this name's identity back while it is in use (a
// reload, another tab, a reconnect within the grace period); without it the server makes a separate identity.
const saved = {
  get name() { return sessionStorage.getItem('parlor.name'); },
  get token() { return sessionStorage.getItem('parlor.jwt'); },
  set(name, token, claim) {
    sessionStorage.setItem('parlor.name', name);
    sessionStorage.setItem('parlor.jwt', token);
    if (claim) localStorage.setItem(`parlor.claim.${name}`, claim);
  },
  clear() { sessionStorage.removeItem('parlor.name'); sessionStorage.removeItem('parlor.jwt'); },
  /** The /auth body for a name: with its claim when this browser has one (the server trims and NFC-normalises names). */
  authBody(name, code) {
    const claim = localStorage.getItem(`parlor.claim.${name.trim().normalize('NFC')}`);
    return { name, ...(code ? { code } : {}), ...(claim ? { claim } : {}) };
  },
};

let connection = null;
let session = { id: null, iceServers: [], maxSenders: null };
let room = null;            // the joined room, see joinRoom
let roomsTimer = null;
let lastRoomsJSON = '';
let resumes = 0;            // rooms resumed after a dropped socket (for the test hook)

// ---------- Small UI helpers ----------

function show(view) {
  for (const id of ['login-view', 'lobby-view', 'room-view']) $(id).hidden = id !== view;
  // Focus moves to the new view's heading (its name is read out), or to the field that needs typing.
  const focusTarget = { 'login-view': 'login-name', 'lobby-view': 'lobby-title', 'room-view': 'room-title' }[view];
  $(focusTarget)?.focus();
}

function plural(count, noun) {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function announce(text) {
  $('status').textContent = text;
}

function showConnection(state) {
  $('connection').hidden = !connection;
  $('connection').dataset.state = state;
  $('connection-text').textContent = state;
  $('reconnect').hidden = state !== 'offline' || !connection;
  if (state === 'reconnecting' || state === 'offline') checkToken();
}

// ---------- Sign in ----------

async function signIn(name, code) {
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

function startSession() {
  $('who').hidden = false;
  $('who-name').textContent = saved.name;
  connection = new Connection(saved.token, { onState: showConnection, onEvent: onEvent, onSession: onSession });
  connection.open();
  enterLobby();
  const wanted = decodeURIComponent(location.hash.slice(1));
  if (wanted) offerSharedRoom(wanted);
}

/**
 * A shared link (/#RM-…) names a room: show it and ask. Joining turns the microphone on, so nothing happens
 * until the user presses Join.
 */
async function offerSharedRoom(cid) {
  let displayName = cid;
  try {
    const shared = await api('GET', `/rooms/${encodeURIComponent(cid)}`, { token: saved.token });
    if (shared.closed_at) throw new ApiError('room:error:closed', 'that room has closed');
    displayName = shared.display_name || cid;
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
    joinRoom(cid, displayName);
  };
  $('invite-dismiss').onclick = () => {
    $('invite').hidden = true;
    if (location.hash) history.replaceState(null, '', location.pathname);
  };
  $('invite-join').focus();
}

function signOut(message) {
  if (room?.cid) leaveRoom({ tellServer: true });
  room = null;
  saved.clear();
  connection?.close();
  connection = null;
  stopRoomsPolling();
  $('who').hidden = true;
  showConnection('offline');
  show('login-view');
  if (message) announce(message);
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

async function renewToken() {
  try {
    const reply = await api('POST', '/auth', { body: saved.authBody(saved.name) });
    saved.set(reply.name, reply.jwt, reply.claim);
    if (connection) {
      connection.token = reply.jwt;
      connection.retry();
    }
  } catch (error) {
    if (error.status) signOut('Your sign-in has expired. Please sign in again.');
  }
}

// ---------- Lobby: the room list ----------

function enterLobby() {
  show('lobby-view');
  lastRoomsJSON = '';
  refreshRooms();
  clearInterval(roomsTimer);
  roomsTimer = setInterval(refreshRooms, ROOMS_POLL_MS);
}

function stopRoomsPolling() {
  clearInterval(roomsTimer);
  roomsTimer = null;
}

async function refreshRooms() {
  if (!saved.token) return;
  let rooms;
  try {
    rooms = await api('GET', '/rooms', { token: saved.token });
  } catch (error) {
    if (error.status === 401) renewToken();
    return;
  }
  const json = JSON.stringify(rooms.map((r) => [r.id, r.display_name, r.member_count]));
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
    const join = document.createElement('button');
    join.type = 'button';
    join.textContent = 'Join';
    join.dataset.roomId = r.id;
    join.setAttribute('aria-label', `Join ${r.display_name}`);
    join.addEventListener('click', () => joinRoom(r.id, r.display_name));
    item.append(name, count, join);
    return item;
  }));
  $('room-list-empty').hidden = rooms.length > 0;
  if (focusedId) list.querySelector(`[data-room-id="${CSS.escape(focusedId)}"]`)?.focus();
}

// ---------- Room ----------

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

async function joinRoom(cid, displayName) {
  if (connection?.state !== 'connected') {
    announce('Not connected to the server yet; try again in a moment.');
    return;
  }
  if (room?.cid) return;
  let reply;
  try {
    reply = await connection.request('conversation:join', { cid });
  } catch (error) {
    announce(`Could not join: ${error.message}`);
    if (location.hash) history.replaceState(null, '', location.pathname);
    return;
  }
  stopRoomsPolling();
  room = {
    cid,
    displayName: displayName || cid,
    memberId: reply.member_id,
    lastEventId: reply.last_event_id || 0,
    members: new Map(reply.members.map((m) => [m.member_id, { ...m, speaking: false }])),
    tiles: new Map(),
    sending: false,
    muted: false,
    muteRequests: 0,        // our own mute changes on the way: their echoes are not news
    stream: null,
    detector: null,
    mesh: null,
  };
  const current = room;
  history.replaceState(null, '', `#${encodeURIComponent(cid)}`);
  $('room-title').textContent = current.displayName;
  $('room-note').textContent = 'Connecting audio…';
  $('tiles').replaceChildren();
  $('play-audio').hidden = true;
  updateMuteButton();
  show('room-view');
  if (!displayName) api('GET', `/rooms/${encodeURIComponent(cid)}`, { token: saved.token })
    .then((r) => { if (room === current) $('room-title').textContent = current.displayName = r.display_name; })
    .catch(() => {});

  current.mesh = new Mesh({
    cid, memberId: current.memberId, iceServers: session.iceServers,
    send: (type, body) => connection.request(type, body),
    onChange: (id) => { if (room === current) renderTile(id); },
    onBlocked: () => { if (room === current) $('play-audio').hidden = false; },
  });
  renderTiles();
  announce(`You joined ${current.displayName}.`);

  // Send audio if we have a microphone and the room has room for another sender; otherwise listen.
  const { stream, why } = await getMicrophone();
  if (room !== current) { stream?.getTracks().forEach((t) => t.stop()); return; }
  let note = why;
  if (stream) {
    try {
      await connection.request('audio:enable', { cid });
      current.sending = true;
      current.stream = stream;
    } catch (error) {
      stream.getTracks().forEach((t) => t.stop());
      note = error.code === 'media:error:too-many-senders'
        ? `This room has its maximum of ${plural(session.maxSenders, 'speaker')}: you are listening.`
        : `Could not turn on your microphone (${error.message}): you are listening.`;
    }
  }
  if (room !== current) { stream?.getTracks().forEach((t) => t.stop()); return; }
  const me = current.members.get(current.memberId);
  if (current.sending && me?.media?.audio_settings?.muted) setMuted(true, { tellServer: false });
  if (current.sending) current.detector = startSpeakingDetector(current);
  $('room-note').textContent = note;
  updateMuteButton();
  current.mesh.start(current.sending ? current.stream : null);
  for (const id of current.members.keys()) current.mesh.connectTo(id);
  renderTiles();
}

/** Leaves the room: tells the server (unless it already ended the membership) and goes back to the lobby. */
function leaveRoom({ tellServer, message } = {}) {
  const current = room;
  if (!current?.cid) return;
  room = null;
  if (tellServer) connection?.request('conversation:leave', { cid: current.cid }).catch(() => {});
  current.detector?.stop();
  current.mesh?.close();
  current.stream?.getTracks().forEach((t) => t.stop());
  history.replaceState(null, '', location.pathname);
  enterLobby();
  announce(message || `You left ${current.displayName}.`);
}

function setMuted(muted, { tellServer = true } = {}) {
  if (!room?.sending) return;
  room.muted = muted;
  const track = room.stream?.getAudioTracks()[0];
  if (track) track.enabled = !muted;  // a disabled track sends silence
  const me = room.members.get(room.memberId);
  if (me) me.media = { audio_settings: { ...(me.media?.audio_settings || {}), enabled: true, muted } };
  if (muted) setSpeaking(false);
  if (tellServer) {
    announce(muted ? 'You are muted.' : 'You are unmuted.');
    const current = room;
    current.muteRequests += 1;
    connection.request(muted ? 'audio:mute:on' : 'audio:mute:off', { cid: current.cid })
      .catch((error) => announce(`Could not ${muted ? 'mute' : 'unmute'}: ${error.message}`))
      .finally(() => { current.muteRequests -= 1; });
  }
  updateMuteButton();
  renderTile(room.memberId);
}

function updateMuteButton() {
  const button = $('mute');
  button.disabled = !room?.sending;
  button.textContent = room?.muted ? 'Unmute' : 'Mute';  // the name says what a press does
  button.dataset.muted = String(!!room?.muted);
  button.title = room?.sending ? '' : 'You are listening only';
}

// ---------- Speaking detection ----------

function startSpeakingDetector(current) {
  const context = new AudioContext();
  context.resume().catch(() => {});
  const source = context.createMediaStreamSource(current.stream);
  const analyser = context.createAnalyser();
  analyser.fftSize = 2048;  // ~46 ms at 44.1 kHz: consecutive ticks see (nearly) all of the sound
  source.connect(analyser);
  const samples = new Float32Array(analyser.fftSize);
  let envelope = 0;
  let above = 0;
  let below = 0;
  const timer = setInterval(() => {
    analyser.getFloatTimeDomainData(samples);
    let sum = 0;
    for (const s of samples) sum += s * s;
    const rms = current.muted ? 0 : Math.sqrt(sum / samples.length);
    envelope = current.muted ? 0 : Math.max(rms, envelope * SPEAK_DECAY);
    above = envelope > SPEAK_ON_LEVEL ? above + 1 : 0;
    below = envelope < SPEAK_OFF_LEVEL ? below + 1 : 0;
    if (!current.speaking && above >= SPEAK_ON_TICKS) setSpeaking(true);
    else if (current.speaking && below >= SPEAK_OFF_TICKS) setSpeaking(false);
  }, SPEAK_TICK_MS);
  return {
    stop() { clearInterval(timer); context.close().catch(() => {}); },
    resume() { if (context.state === 'suspended') context.resume().catch(() => {}); },
  };
}

/** Our own speaking flag: shown at once, sent only when it changes. */
function setSpeaking(speaking) {
  if (!room || room.speaking === speaking) return;
  room.speaking = speaking;
  const me = room.members.get(room.memberId);
  if (me) me.speaking = speaking;
  renderTile(room.memberId);
  connection?.request(speaking ? 'audio:speaking:on' : 'audio:speaking:off', { cid: room.cid }).catch(() => {});
}

// ---------- Tiles ----------

function renderTiles() {
  if (!room) return;
  for (const [id, tile] of room.tiles) {
    if (!room.members.has(id)) { tile.remove(); room.tiles.delete(id); }
  }
  for (const id of room.members.keys()) renderTile(id);
  $('room-count').textContent = room.members.size === 1 ? 'Just you so far' : `${room.members.size} people`;
}

function renderTile(id) {
  if (!room) return;
  const member = room.members.get(id);
  if (!member) return;
  let tile = room.tiles.get(id);
  if (!tile) {
    tile = $('tile-template').content.firstElementChild.cloneNode(true);
    tile.dataset.memberId = id;
    room.tiles.set(id, tile);
    $('tiles').append(tile);
  }
  const isMe = id === room.memberId;
  const name = member.user?.name || 'someone';
  const audio = member.media?.audio_settings || {};
  const peer = room.mesh?.peers.get(id);
  const linking = !isMe && (!peer || peer.pc.connectionState !== 'connected');
  tile.classList.toggle('me', isMe);
  tile.classList.toggle('speaking', !!member.speaking && !audio.muted);
  tile.dataset.muted = String(!!audio.muted);
  tile.querySelector('.avatar').textContent = name.slice(0, 1).toUpperCase();
  tile.querySelector('.tile-name').textContent = isMe ? `${name} (you)` : name;
  tile.querySelector('.muted-mark').hidden = !audio.muted;
  tile.querySelector('.listener-mark').hidden = !!audio.enabled;
  tile.querySelector('.link-mark').hidden = !linking;
  const words = [isMe ? `${name} (you)` : name];
  if (audio.muted) words.push('muted');
  if (!audio.enabled) words.push('listening');
  if (member.speaking && !audio.muted) words.push('speaking');
  tile.setAttribute('aria-label', words.join(', '));
}

// ---------- Server messages ----------

function onEvent(message) {
  if (!room?.cid || message.cid !== room.cid) return;
  if (message.type.startsWith('rtc:')) { room.mesh?.handle(message); return; }
  if (typeof message.id === 'number') {
    if (message.id <= room.lastEventId) return;  // already seen (a replay overlapping what we had)
    room.lastEventId = message.id;
  }
  const body = message.body || {};
  const id = body.member_id || message.from;
  const member = room.members.get(id);
  switch (message.type) {
    case 'member:joined':
      if (!member) room.members.set(id, { member_id: id, user: body.user, media: { audio_settings: { enabled: false, muted: false } }, speaking: false });
      renderTiles();
      room.mesh?.connectTo(id);
      if (id !== room.memberId) announce(`${body.user?.name || 'Someone'} joined.`);
      break;
    case 'member:left':
      if (id === room.memberId) {
        const why = { kicked: 'You were removed from the room.', room_closed: 'The room was closed.', dropped: 'You were disconnected from the room.' }[body.reason];
        leaveRoom({ tellServer: false, message: why });
        return;
      }
      room.members.delete(id);
      room.mesh?.remove(id);
      renderTiles();
      announce(`${body.user?.name || 'Someone'} left.`);
      break;
    case 'member:media':
    case 'audio:mute:on':
    case 'audio:mute:off':
      if (member && body.media) member.media = body.media;
      // Muted by someone else (an admin): the server's word wins, so the microphone really goes quiet.
      if (id === room.memberId && room.sending && !room.muteRequests
          && !!body.media?.audio_settings?.muted !== room.muted) {
        setMuted(!!body.media?.audio_settings?.muted, { tellServer: false });
      }
      if (member && body.media?.audio_settings?.muted) member.speaking = false;
      renderTile(id);
      break;
    case 'audio:speaking:on':
    case 'audio:speaking:off':
      if (member && id !== room.memberId) member.speaking = message.type === 'audio:speaking:on';
      renderTile(id);
      break;
  }
}

/** A (re)connected socket: resume the room we were in, or rejoin it if the server let our membership go. */
async function onSession(body, isReconnect) {
  const previous = session.id;
  session = { id: body.session_id, iceServers: body.ice_servers || [], maxSenders: body.max_audio_senders };
  room?.mesh?.setIceServers(session.iceServers);
  if (!isReconnect || !room?.cid || !previous) return;
  const current = room;
  try {
    const reply = await connection.request('session:resume', {
      session_id: previous, last_event_ids: { [current.cid]: current.lastEventId },
    });
    session.id = reply.session_id || session.id;
    // TURN credentials in ice_servers are time-limited: the resume hands out fresh ones.
    if (reply.ice_servers) session.iceServers = reply.ice_servers;
    if (room !== current) return;
    current.mesh?.setIceServers(session.iceServers);
    if ((reply.resumed || []).some((r) => r.cid === current.cid)) {
      resumes += 1;
      current.mesh?.recover();
      announce('Reconnected.');
      return;
    }
  } catch (error) {
    if (room !== current) return;
    if (!(error instanceof ApiError) || error.code?.startsWith('connection:')) return;  // dropped again: next try
  }
  // The membership is gone: join afresh (a new member with new connections).
  const { cid, displayName } = current;
  leaveRoom({ tellServer: false, message: 'Rejoining the room…' });
  joinRoom(cid, displayName);
}

/** Browsers start sound only after a click or key press: on one, start whatever is waiting to play. */
function unlockAudio() {
  for (const audio of document.querySelectorAll('audio')) {
    if (audio.srcObject && audio.paused) audio.play().catch(() => {});
  }
  room?.detector?.resume();
  $('play-audio').hidden = true;
}

// ---------- Wiring ----------

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
    const created = await api('POST', '/rooms', { token: saved.token, body: { display_name: displayName } });
    input.value = '';
    await refreshRooms();
    await joinRoom(created.id, created.display_name);
  } catch (error) {
    announce(`Could not create the room: ${error.message}`);
  }
});

$('mute').addEventListener('click', () => setMuted(!room?.muted));
$('play-audio').addEventListener('click', unlockAudio);
$('leave').addEventListener('click', () => leaveRoom({ tellServer: true }));
$('sign-out').addEventListener('click', () => signOut('Signed out.'));
$('reconnect').addEventListener('click', () => connection?.retry());
window.addEventListener('online', () => connection?.retry());
document.addEventListener('pointerdown', unlockAudio);
document.addEventListener('keydown', unlockAudio);
window.addEventListener('pagehide', () => connection?.close());

if (saved.token) startSession();
else show('login-view');

// ---------- Test hook (used by Tests/browser) ----------

window.parlor = {
  get state() { return connection?.state || 'offline'; },
  get memberId() { return room?.memberId || null; },
  get roomId() { return room?.cid || null; },
  get sending() { return !!room?.sending; },
  get muted() { return !!room?.muted; },
  get resumes() { return resumes; },
  get iceServers() { return session.iceServers; },
  get members() { return room?.members ? [...room.members.values()] : []; },
  get peers() {
    return Object.fromEntries([...(room?.mesh?.peers || new Map())].map(([id, peer]) => [id, peer.pc]));
  },
  /** Drops the socket as a network failure would, to exercise session:resume. */
  dropConnection() { connection?.socket?.close(4001, 'test drop'); },
  async inboundAudioStats() { return room?.mesh ? room.mesh.inboundAudioStats() : []; },
};
