// A big stage room's audience in summary presence (docs/protocol.md, "Presence in big stage rooms"): the server
// sends listeners' joins and leaves as a count and a sample (room:audience), so the page keeps the stage and the
// raised hands in full and shows the audience as a count plus one page of faces, paged with conversation:members
// and role listener. `room.audience` is null in full presence; `room.members` then holds only the stage, the
// hands, ourselves and the page shown, so the page stays small whatever the room's size.
import { state } from './state.js';
import { $, announce, describeError } from './ui.js';
import { renderTiles } from './tiles.js';

export const AUDIENCE_PAGE_SIZE = 24;

function tracked(member, index = 0) {
  return { ...member, speaking: false, handAt: member.hand_raised ? (Date.parse(member.hand_raised_at) || index) : null };
}

/** Summary presence from a join reply or a room:presence switch: show the first page of the audience. */
export function enterSummary(room, count, listed = []) {
  room.audience = {
    count, page: [], starts: [null], pageIndex: 0, next: null, loading: null, pageSize: AUDIENCE_PAGE_SIZE,
  };
  // The join reply's first listeners stand in for the first page until conversation:members answers.
  room.audience.page = listed.filter((m) => m.role === 'listener' && m.member_id !== room.memberId)
    .slice(0, AUDIENCE_PAGE_SIZE).map((m) => m.member_id);
  prune(room);
  renderTiles();
  return showPage(room, 0);
}

/** Drops the listeners we no longer show: neither us, nor a raised hand, nor on the page. */
function prune(room) {
  const shown = new Set(room.audience.page);
  for (const [id, member] of room.members) {
    if (member.role === 'listener' && id !== room.memberId && member.handAt == null && !shown.has(id)) {
      room.members.delete(id);
    }
  }
}

/** Reads one page of the audience (index 0 is the first) and shows it. */
export async function showPage(room, index) {
  const { audience } = room;
  if (!audience || index < 0 || index >= audience.starts.length) return;
  const cursor = audience.starts[index];
  const loading = state.connection.request('conversation:members', {
    cid: room.cid, role: 'listener', page_size: AUDIENCE_PAGE_SIZE, ...(cursor ? { cursor } : {}),
  });
  audience.loading = loading;
  let reply;
  try {
    reply = await loading;
  } catch (error) {
    if (state.room === room && room.audience === audience) announce(`Could not list the audience: ${describeError(error)}`);
    return;
  }
  if (state.room !== room || room.audience !== audience || audience.loading !== loading) return;  // superseded
  audience.loading = null;
  audience.pageIndex = index;
  audience.next = reply.cursor || null;
  audience.starts.length = index + 1;
  if (audience.next) audience.starts.push(audience.next);
  audience.page = reply.members.map((m) => m.member_id);
  reply.members.forEach((m, i) => {
    const known = room.members.get(m.member_id);
    room.members.set(m.member_id, known ? { ...known, ...m, speaking: known.speaking, handAt: known.handAt } : tracked(m, i));
  });
  prune(room);
  renderTiles();
}

/** The next page; when listeners arrived after the last page was read, that page is read again for its cursor. */
export async function nextPage(room) {
  const { audience } = room;
  if (!audience) return;
  if (!audience.next && hasMore(room)) await showPage(room, audience.pageIndex);
  if (room.audience === audience && audience.next) await showPage(room, audience.pageIndex + 1);
}

export function hasMore(room) {
  const { audience } = room;
  return !!audience && (!!audience.next || audience.count > (audience.pageIndex + 1) * AUDIENCE_PAGE_SIZE);
}

/** room:audience: the new count, and the sample's arrivals and departures on the page shown. */
export function onAudience(room, body) {
  const { audience } = room;
  if (!audience) return;
  if (typeof body.count === 'number') audience.count = body.count;
  if (typeof body.last_event_id === 'number') room.lastEventId = Math.max(room.lastEventId, body.last_event_id);
  for (const id of body.left || []) dropListener(room, id);
  for (const member of body.joined || []) addListener(room, { ...member, role: 'listener' });
  renderTiles();
  // The sample is a dozen at most: when the last page has room and the count says more listeners than it shows
  // exist past it, that one page is read again.
  const shownThrough = audience.pageIndex * audience.pageSize + audience.page.length;
  if (!audience.next && !audience.loading && audience.page.length < audience.pageSize && audience.count > shownThrough) {
    showPage(room, audience.pageIndex);
  }
}

/** A listener who joined: on the page shown when it is the last page and has room (else a later page has it). */
export function addListener(room, member) {
  const { audience } = room;
  if (!audience || member.member_id === room.memberId || audience.page.includes(member.member_id)) return;
  if (audience.next || audience.page.length >= AUDIENCE_PAGE_SIZE) return;
  audience.page.push(member.member_id);
  if (!room.members.has(member.member_id)) {
    room.members.set(member.member_id, tracked({ media: { audio_settings: { enabled: false, muted: false } }, ...member }));
  }
}

export function dropListener(room, id) {
  const { audience } = room;
  if (!audience) return;
  audience.page = audience.page.filter((shown) => shown !== id);
  const member = room.members.get(id);
  if (member && id !== room.memberId && member.role === 'listener') room.members.delete(id);
}

/** room:presence: into summary with the first page, or back to full with the whole member list read again. */
export async function onPresence(room, body) {
  if (body.mode === 'summary' && !room.audience) {
    const onStage = [...room.members.values()].filter((m) => m.role !== 'listener').length;
    const count = Math.max(0, (body.count ?? room.members.size) - onStage);
    announce('The audience is large: it is shown as a count and pages of people.');
    await enterSummary(room, count, [...room.members.values()]);
  } else if (body.mode === 'full' && room.audience) {
    room.audience = null;
    await readAllMembers(room);
  }
}

/** Full presence again: every joined member, a page of 1,000 at a time, keeping what we know of each. */
async function readAllMembers(room) {
  const all = [];
  let cursor = null;
  try {
    do {
      const reply = await state.connection.request('conversation:members', {
        cid: room.cid, page_size: 1000, ...(cursor ? { cursor } : {}),
      });
      all.push(...reply.members);
      cursor = reply.cursor || null;
    } while (cursor);
  } catch (error) {
    if (state.room === room) announce(`Could not list the members: ${describeError(error)}`);
    return;
  }
  if (state.room !== room || room.audience) return;  // left, or in summary again meanwhile
  const members = new Map();
  all.forEach((m, i) => {
    const known = room.members.get(m.member_id);
    members.set(m.member_id, known ? { ...known, ...m, speaking: known.speaking, handAt: known.handAt } : tracked(m, i));
  });
  room.members = members;
  for (const member of members.values()) {
    if (!member.media?.audio_settings?.enabled) room.media?.silence(member.member_id, true);
    room.media?.connectTo(member.member_id);
  }
  renderTiles();
}

/** The pager's buttons (wired once by app.js). */
export function setUpAudiencePager() {
  $('audience-previous').addEventListener('click', () => {
    const room = state.room;
    if (room?.audience) showPage(room, room.audience.pageIndex - 1);
  });
  $('audience-next').addEventListener('click', () => { if (state.room) nextPage(state.room); });
}
