// Parlor's web client: name → rooms → a room with everyone's tile, mute and leave. A stage room splits the tiles
// into the stage (moderators and speakers) and the audience (listeners, who raise hands); moderators get a menu on
// each tile and the room's mute-all and lock; every room has a chat and a reactions bar.
import { api, ApiError, Connection } from './protocol.js';
import { Mesh } from './rtc.js';

const $ = (id) => document.getElementById(id);
const ROOMS_POLL_MS = 4000;
const REACTION_SHOW_MS = 2500;   // how long an incoming reaction stays on its sender's tile
const CHAT_KEEP = 500;           // messages kept in the chat panel
const HISTORY_PAGES = 20;        // conversation:events pages read on join (1000 events each)
const BAN_SECONDS = 3600;

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

/** The server's refusals in words a person can act on; anything else keeps the server's own detail. */
function describeError(error) {
  const code = error?.code || '';
  if (code === 'member:error:not-allowed') return 'Only a moderator can do that (or your role does not allow it).';
  if (code === 'room:error:locked') return 'The room is locked: nobody new can join until a moderator unlocks it.';
  if (code === 'room:error:banned') return 'You are banned from this room for now.';
  if (code.endsWith(':error:rate-limited')) return 'That was too fast: wait a few seconds and try again.';
  if (code === 'message:error:invalid-text') return `The message was not accepted: ${error.message}`;
  return error?.message || String(error);
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
  const json = JSON.stringify(rooms.map((r) => [r.id, r.display_name, r.member_count, r.mode, r.locked]));
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
    kind.textContent = [r.mode === 'stage' ? 'stage' : '', r.locked ? 'locked' : ''].filter(Boolean).join(', ');
    kind.hidden = !kind.textContent;
    const join = document.createElement('button');
    join.type = 'button';
    join.textContent = 'Join';
    join.dataset.roomId = r.id;
    join.setAttribute('aria-label', `Join ${r.display_name}`);
    join.addEventListener('click', () => joinRoom(r.id, r.display_name));
    item.append(name, kind, count, join);
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
    announce(`Could not join: ${describeError(error)}`);
    if (location.hash) history.replaceState(null, '', location.pathname);
    return;
  }
  stopRoomsPolling();
  room = {
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
    mesh: null,
  };
  const current = room;
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
  if (!displayName || reply.mode === undefined) api('GET', `/rooms/${encodeURIComponent(cid)}`, { token: saved.token })
    .then((r) => {
      if (room !== current) return;
      if (!displayName) $('room-title').textContent = current.displayName = r.display_name;
      current.mode = r.mode || r.properties?.mode || current.mode;
      if (r.locked !== undefined) current.locked = !!r.locked;
      updateRoomHead();
      renderTiles();
    })
    .catch(() => {});
  loadChatHistory(current, current.lastEventId);

  current.mesh = new Mesh({
    cid, memberId: current.memberId, iceServers: session.iceServers,
    send: (type, body) => connection.request(type, body),
    onChange: (id) => { if (room === current) renderTile(id); },
    onBlocked: () => { if (room === current) $('play-audio').hidden = false; },
  });
  for (const member of current.members.values()) {
    if (!member.media?.audio_settings?.enabled) current.mesh.silence(member.member_id, true);
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
  if (room !== current) return;
  current.mesh.start(current.sending ? current.stream : null);
  for (const id of current.members.keys()) current.mesh.connectTo(id);
  renderTiles();
}

function maySpeak(member) {
  return member?.role !== 'listener';
}

