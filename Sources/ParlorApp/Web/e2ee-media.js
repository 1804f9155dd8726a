// The page's side of frame encryption (docs/e2ee.md): starts e2ee-worker.js and puts its transforms on an
// RTCPeerConnection's sender and receivers, with createEncodedStreams where the browser has it (Chromium; the
// connection must then be made with `encodedInsertableStreams: true`: see peerConfiguration) and
// RTCRtpScriptTransform otherwise (Firefox, Safari). Chromium 156 has RTCRtpScriptTransform too, but set as sfu.js
// sets transforms no audio frame reached the worker (its frame counts stayed 0) and the audio went out in the clear:
// so where both exist, encoded streams are used (docs/e2ee.md, "In the web client"). e2ee-room.js owns one per encrypted room; sfu.js attaches it to its connection's transceivers.

/** 'script-transform', 'encoded-streams', or null: this browser cannot take part in an encrypted room. */
export function transformSupport() {
  const sender = globalThis.RTCRtpSender?.prototype;
  if (sender && 'createEncodedStreams' in sender) return 'encoded-streams';
  if (globalThis.RTCRtpScriptTransform) return 'script-transform';
  return null;
}

/** The RTCPeerConnection configuration an encrypted room needs on top of `configuration`. */
export function peerConfiguration(configuration) {
  if (transformSupport() !== 'encoded-streams') return configuration;
  return { ...configuration, encodedInsertableStreams: true };
}

export class E2eeMedia {
  constructor(workerUrl = '/e2ee-worker.js') {
    this.support = transformSupport();
    this.worker = new Worker(workerUrl, { type: 'module', name: 'parlor-e2ee' });
    this.waiting = new Map();  // ack → resolve
    this.nextAck = 0;
    this.worker.onmessage = (event) => {
      if (event.data?.type !== 'ack') return;
      this.waiting.get(event.data.ack)?.(event.data);
      this.waiting.delete(event.data.ack);
    };
  }

  /** Posts a pipeline message; the promise settles once the worker has applied it (keys are in place). */
  send(message) {
    const ack = (this.nextAck += 1);
    const applied = new Promise((resolve) => this.waiting.set(ack, resolve));
    this.worker.postMessage({ ...message, ack });
    return applied;
  }

  attach(endpoint, options) {
    if (this.support === 'script-transform') {
      endpoint.transform = new RTCRtpScriptTransform(this.worker, options);
    } else if (this.support === 'encoded-streams') {
      const { readable, writable } = endpoint.createEncodedStreams();
      this.worker.postMessage({ type: 'streams', ...options, readable, writable }, [readable, writable]);
    }
  }

  /** Encrypts what `sender` (our microphone's RTCRtpSender) sends. */
  attachSender(sender) { this.attach(sender, { side: 'send' }); }

  /** Decrypts what arrives in receive slot `mid`. */
  attachReceiver(receiver, mid) { this.attach(receiver, { side: 'receive', mid }); }

  setSenderKey(keyId, baseKey) { return this.send({ type: 'sender-key', keyId, baseKey }); }
  setReceiverKey(memberId, keyId, baseKey) { return this.send({ type: 'receiver-key', memberId, keyId, baseKey }); }
  forget(memberId) { return this.send({ type: 'forget', memberId }); }
  setSlot(mid, memberId) { return this.send({ type: 'slot', mid, memberId }); }
  /** The test hook: with decryption off, received frames reach the decoder still encrypted (no tone). */
  setDecrypting(enabled) { return this.send({ type: 'decrypt', enabled }); }
  /** The worker's frame counts: {encrypted, decrypted, dropped, passedEncrypted}. */
  async counts() { return (await this.send({ type: 'counts' })).counts; }
  close() { this.worker.terminate(); }
}
