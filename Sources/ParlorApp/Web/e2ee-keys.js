// One member's keys for one room session (docs/e2ee.md, "Key agreement" and "Rotation"): its ephemeral ECDH key
// pair signed by its identity, its own sender key (a fresh one whenever someone leaves, ratcheted whenever someone
// joins), and every other member's public keys and sender keys as they arrive in `e2ee:key` messages. The KeyRing
// only computes: the caller sends the messages, and hands new sender keys to the frame pipeline (e2ee-pipeline.js).
import { toBase64, isId } from './e2ee-bytes.js';
import { signEphemeral, verifyEphemeral } from './e2ee-identity.js';
import {
  generateEphemeral, pairSecret, wrapSenderKey, unwrapSenderKey, parseKeyMessage, keyMessages,
} from './e2ee-wrap.js';
import {
  generateSenderKey, ratchetSenderKey, ratchetForward, keyCheck, MAX_RATCHET_STEPS,
} from './e2ee-senderkey.js';

export class KeyRing {
  /**
   * A new session's keys: `identity` from loadOrCreateIdentity(); roomId is the room's cid; `members`: the member ids
   * already in the room when we joined (for them we do not ratchet: they are not newcomers to us).
   */
  static async create({ roomId, memberId, identity, members = [] }) {
    const ring = new KeyRing(roomId, memberId, identity);
    ring.present = new Set(members);
    ring.ephemeral = await generateEphemeral();
    ring.signature = await signEphemeral(identity, { roomId, memberId, ephemeralPublicRaw: ring.ephemeral.publicRaw });
    await ring.makeOwnKey(0);
    return ring;
  }

  constructor(roomId, memberId, identity) {
    this.roomId = roomId;
    this.memberId = memberId;
    this.identity = identity;
    this.own = null;             // {id, raw, base, ratchets}: the current sender key, ratcheted `ratchets` times
    this.present = new Set();    // members in the room before us
    this.ownKeys = new Map();    // key id → base: our keys of this session, so our own chat stays readable
    // member id → {publicRaw, identityKey, secret, keys: Map key id → {base, check}, currentId}
    this.peers = new Map();
    this.departed = new Set();   // members who left: nothing of theirs is taken again, nothing is wrapped for them
    this.queue = Promise.resolve();
  }

  /**
   * Runs the public operations one at a time, in call order: each awaits WebCrypto, and two interleaved (a wrap while
   * the key is replaced and its bytes wiped, two messages of one newcomer) would see each other half done.
   */
  serial(operation) {
    const result = this.queue.then(operation);
    this.queue = result.catch(() => {});
    return result;
  }

  async makeOwnKey(id) {
    if (this.own) this.own.raw.fill(0);  // the replaced key's bytes are not needed to wrap any more
    const { raw, base } = await generateSenderKey();
    this.own = { id, raw, base, ratchets: 0 };
    this.ownKeys.set(id, base);
  }

  /**
   * Someone joined after us: what we say from now on must not open what we said before. Ratchet (the others follow
   * without a message), or after MAX_RATCHET_STEPS - 1 ratchets a fresh key for everyone, so no receiver ever has to
   * derive further than MAX_RATCHET_STEPS. Returns whether the key was fresh (then it goes to every member).
   */
  async advanceForNewcomer() {
    const { id, base, ratchets } = this.own;
    if (ratchets >= MAX_RATCHET_STEPS - 1) {
      await this.makeOwnKey((id + 1) & 0xff);
      return true;
    }
    const next = await ratchetSenderKey(base);
    this.own.raw.fill(0);
    this.own = { id: (id + 1) & 0xff, raw: next.raw, base: next.base, ratchets: ratchets + 1 };
    this.ownKeys.set(this.own.id, next.base);
    return false;
  }

  header() {
    return {
      cid: this.roomId,
      public_key: toBase64(this.ephemeral.publicRaw),
      identity_key: this.identity.publicBase64,
      signature: this.signature,
    };
  }

  /** `e2ee:key` bodies with our current key wrapped for `memberIds` (default: every member whose key we have). */
  messagesFor(memberIds) {
    return this.serial(() => this.wrapFor(memberIds ?? [...this.peers.keys()]));
  }

  async wrapFor(memberIds) {
    const entries = [];
    for (const to of memberIds) {
      const peer = this.peers.get(to);
      if (!peer || this.departed.has(to)) continue;
      const wrapped = await wrapSenderKey({
        secret: peer.secret, raw: this.own.raw, roomId: this.roomId, fromId: this.memberId, toId: to,
        keyId: this.own.id, fromPublicRaw: this.ephemeral.publicRaw, toPublicRaw: peer.publicRaw,
      });
      entries.push({ to, key_id: this.own.id, wrapped });
    }
    return keyMessages(this.header(), entries);
  }

  /** What to send on joining: our public key, and our key for every member already known (none at first). */
  announce() {
    return this.messagesFor();
  }

  /**
   * A relayed `e2ee:key` from member `fromId` (the envelope's `from`). Never throws on what a peer sent:
   *   {ok: false, reason}  — malformed, own, departed, bad-signature, identity-changed, bad-key
   *   {ok: true, identityKey, newPeer, installed: {memberId, keyId, baseKey} | null, ownKey: {keyId, baseKey} | null,
   *    unreadable, sendTo: [member ids]}
   * `installed` is a sender key of theirs we did not have (hand it to the frame pipeline); `ownKey` is our own new
   * key when a newcomer made us move on (hand it to the encryptor); `sendTo` are the members who need our current
   * key now: a member new to us, or one that started a new key agreement (everyone after a fresh key). The caller
   * gathers them over a moment and sends `messagesFor(ids)`: a newcomer hearing from 500 members then sends 8
   * messages, not 500. `unreadable` counts entries for us that failed.
   */
  receive(fromId, body) {
    return this.serial(() => this.take(fromId, body));
  }