/** Microphone on and audio:enable: on joining, and when a moderator brings us on stage. */
async function startSending(current) {
  if (current.sending || current.startingToSend) return;
  current.startingToSend = true;
  const { stream, why } = await getMicrophone();
  current.startingToSend = false;
  if (room !== current) { stream?.getTracks().forEach((t) => t.stop()); return; }
  let note = why;
  if (stream) {
    try {
      await connection.request('audio:enable', { cid: current.cid });
      current.sending = true;
      current.stream = stream;
    } catch (error) {
      stream.getTracks().forEach((t) => t.stop());
      note = error.code === 'media:error:too-many-senders'
        ? `This room has its maximum of ${plural(session.maxSenders, 'speaker')}: you are listening.`
        : `Could not turn on your microphone (${describeError(error)}): you are listening.`;
    }
  }
  if (room !== current) { stream?.getTracks().forEach((t) => t.stop()); return; }
  const me = current.members.get(current.memberId);
  if (current.sending && me?.media?.audio_settings?.muted) setMuted(true, { tellServer: false });
  if (current.sending) current.detector = startSpeakingDetector(current);
  $('room-note').textContent = note;
  updateMuteButton();
  if (current.sending) current.mesh?.setLocalStream(current.stream);  // a no-op before the mesh has started
}

/** Moved to the audience: the server already stopped our audio; stop the microphone too. */
function stopSending(current) {
  if (!current.sending) return;
  setSpeaking(false);
  current.sending = false;
  current.muted = false;
  current.detector?.stop();
  current.detector = null;
  current.mesh?.setLocalStream(null);
  current.stream?.getTracks().forEach((t) => t.stop());
  current.stream = null;
  updateMuteButton();
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
  updateHandButton();
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

const ROLE_WORDS = { moderator: 'moderator', speaker: 'speaker', listener: 'audience' };

function isStage() { return room?.mode === 'stage'; }
function amModerator() { return room?.members.get(room.memberId)?.role === 'moderator'; }
function nameOf(id) {
  return room?.members.get(id)?.user?.name || room?.names.get(id) || 'someone';
}

/**
 * Puts every tile in its list: in a stage room listeners go to the audience, raised hands first in the order they
 * were raised. Nodes are moved only when the order changed, so keyboard focus stays where it is.
 */
function renderTiles() {
  if (!room) return;
  for (const [id, tile] of room.tiles) {
    if (!room.members.has(id)) { tile.remove(); room.tiles.delete(id); }
  }
  const stage = [];
  const audience = [];
  for (const member of room.members.values()) {
    (isStage() && member.role === 'listener' ? audience : stage).push(member);
  }
  audience.sort((a, b) => (a.handAt ?? Infinity) - (b.handAt ?? Infinity));
  let hands = 0;
  for (const member of room.members.values()) member.handNumber = null;
  for (const member of audience) if (member.handAt != null) member.handNumber = ++hands;
  for (const id of room.members.keys()) renderTile(id);
  placeTiles($('tiles'), stage);
  placeTiles($('audience'), audience);
  $('stage-title').hidden = !isStage();
  $('audience-section').hidden = !isStage();
  $('tiles').setAttribute('aria-label', isStage() ? 'On stage' : 'People in this room');
  $('audience-title').textContent = audience.length ? `Audience (${audience.length})` : 'Audience';
  $('room-count').textContent = room.members.size === 1 ? 'Just you so far' : `${room.members.size} people`;
  updateRoomHead();
  updateHandButton();
}

function placeTiles(list, members) {
  const tiles = members.map((m) => room.tiles.get(m.member_id)).filter(Boolean);
  const current = [...list.children];
  if (tiles.length === current.length && tiles.every((tile, i) => tile === current[i])) return;
  const focused = document.activeElement;
  list.append(...tiles);
  if (focused && focused !== document.activeElement && document.contains(focused)) focused.focus();
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
    const button = tile.querySelector('.menu-button');
    button.addEventListener('click', () => toggleTileMenu(id));
    const menu = tile.querySelector('.tile-menu');
    menu.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') { closeTileMenu(id); button.focus(); }
    });
    // Tabbing out of an open menu closes it.
    menu.addEventListener('focusout', (event) => { if (!menu.contains(event.relatedTarget)) closeTileMenu(id); });
  }
  const isMe = id === room.memberId;
  const name = member.user?.name || 'someone';
  const audio = member.media?.audio_settings || {};
  const peer = room.mesh?.peers.get(id);
  const linking = !isMe && (!peer || peer.pc.connectionState !== 'connected');
  const raised = member.handAt != null;
  const showRole = member.role === 'moderator' || (isStage() && member.role === 'speaker');
  tile.classList.toggle('me', isMe);
  tile.classList.toggle('speaking', !!member.speaking && !audio.muted);
  tile.classList.toggle('hand', raised);
  tile.dataset.muted = String(!!audio.muted);
  tile.dataset.role = member.role || '';
  tile.querySelector('.avatar').textContent = name.slice(0, 1).toUpperCase();
  tile.querySelector('.tile-name').textContent = isMe ? `${name} (you)` : name;
  tile.querySelector('.muted-mark').hidden = !audio.muted;
  // In the audience nobody sends: "listening" would say nothing the section does not.
  tile.querySelector('.listener-mark').hidden = !!audio.enabled || (isStage() && member.role === 'listener');
  tile.querySelector('.link-mark').hidden = !linking;
  tile.querySelector('.role-mark').hidden = !showRole;
  tile.querySelector('.role-mark').textContent = ROLE_WORDS[member.role] || '';
  const handMark = tile.querySelector('.hand-mark');
  handMark.hidden = !raised;
  handMark.querySelector('.hand-text').textContent = member.handNumber ? String(member.handNumber) : '';
  handMark.title = member.handNumber ? `Hand raised: number ${member.handNumber} in the queue` : 'Hand raised';
  const menu = tile.querySelector('.tile-menu');
  menu.hidden = isMe || !amModerator();
  if (menu.hidden) closeTileMenu(id);
  tile.querySelector('.menu-button').setAttribute('aria-label', `Moderate ${name}`);
  const words = [isMe ? `${name} (you)` : name];
  if (showRole) words.push(ROLE_WORDS[member.role]);
  if (raised) words.push(member.handNumber ? `hand raised (number ${member.handNumber})` : 'hand raised');
  if (audio.muted) words.push('muted');
  if (!audio.enabled && !(isStage() && member.role === 'listener')) words.push('listening');
  if (member.speaking && !audio.muted) words.push('speaking');
  tile.setAttribute('aria-label', words.join(', '));
}

