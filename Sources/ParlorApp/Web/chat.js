// The room's chat (history on joining, live messages after) and reactions shown on their sender's tile.
import { state, nameOf } from './state.js';
import { $, announce, describeError } from './ui.js';

const REACTION_SHOW_MS = 2500;   // how long an incoming reaction stays on its sender's tile
const CHAT_KEEP = 500;           // messages kept in the chat panel
const HISTORY_PAGES = 20;        // conversation:events pages read on join (1000 events each)

/** The stored chat up to `upTo` (the join's last event id); later messages arrive as events. */
export async function loadChatHistory(current, upTo) {
  let since = 0;
  for (let page = 0; page < HISTORY_PAGES && since < upTo; page += 1) {
    let reply;
    try {
      reply = await state.connection.request('conversation:events', { cid: current.cid, since, page_size: 1000 });
    } catch (error) {
      if (state.room === current) announce(`Could not load the chat history: ${describeError(error)}`);
      return;
    }
    if (state.room !== current) return;
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
export function addChatMessage(event) {
  const body = event.body || {};
  const log = $('chat-log');
  if (log.querySelector(`[data-id="${event.id}"]`)) return;
  const item = document.createElement('li');
  item.dataset.id = String(event.id);
  const sender = document.createElement('span');
  sender.className = 'chat-name';
  const senderId = body.member_id || event.from;
  sender.textContent = body.user?.name || nameOf(senderId);
  if (senderId === state.room?.memberId) item.classList.add('mine');
  const text = document.createElement('span');
  text.className = 'chat-text';
  text.textContent = body.text || '';
  if (typeof body.ciphertext === 'string') showDecrypted(text, senderId, body.ciphertext);
  item.append(sender, text);
  const later = [...log.children].find((other) => Number(other.dataset.id) > event.id);
  const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
  log.insertBefore(item, later || null);
  while (log.children.length > CHAT_KEEP) log.firstElementChild.remove();
  if (atBottom || senderId === state.room?.memberId) log.scrollTop = log.scrollHeight;
  $('chat-empty').hidden = true;
}

/** The chat form: a message for the current room. */
export async function sendChat(input) {
  const text = input.value.trim();
  const current = state.room;
  if (!text || !current) return;
  try {
    // An encrypted room's server stores and relays only ciphertext.
    const body = current.e2ee ? { cid: current.cid, ciphertext: await current.e2ee.encryptChat(text) } : { cid: current.cid, text };
    await state.connection.request('message:send', body);
    if (input.value.trim() === text) input.value = '';
  } catch (error) {
    if (state.room === current) announce(`Your message was not sent: ${describeError(error)}`);
  }
}

/**
 * An encrypted room's message: decrypted in place, or marked unreadable — sent while we did not hold the sender's
 * key (before we joined, or before this page loaded), which is what rotating keys is for.
 */
function showDecrypted(element, senderId, ciphertext) {
  const { room } = state;
  const show = (plain) => {
    element.classList.remove('unreadable');
    element.textContent = plain;
  };
  element.classList.add('unreadable');
  element.textContent = room?.e2ee ? 'decrypting…' : 'encrypted';
  if (!room?.e2ee) return;
  room.e2ee.decryptChat(senderId, ciphertext, show).then((plain) => {
    if (plain === null) element.textContent = 'Unreadable: encrypted before you had this person’s key';
    else show(plain);
  });
}

export function showReaction(memberId, emoji) {
  const tile = state.room?.tiles.get(memberId);
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