  async take(fromId, body) {
    if (!isId(fromId)) return { ok: false, reason: 'malformed' };
    if (fromId === this.memberId) return { ok: false, reason: 'own' };
    if (this.departed.has(fromId)) return { ok: false, reason: 'departed' };
    const message = parseKeyMessage(body);
    if (!message) return { ok: false, reason: 'malformed' };
    const signed = await verifyEphemeral(message.identityRaw, message.signature,
      { roomId: this.roomId, memberId: fromId, ephemeralPublicRaw: message.publicRaw });
    if (!signed) return { ok: false, reason: 'bad-signature' };

    let peer = this.peers.get(fromId);
    const firstContact = !peer;
    if (peer && peer.identityKey !== message.identityKey) return { ok: false, reason: 'identity-changed' };
    const newPeer = !peer || toBase64(peer.publicRaw) !== toBase64(message.publicRaw);
    if (newPeer) {
      const secret = await pairSecret(this.ephemeral.privateKey, message.publicRaw);
      if (!secret) return { ok: false, reason: 'bad-key' };
      peer = {
        publicRaw: message.publicRaw, identityKey: message.identityKey, secret,
        keys: peer?.keys || new Map(), currentId: peer?.currentId ?? null,  // its sender keys stay valid
      };
      this.peers.set(fromId, peer);
    }

    let installed = null;
    let unreadable = 0;
    for (const entry of message.keys) {
      if (entry.to !== this.memberId) continue;
      const baseKey = await unwrapSenderKey({
        secret: peer.secret, wrapped: entry.wrapped, roomId: this.roomId, fromId, toId: this.memberId,
        keyId: entry.keyId, fromPublicRaw: message.publicRaw, toPublicRaw: this.ephemeral.publicRaw,
      });
      if (!baseKey) {
        unreadable += 1;
        continue;
      }
      const check = await keyCheck(baseKey);
      if (peer.keys.get(entry.keyId)?.check === check) continue;  // a key we already have, sent again
      peer.keys.set(entry.keyId, { base: baseKey, check });
      peer.currentId = entry.keyId;
      installed = { memberId: fromId, keyId: entry.keyId, baseKey };
    }
    let ownKey = null;
    let sendTo = newPeer ? [fromId] : [];
    if (firstContact && !this.present.has(fromId)) {
      this.present.add(fromId);  // one advance per newcomer, however many messages it sends
      const fresh = await this.advanceForNewcomer();
      ownKey = { keyId: this.own.id, baseKey: this.own.base };
      if (fresh) sendTo = [...this.peers.keys()];
    }
    return { ok: true, identityKey: message.identityKey, newPeer, installed, ownKey, unreadable, sendTo };
  }

  /**
   * Member `memberId` left, was kicked or banned: forget it, and if it held our key, rotate to a new one wrapped for
   * every remaining member. Returns {keyId, baseKey, messages}, or null when it never had our key. Use the new key
   * for frames at once (the departed member must hear nothing more); receivers drop our frames until it reaches them.
   */
  removeMember(memberId) {
    return this.serial(() => this.rotateWithout(memberId));
  }

  async rotateWithout(memberId) {
    const hadOurKey = this.peers.has(memberId);
    this.peers.delete(memberId);
    this.departed.add(memberId);
    if (!hadOurKey) return null;
    await this.makeOwnKey((this.own.id + 1) & 0xff);
    return { keyId: this.own.id, baseKey: this.own.base, messages: await this.wrapFor([...this.peers.keys()]) };
  }

  /** Our current sender key: {id, baseKey}. */
  currentKey() {
    return { id: this.own.id, baseKey: this.own.base };
  }

  /**
   * A member's sender key by id (ours for our own member id), or null: a key we never held and cannot ratchet to
   * from one we held (at most MAX_RATCHET_STEPS back).
   */
  async keyOf(memberId, keyId) {
    if (memberId === this.memberId) return this.ownKeys.get(keyId) || null;
    const keys = this.peers.get(memberId)?.keys;
    if (!keys || !Number.isInteger(keyId)) return null;
    if (keys.has(keyId)) return keys.get(keyId).base;
    for (let steps = 1; steps <= MAX_RATCHET_STEPS; steps += 1) {
      const from = keys.get((keyId - steps) & 0xff);
      if (from) return ratchetForward(from.base, steps);
    }
    return null;
  }

  /** A member's current sender key {id, baseKey}, or null. */
  currentKeyOf(memberId) {
    const peer = this.peers.get(memberId);
    if (!peer || peer.currentId === null) return null;
    return { id: peer.currentId, baseKey: peer.keys.get(peer.currentId).base };
  }

  /** The identity key (base64) a member signed with, or null: what the safety code and the IdentityBook use. */
  identityKeyOf(memberId) {
    return memberId === this.memberId ? this.identity.publicBase64 : this.peers.get(memberId)?.identityKey || null;
  }

  /** For the test hook only: our current raw sender key (base64), which a test then searches the server's data for. */
  currentKeyMaterial() {
    return toBase64(this.own.raw);
  }
}