// ---------- Moderation: the tile menu and the room header ----------

/** The actions a moderator can take on a member, for its current role and hand. */
function tileActions(member) {
  const id = member.member_id;
  const name = member.user?.name || 'someone';
  const actions = [];
  if (member.role === 'listener') actions.push(['Invite to speak', () => setRole(id, 'speaker')]);
  if (member.role === 'speaker') actions.push(['Make moderator', () => setRole(id, 'moderator')]);
  if (member.role !== 'listener') actions.push(['Move to audience', () => setRole(id, 'listener')]);
  if (member.role === 'moderator') actions.push(['Make speaker', () => setRole(id, 'speaker')]);
  if (member.handAt != null) actions.push(['Lower hand', () => moderate('member:hand:lower', { member_id: id }, `Lowered ${name}'s hand.`)]);
  if (member.user?.id) {
    actions.push(['Remove and ban for an hour', () => moderate('member:ban',
      { user_id: member.user.id, seconds: BAN_SECONDS }, `${name} was removed and banned for an hour.`), 'danger']);
  }
  return actions;
}

function toggleTileMenu(id) {
  const tile = room?.tiles.get(id);
  const member = room?.members.get(id);
  if (!tile || !member) return;
  const menu = tile.querySelector('.menu');
  if (!menu.hidden) { closeTileMenu(id); return; }
  for (const other of room.tiles.keys()) if (other !== id) closeTileMenu(other);
  menu.replaceChildren(...tileActions(member).map(([label, action, className]) => {
    const item = document.createElement('button');
    item.type = 'button';
    if (className) item.className = className;
    item.textContent = label;
    item.addEventListener('click', () => {
      closeTileMenu(id);
      tile.querySelector('.menu-button').focus();
      action();
    });
    return item;
  }));
  menu.hidden = false;
  tile.querySelector('.menu-button').setAttribute('aria-expanded', 'true');
  menu.firstElementChild?.focus();
}

function closeTileMenu(id) {
  const tile = room?.tiles.get(id);
  if (!tile) return;
  tile.querySelector('.menu').hidden = true;
  tile.querySelector('.menu-button').setAttribute('aria-expanded', 'false');
}

