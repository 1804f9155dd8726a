// The frame side of an encrypted room as the worker (e2ee-worker.js) runs it: our encryptor, one decryptor per
// sender, and which sender the server currently forwards into each receive slot (media:slots). Kept free of worker
// and WebRTC globals so the Node tests drive it with plain {data: ArrayBuffer} frames.
import { FrameEncryptor, FrameDecryptor, frameTransform } from './e2ee-frames.js';

// When a slot switches speakers, frames of the one before can still be in flight: they are tried with its keys
// for this long.
export const SLOT_SWITCH_GRACE_MS = 1000;

export class FramePipeline {
  constructor({ now = () => performance.now() } = {}) {
    this.now = now;
    this.encryptor = new FrameEncryptor();
    this.decryptors = new Map();  // member id → FrameDecryptor
    this.slots = new Map();       // mid → {memberId, previousId, since}
    this.decrypting = true;       // false only through the test hook: received frames pass through encrypted
    this.counts = { encrypted: 0, decrypted: 0, dropped: 0, passedEncrypted: 0 };  // frames, for the test hook
    this.queue = Promise.resolve();
  }

  /**
   * One message from the page, applied in order (key changes derive keys asynchronously):
   *   {type: 'sender-key', keyId, baseKey}            our new current key
   *   {type: 'receiver-key', memberId, keyId, baseKey} a sender's new key
   *   {type: 'forget', memberId}                      a sender left: its keys are dropped
   *   {type: 'slot', mid, memberId}                   the server forwards memberId (or null) into slot mid
   *   {type: 'decrypt', enabled}                      the test hook
   * Returns a promise that settles once it is applied; a bad message is ignored.
   */
  handle(message) {
    this.queue = this.queue.then(() => this.apply(message)).catch(() => {});
    return this.queue;
  }

  async apply(message) {
    switch (message?.type) {
      case 'sender-key':
        await this.encryptor.setKey(message.keyId, message.baseKey);
        break;
      case 'receiver-key':
        await this.decryptorOf(message.memberId).setKey(message.keyId, message.baseKey);
        break;
      case 'forget':
        this.decryptors.get(message.memberId)?.clear();
        this.decryptors.delete(message.memberId);
        break;
      case 'slot': {
        const before = this.slots.get(message.mid);
        if (before?.memberId === message.memberId) break;
        const previousId = before?.memberId ?? null;
        this.slots.set(message.mid, { memberId: message.memberId ?? null, previousId, since: this.now() });
        break;
      }
      case 'decrypt':
        this.decrypting = message.enabled !== false;
        break;
      default:
        break;
    }
  }

  decryptorOf(memberId) {
    let decryptor = this.decryptors.get(memberId);
    if (!decryptor) {
      decryptor = new FrameDecryptor({ now: this.now });
      this.decryptors.set(memberId, decryptor);
    }
    return decryptor;
  }

  /** A slot's frame decrypted with its current sender's keys, or its previous sender's just after a switch. */
  async decryptSlot(mid, data) {
    const slot = this.slots.get(mid);
    if (!slot) return null;
    const current = slot.memberId && this.decryptors.get(slot.memberId);
    const plain = current ? await current.decrypt(data) : null;
    if (plain || !slot.previousId || this.now() - slot.since > SLOT_SWITCH_GRACE_MS) return plain;
    return (await this.decryptors.get(slot.previousId)?.decrypt(data)) || null;
  }

  /** The transform for our microphone's sender. */
  senderTransform() {
    return frameTransform(async (data) => this.count('encrypted', await this.encryptor.encrypt(data)));
  }

  /** The transform for receive slot `mid`. */
  receiverTransform(mid) {
    return frameTransform(async (data) => this.count('decrypted', await this.decryptSlot(mid, data)), () => {
      if (!this.decrypting) this.counts.passedEncrypted += 1;
      return this.decrypting;
    });
  }

  count(what, data) {
    this.counts[data ? what : 'dropped'] += 1;
    return data;
  }
}
