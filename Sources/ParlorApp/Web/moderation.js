// Moderation: the menu on each tile (roles, hands, ban), the room header's tools (mute all, lock) and the raise-hand
// button. Every action is a request on the current room; its refusal is shown in words.
import { state, isStage, amModerator, nameOf } from './state.js';
import { $, announce, describeError } from './ui.js';

const BAN_SECONDS = 3600;

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

export function toggleTileMenu(id) {
  const { room } = state;
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

export function closeTileMenu(id) {
  const tile = state.room?.tiles.get(id);
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
export async function moderate(type, body, success) {
  const current = state.room;
  if (!current) return;
  try {
    await state.connection.request(type, { cid: current.cid, ...body });
    if (success) announce(success);
  } catch (error) {
    if (state.room === current) announce(`Could not do that: ${describeError(error)}`);
  }
}

export function updateRoomHead() {
  const { room } = state;
  if (!room) return;
  $('moderator-tools').hidden = !amModerator();
  $('room-locked').hidden = !room.locked;
  $('room-e2ee').hidden = !room.encrypted;
  // The server cannot record what it cannot hear.
  $('record').hidden = !!room.encrypted;
  $('lock').textContent = room.locked ? 'Unlock room' : 'Lock room';
  $('lock').setAttribute('aria-pressed', String(room.locked));
  // Everyone sees that the room is recorded, and by whom, before they unmute.
  const mark = $('recording-mark');
  mark.hidden = !room.recording;
  mark.textContent = room.recording
    ? `Recording · started by ${room.recording.by ? nameOf(room.recording.by) : 'an admin'}` : '';
  // Nobody listens unseen: how many hear the room through its live stream, and whether anyone with the link may.
  const live = room.liveStream;
  const liveMark = $('live-mark');
  liveMark.hidden = !live || (!live.public && !live.listeners);
  liveMark.textContent = live
    ? `${live.listeners} listening to the live stream${live.public ? ' · public' : ''}` : '';
  $('record').textContent = room.recording ? 'Stop recording' : 'Start recording';
  $('record').setAttribute('aria-pressed', String(!!room.recording));
}

export function updateHandButton() {
  const { room } = state;
  const me = room?.members.get(room.memberId);
  const button = $('hand');
  button.hidden = !isStage() || !me || me.role !== 'listener';
  const raised = me?.handAt != null;
  button.textContent = raised ? 'Lower hand' : 'Raise hand';
  button.setAttribute('aria-pressed', String(raised));
}