function setRole(memberId, role) {
  const name = nameOf(memberId);
  const said = { speaker: `${name} is now a speaker.`, listener: `${name} moved to the audience.`, moderator: `${name} is now a moderator.` };
  moderate('member:role', { member_id: memberId, role }, said[role]);
}

/** A request on the current room; its refusal is shown, its success announced. */
async function moderate(type, body, success) {
  const current = room;
  if (!current) return;
  try {
    await connection.request(type, { cid: current.cid, ...body });
    if (success) announce(success);
  } catch (error) {
    if (room === current) announce(`Could not do that: ${describeError(error)}`);
  }
}

function updateRoomHead() {
  if (!room) return;
  $('moderator-tools').hidden = !amModerator();
  $('room-locked').hidden = !room.locked;
  $('lock').textContent = room.locked ? 'Unlock room' : 'Lock room';
  $('lock').setAttribute('aria-pressed', String(room.locked));
}

function updateHandButton() {
  const me = room?.members.get(room.memberId);
  const button = $('hand');
  button.hidden = !isStage() || !me || me.role !== 'listener';
  const raised = me?.handAt != null;
  button.textContent = raised ? 'Lower hand' : 'Raise hand';
  button.setAttribute('aria-pressed', String(raised));
}

// ---------- Chat and reactions ----------

/** The stored chat up to `upTo` (the join's last event id); later messages arrive as events. */
async function loadChatHistory(current, upTo) {
  let since = 0;
  for (let page = 0; page < HISTORY_PAGES && since < upTo; page += 1) {
    let reply;
    try {
      reply = await connection.request('conversation:events', { cid: current.cid, since, page_size: 1000 });
    } catch (error) {
      if (room === current) announce(`Could not load the chat history: ${describeError(error)}`);
      return;
    }
    if (room !== current) return;
    for (const event of reply.events || []) {
      if (event.id > upTo) return;
      const body = event.body || {};
      if (event.type === 'member:joined' && body.user?.name) current.names.set(body.member_id || event.from, body.user.name);
      if (event.type === 'message:text') addChatMessage(event);
    }
    if (reply.cursor == null) return;
    since = Number(reply.cursor);
  }
}

/** One message:text event into the panel, in id order (history and live events may interleave). */
function addChatMessage(event) {
  const body = event.body || {};
  const log = $('chat-log');
  if (log.querySelector(`[data-id="${event.id}"]`)) return;
  const item = document.createElement('li');
  item.dataset.id = String(event.id);
  const sender = document.createElement('span');
  sender.className = 'chat-name';
  const senderId = body.member_id || event.from;
  sender.textContent = body.user?.name || nameOf(senderId);
  if (senderId === room?.memberId) item.classList.add('mine');
  const text = document.createElement('span');
  text.className = 'chat-text';
  text.textContent = body.text || '';
  item.append(sender, text);
  const later = [...log.children].find((other) => Number(other.dataset.id) > event.id);
  const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
  log.insertBefore(item, later || null);
  while (log.children.length > CHAT_KEEP) log.firstElementChild.remove();
  if (atBottom || senderId === room?.memberId) log.scrollTop = log.scrollHeight;
  $('chat-empty').hidden = true;
}

