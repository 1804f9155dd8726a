// Everyone's tile: name, avatar, and marks for muted, listening, connecting, role, raised hand and speaking. In a
// stage room the tiles split into the stage (moderators and speakers) and the audience (listeners).
import { state, isStage, amModerator } from './state.js';
import { $ } from './ui.js';
import { toggleTileMenu, closeTileMenu, updateRoomHead, updateHandButton } from './moderation.js';

const ROLE_WORDS = { moderator: 'moderator', speaker: 'speaker', listener: 'audience' };

/**
 * Puts every tile in its list: in a stage room listeners go to the audience, raised hands first in the order they
 * were raised. Nodes are moved only when the order changed, so keyboard focus stays where it is.
 */
export function renderTiles() {
  const { room } = state;
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
  if (room.audience) orderSummaryAudience(audience);
  let hands = 0;
  for (const member of room.members.values()) member.handNumber = null;
  for (const member of audience) if (member.handAt != null) member.handNumber = ++hands;
  for (const id of room.members.keys()) renderTile(id);
  placeTiles($('tiles'), stage);
  placeTiles($('audience'), audience);
  $('stage-title').hidden = !isStage();
  $('audience-section').hidden = !isStage();
  $('tiles').setAttribute('aria-label', isStage() ? 'On stage' : 'People in this room');
  const audienceCount = room.audience ? room.audience.count : audience.length;
  $('audience-title').textContent = audienceCount ? `Audience (${audienceCount.toLocaleString('en-US')})` : 'Audience';
  const people = stage.length + audienceCount;
  $('room-count').textContent = people <= 1 ? 'Just you so far' : `${people.toLocaleString('en-US')} people`;
  renderPager();
  updateRoomHead();
  updateHandButton();
}

/**
 * In summary presence the audience shown is the raised hands (in the order raised), ourselves, then the page of
 * listeners in join order as conversation:members listed them.
 */
function orderSummaryAudience(audience) {
  const { room } = state;
  const position = new Map(room.audience.page.map((id, i) => [id, i]));
  const rank = (m) => (m.handAt != null ? -2 : m.member_id === room.memberId ? -1 : position.get(m.member_id) ?? Number.MAX_SAFE_INTEGER);
  audience.sort((a, b) => rank(a) - rank(b) || (a.handAt ?? 0) - (b.handAt ?? 0));
}

/** "Showing 25–48 of 4,210" and the previous and next buttons, in summary presence only. */
function renderPager() {
  const { audience } = state.room;
  $('audience-pager').hidden = !audience;
  if (!audience) return;
  const first = audience.pageIndex * audience.pageSize;
  const number = (n) => n.toLocaleString('en-US');
  $('audience-range').textContent = audience.page.length
    ? `Showing ${number(first + 1)}–${number(first + audience.page.length)} of ${number(audience.count)}`
    : `${number(audience.count)} listening`;
  $('audience-previous').disabled = audience.pageIndex === 0;
  $('audience-next').disabled = !audience.next && audience.count <= first + audience.pageSize;
}

function placeTiles(list, members) {
  const tiles = members.map((m) => state.room.tiles.get(m.member_id)).filter(Boolean);
  const current = [...list.children];
  if (tiles.length === current.length && tiles.every((tile, i) => tile === current[i])) return;
  const focused = document.activeElement;
  list.append(...tiles);
  if (focused && focused !== document.activeElement && document.contains(focused)) focused.focus();
}

function createTile(id) {
  const tile = $('tile-template').content.firstElementChild.cloneNode(true);
  tile.dataset.memberId = id;
  state.room.tiles.set(id, tile);
  $('tiles').append(tile);
  const button = tile.querySelector('.menu-button');
  button.addEventListener('click', () => toggleTileMenu(id));
  const menu = tile.querySelector('.tile-menu');
  menu.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') { closeTileMenu(id); button.focus(); }
  });
  // Tabbing out of an open menu closes it.
  menu.addEventListener('focusout', (event) => { if (!menu.contains(event.relatedTarget)) closeTileMenu(id); });
  return tile;
}

export function renderTile(id) {
  const { room } = state;
  if (!room) return;
  const member = room.members.get(id);
  if (!member) return;
  const tile = room.tiles.get(id) || createTile(id);
  const isMe = id === room.memberId;
  const name = member.user?.name || 'someone';
  const audio = member.media?.audio_settings || {};
  const linking = !isMe && !room.media?.isLinked(id);
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
  renderSafety(tile, id);
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
  const identity = room.e2ee?.identityOf(id);
  if (identity?.status === 'changed') words.push('new identity');
  tile.setAttribute('aria-label', words.join(', '));
}

/** An encrypted room: the member's safety code, and a warning when its identity key is not the one we knew. */
function renderSafety(tile, id) {
  const { room } = state;
  const box = tile.querySelector('.tile-safety');
  const identity = room.e2ee?.identityOf(id);
  box.hidden = !room.encrypted;
  if (!room.encrypted) return;
  const code = tile.querySelector('.safety-code');
  code.textContent = identity?.code || (identity ? '' : 'waiting for keys…');
  const changed = tile.querySelector('.identity-changed');
  changed.hidden = identity?.status !== 'changed';
  tile.classList.toggle('identity-warning', identity?.status === 'changed');
  changed.onclick = () => {
    const name = room.members.get(id)?.user?.name || 'this person';
    // The key differs from the one this browser saw before: only comparing codes tells a new device from an impostor.
    if (confirm(`${name} has a new identity key (a new browser, or someone else). Accept it only after comparing safety codes.`)) {
      room.e2ee?.acceptIdentity(id);
    }
  };
}
