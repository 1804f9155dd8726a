// The room's events from the server, applied to the page: members coming and going, media state, hands, roles,
// the lock, chat, reactions, speaking, and the media signalling (rtc:* for the mesh, media:slots for the SFU).
import { state, isStage, amModerator, nameOf } from './state.js';
import { announce } from './ui.js';
import { leaveRoom, setMuted, stopSending, onMyRole } from './room.js';
import { renderTiles, renderTile } from './tiles.js';
import { updateRoomHead } from './moderation.js';
import { addChatMessage, showReaction } from './chat.js';
import { onAudience, onPresence, addListener, dropListener } from './audience.js';

export function onEvent(message) {
  const { room } = state;
  if (!room?.cid || message.cid !== room.cid) return;
  if (message.type.startsWith('rtc:') || message.type.startsWith('media:')) { room.media?.handle(message); return; }
  // Relayed, never stored: no event id. Only the keys' owner reads them (e2ee-room.js).
  if (message.type === 'e2ee:key') { room.e2ee?.receive(message.from, message.body); return; }
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
      // Summary presence: a listener's join (which moderators get in full) counts, and shows if the page has room.
      if (room.audience && (body.role || 'listener') === 'listener' && id !== room.memberId && !member) {
        room.audience.count += 1;
        addListener(room, { member_id: id, user: body.user, role: 'listener' });
        renderTiles();
        break;
      }
      if (!member) {
        room.media?.silence(id, true);  // until its member:media says it sends
        room.members.set(id, {
          member_id: id, user: body.user, role: body.role || (isStage() ? 'listener' : 'speaker'),
          media: { audio_settings: { enabled: false, muted: false } }, speaking: false, handAt: null,
        });
      }
      renderTiles();
      room.media?.connectTo(id);
      if (id !== room.memberId) announce(`${body.user?.name || 'Someone'} joined.`);
      break;
    case 'member:left':
      if (id === room.memberId) {
        const why = { kicked: 'You were removed from the room.', room_closed: 'The room was closed.', dropped: 'You were disconnected from the room.' }[body.reason];
        leaveRoom({ tellServer: false, message: why });
        return;
      }
      room.e2ee?.removeMember(id);  // our next key is one they never get
      if (room.audience && (!member || member.role === 'listener')) {
        // Summary presence: the stage and the hands are all known, so a member we do not have is a listener.
        room.audience.count = Math.max(0, room.audience.count - 1);
        dropListener(room, id);
        renderTiles();
        break;
      }
      room.members.delete(id);
      room.media?.remove(id);
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
      if (body.media) room.media?.silence(id, !body.media.audio_settings?.enabled);
      if (id === room.memberId && body.media && !body.media.audio_settings?.enabled) stopSending(room);
      renderTile(id);
      break;
    case 'member:hand':
      // Summary presence: a hand going up brings its listener into view; going down, off the page, out again.
      if (!member && room.audience && body.raised && body.user) {
        room.members.set(id, { member_id: id, user: body.user, role: 'listener', speaking: false, handAt: null,
          media: { audio_settings: { enabled: false, muted: false } } });
        return onEvent({ ...message, id: undefined });
      }
      if (member && room.audience && !body.raised && !room.audience.page.includes(id) && id !== room.memberId
          && member.role === 'listener') {
        room.members.delete(id);
        renderTiles();
        break;
      }
      if (member) member.handAt = body.raised ? (member.handAt ?? (Date.parse(message.timestamp) || Date.now())) : null;
      if (id === room.memberId) announce(body.raised ? 'Your hand is raised.' : 'Your hand is lowered.');
      else if (body.raised && amModerator()) announce(`${nameOf(id)} raised a hand.`);
      renderTiles();
      break;
    case 'member:role':
      if (room.audience) {
        // Summary presence: a listener brought on stage leaves the count (and comes into view), one sent back joins it.
        const was = member?.role || 'listener';
        if (was === 'listener' && body.role !== 'listener') room.audience.count = Math.max(0, room.audience.count - 1);
        if (was !== 'listener' && body.role === 'listener') room.audience.count += 1;
        if (!member && body.role !== 'listener' && body.user) {
          room.members.set(id, { member_id: id, user: body.user, role: body.role, speaking: false, handAt: null,
            media: { audio_settings: { enabled: false, muted: false } } });
          room.audience.page = room.audience.page.filter((shown) => shown !== id);
          return onEvent({ ...message, id: undefined });
        }
        if (body.role !== 'listener') room.audience.page = room.audience.page.filter((shown) => shown !== id);
      }
      if (!member) break;
      member.role = body.role;
      if (body.role !== 'listener') member.handAt = null;  // promoting lowers the hand
      if (id === room.memberId) onMyRole(body.role);
      else announce(`${nameOf(id)} is now ${body.role === 'listener' ? 'in the audience' : `a ${body.role}`}.`);
      renderTiles();
      break;
    case 'room:audience':
      onAudience(room, body);
      break;
    case 'room:presence':
      onPresence(room, body);
      break;
    case 'room:recording':
      room.recording = body.on ? { recording_id: body.recording_id, by: body.by ?? null, started_at: message.timestamp } : null;
      announce(body.on
        ? `This room is being recorded (started by ${body.by ? nameOf(body.by) : 'an admin'}).`
        : `Recording stopped${body.reason && body.reason !== 'requested' ? ` (${body.reason})` : ''}.`);
      updateRoomHead();
      break;
    case 'room:stream':
      room.liveStream = { public: !!body.public, listeners: body.listeners ?? 0 };
      updateRoomHead();
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
      // Our own tile follows our microphone at once (speaking.js); the server's word is for the others.
      if (member && id !== room.memberId) member.speaking = message.type === 'audio:speaking:on';
      renderTile(id);
      break;
  }
}
