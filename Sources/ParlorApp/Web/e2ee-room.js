// An encrypted room on the page (docs/e2ee.md): this member's KeyRing, the frame worker (E2eeMedia), the `e2ee:key`
// messages it sends and receives through the server, the chat's encryption, and what the tiles show of each
// member's identity (safety code, a changed identity). The server only relays; everything secret stays here.
import { KeyRing } from './e2ee-keys.js';
import { openStore, loadOrCreateIdentity, IdentityBook, safetyCode } from './e2ee-identity.js';
import { E2eeMedia, transformSupport, peerConfiguration } from './e2ee-media.js';
import { encryptChat, decryptChat } from './e2ee-chat.js';
import { opusConstantBitrateSdp } from './e2ee-sdp.js';
import { fromBase64 } from './e2ee-bytes.js';

// Members who need our key are gathered this long, so a newcomer answering many members sends a few messages.
const GATHER_MS = 50;

// Chat messages kept for a retry when their sender's key arrives (older ones stay unreadable).
const MAX_WAITING_CHAT = 200;

let storeOpened = null;  // one identity store per page

/** Whether this browser can take part: encoded transforms and WebCrypto. */
export function canEncrypt() {
  return transformSupport() !== null && !!globalThis.crypto?.subtle && !!globalThis.Worker;
}

export class E2eeRoom {
  /**
   * Keys for a room we just joined. cid, memberId: ours; others: the member ids already in the room; userIdOf(id):
   * a member's user id (for the IdentityBook); send(type, body): a protocol request; onChange(memberId): what a
   * tile or the chat shows of that member changed.
   */
  static async start({ cid, memberId, userId, others, userIdOf, send, onChange }) {
    storeOpened ||= openStore();
    const store = await storeOpened;
    // Per origin and user: two people sharing a browser (one window each) are two identities.
    const identity = await loadOrCreateIdentity(store, `${location.origin} ${userId}`);
    const ring = await KeyRing.create({ roomId: cid, memberId, identity, members: others });
    const room = new E2eeRoom({ ring, book: new IdentityBook(store), userIdOf, send, onChange });
    const { id, baseKey } = ring.currentKey();
    await room.media.setSenderKey(id, baseKey);
    room.ownCode = await safetyCode(identity.publicRaw);
    await room.sendAll(await ring.announce());
    return room;
  }

  constructor({ ring, book, userIdOf, send, onChange }) {
    this.ring = ring;
    this.book = book;
    this.userIdOf = userIdOf;
    this.send = send;
    this.onChange = onChange;
    this.media = new E2eeMedia();
    this.identities = new Map();  // member id → {code, status: 'new' | 'known' | 'changed'}
    this.pending = new Set();     // members to send our current key to, gathered for GATHER_MS
    this.gatherTimer = null;
    this.waitingChat = [];        // [{from, ciphertext, show}] not readable yet: retried when a key arrives
    this.refusals = [];           // reasons of e2ee:key messages refused (the test hook reads them)
    this.closed = false;
  }

  /** The RTCPeerConnection configuration for this room's connection (encoded streams where needed). */
  peerConfiguration(configuration) { return peerConfiguration(configuration); }

  /** Our offers and the server's answers say constant-bitrate Opus without DTX. */
  sdp(text) { return opusConstantBitrateSdp(text); }

  attachSender(sender) { this.media.attachSender(sender); }
  attachReceiver(receiver, mid) { this.media.attachReceiver(receiver, String(mid)); }

  /** media:slots: which member's frames each receive slot carries now. */
  setSlots(slots) {
    for (const slot of slots || []) this.media.setSlot(String(slot.mid), slot.member_id ?? null);
  }

  async sendAll(messages) {
    for (const body of messages) {
      if (this.closed) return;
      await this.send('e2ee:key', body).catch((error) => console.warn('parlor: e2ee:key not sent:', error));
    }
  }

  /** A relayed e2ee:key from `from`. */
  async receive(from, body) {
    if (this.closed) return;
    const result = await this.ring.receive(from, body);
    if (!result.ok) {
      this.refusals.push(result.reason);
      if (result.reason === 'identity-changed') this.markIdentity(from, { status: 'changed' });
      return;
    }
    if (result.installed) {
      const { memberId, keyId, baseKey } = result.installed;
      await this.media.setReceiverKey(memberId, keyId, baseKey);
      this.retryChat(memberId);
    }
    if (result.ownKey) await this.media.setSenderKey(result.ownKey.keyId, result.ownKey.baseKey);
    if (result.newPeer) await this.observeIdentity(from, result.identityKey);
    for (const id of result.sendTo) this.pending.add(id);
    if (this.pending.size && !this.gatherTimer) this.gatherTimer = setTimeout(() => this.flush(), GATHER_MS);
  }

  async flush() {
    this.gatherTimer = null;
    const ids = [...this.pending];
    this.pending.clear();
    if (ids.length && !this.closed) await this.sendAll(await this.ring.messagesFor(ids));
  }

  /** A member left, was kicked or banned: a new key of ours they never get, for every member still here. */
  async removeMember(memberId) {
    if (this.closed) return;
    this.pending.delete(memberId);
    const rotated = await this.ring.removeMember(memberId);
    await this.media.forget(memberId);
    if (!rotated) return;
    await this.media.setSenderKey(rotated.keyId, rotated.baseKey);
    await this.sendAll(rotated.messages);
  }

  async observeIdentity(memberId, identityKey) {
    const code = await safetyCode(fromBase64(identityKey));
    const userId = this.userIdOf(memberId);
    let status = 'new';
    try {
      if (userId) status = (await this.book.observe(userId, identityKey)).status;
    } catch (error) {
      console.warn('parlor: could not check an identity key:', error);
    }
    this.markIdentity(memberId, { code, status });
  }

  markIdentity(memberId, change) {
    this.identities.set(memberId, { ...(this.identities.get(memberId) || {}), ...change });
    this.onChange(memberId);
  }

  /** {code, status} of a member (ours: {code, status: 'own'}), or null before its key arrived. */
  identityOf(memberId) {
    if (memberId === this.ring.memberId) return { code: this.ownCode, status: 'own' };
    return this.identities.get(memberId) || null;
  }

  /** The user compared safety codes: the changed key is the right one from now on. */
  async acceptIdentity(memberId) {
    const identityKey = this.ring.identityKeyOf(memberId);
    const userId = this.userIdOf(memberId);
    if (!identityKey || !userId) return;
    await this.book.accept(userId, identityKey);
    this.markIdentity(memberId, { status: 'known' });
  }

  encryptChat(text) { return encryptChat(this.ring, text); }

  /**
   * The text of a chat ciphertext, or null. Unreadable now may become readable when the sender's key arrives (its
   * message raced its key): `show` is called again then.
   */
  async decryptChat(from, ciphertext, show) {
    const text = await decryptChat(this.ring, from, ciphertext);
    if (text === null && show) {
      this.waitingChat.push({ from, ciphertext, show });
      if (this.waitingChat.length > MAX_WAITING_CHAT) this.waitingChat.shift();
    }
    return text;
  }

  async retryChat(memberId) {
    const waiting = this.waitingChat.filter((entry) => entry.from === memberId);
    this.waitingChat = this.waitingChat.filter((entry) => entry.from !== memberId);
    for (const entry of waiting) {
      const text = await decryptChat(this.ring, entry.from, entry.ciphertext);
      if (text === null) this.waitingChat.push(entry);
      else entry.show(text);
    }
  }

  close() {
    this.closed = true;
    clearTimeout(this.gatherTimer);
    this.media.close();
  }
}