function showReaction(memberId, emoji) {
  const tile = room?.tiles.get(memberId);
  if (!tile) return;
  const bubble = tile.querySelector('.tile-reaction');
  bubble.textContent = emoji;
  bubble.hidden = false;
  // Restart the animation for a repeated reaction.
  bubble.classList.remove('pop');
  void bubble.offsetWidth;
  bubble.classList.add('pop');
  clearTimeout(bubble.timer);
  bubble.timer = setTimeout(() => { bubble.hidden = true; }, REACTION_SHOW_MS);
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
      if (body.user?.name) room.names.set(id, body.user.name);
      if (!member) {
        room.mesh?.silence(id, true);  // until its member:media says it sends
        room.members.set(id, {
          member_id: id, user: body.user, role: body.role || (isStage() ? 'listener' : 'speaker'),
          media: { audio_settings: { enabled: false, muted: false } }, speaking: false, handAt: null,
        });
      }
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
      // Whoever the server says is not sending is not played (a demoted speaker whose client kept sending).
      if (body.media) room.mesh?.silence(id, !body.media.audio_settings?.enabled);
      if (id === room.memberId && body.media && !body.media.audio_settings?.enabled) stopSending(room);
      renderTile(id);
      break;
    case 'member:hand':
      if (member) member.handAt = body.raised ? (member.handAt ?? (Date.parse(message.timestamp) || Date.now())) : null;
      if (id === room.memberId) announce(body.raised ? 'Your hand is raised.' : 'Your hand is lowered.');
      else if (body.raised && amModerator()) announce(`${nameOf(id)} raised a hand.`);
      renderTiles();
      break;
    case 'member:role':
      if (!member) break;
      member.role = body.role;
      if (body.role !== 'listener') member.handAt = null;  // promoting lowers the hand
      if (id === room.memberId) onMyRole(body.role);
      else announce(`${nameOf(id)} is now ${body.role === 'listener' ? 'in the audience' : `a ${body.role}`}.`);
      renderTiles();
      break;
    case 'room:locked':
      room.locked = !!body.locked;
      announce(room.locked ? 'The room is locked: nobody new can join.' : 'The room is unlocked.');
      updateRoomHead();
      break;
    case 'message:text':
      addChatMessage(message);
      break;
    case 'reaction':
      if (typeof body.emoji === 'string') showReaction(id, body.emoji);
      break;
    case 'audio:speaking:on':
    case 'audio:speaking:off':
      if (member && id !== room.memberId) member.speaking = message.type === 'audio:speaking:on';
      renderTile(id);
      break;
  }
}

/** Our own role changed: on stage we start sending, back in the audience we stop. */
function onMyRole(role) {
  const current = room;
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
    const mode = $('create-mode').value;
    // Only a stage room says so: an open room is created exactly as before.
    const body = mode === 'stage' ? { display_name: displayName, properties: { mode } } : { display_name: displayName };
    const created = await api('POST', '/rooms', { token: saved.token, body });
    input.value = '';
    await refreshRooms();
    await joinRoom(created.id, created.display_name);
  } catch (error) {
    announce(`Could not create the room: ${error.message}`);
  }
});

$('mute').addEventListener('click', () => setMuted(!room?.muted));
$('hand').addEventListener('click', () => {
  const raised = room?.members.get(room.memberId)?.handAt != null;
  moderate(raised ? 'member:hand:lower' : 'member:hand:raise', {});
});
$('mute-all').addEventListener('click', () => moderate('room:mute-all', {}, 'Everyone is muted.'));
$('lock').addEventListener('click', () => moderate(room?.locked ? 'room:unlock' : 'room:lock', {}));
$('chat-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const input = $('chat-text');
  const text = input.value.trim();
  const current = room;
  if (!text || !current) return;
  try {
    await connection.request('message:send', { cid: current.cid, text });
    if (input.value.trim() === text) input.value = '';
  } catch (error) {
    if (room === current) announce(`Your message was not sent: ${describeError(error)}`);
  }
});
$('reactions').addEventListener('click', (event) => {
  const emoji = event.target.closest('button[data-emoji]')?.dataset.emoji;
  if (emoji && room) moderate('reaction:send', { emoji });
});
document.addEventListener('click', (event) => {
  // A click outside an open tile menu closes it.
  if (!room || event.target.closest('.tile-menu')) return;
  for (const id of room.tiles.keys()) closeTileMenu(id);
});
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
  get role() { return room?.members.get(room.memberId)?.role || null; },
  get mode() { return room?.mode || null; },
  get locked() { return !!room?.locked; },
  get handRaised() { return room?.members.get(room.memberId)?.handAt != null; },
  get peers() {
    return Object.fromEntries([...(room?.mesh?.peers || new Map())].map(([id, peer]) => [id, peer.pc]));
  },
  /** Drops the socket as a network failure would, to exercise session:resume. */
  dropConnection() { connection?.socket?.close(4001, 'test drop'); },
  async inboundAudioStats() { return room?.mesh ? room.mesh.inboundAudioStats() : []; },
};
