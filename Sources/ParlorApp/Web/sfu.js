// Audio through the server's selective forwarding unit: ONE RTCPeerConnection to the server per room.
//
// Transceivers, in this order (docs/protocol.md, media:offer): mid "0" is our microphone (sendonly with a track,
// else inactive), then `slots` receive-only slots, mids "1".."slots". The server forwards the room's speakers into
// our slots and says who is in which with media:slots; each slot plays through its own hidden <audio>.
//
// We always offer, the server only answers, so there is no glare. A microphone change and a resumed socket offer
// again on the same connection (the server renegotiates the session: DTLS and SRTP go on, so what we hear goes on;
// after a resume the offer restarts ICE). A connection that fails or does not come up, or an offer in place that
// fails, is replaced by a fresh one: the server starts a new session for an offer with another certificate.

import { peerConfiguration } from './rtc.js';

const RESTART_AFTER_MS = 10000;   // an answered offer not connected by then is tried again
const RECONNECT_GRACE_MS = 4000;  // a 'disconnected' connection gets this long to recover by itself
const MAX_RESTARTS = 6;           // reset once connected, and by a resumed socket

export class Sfu {
  /**
   * send(type, body) → Promise: a protocol request. onChange(memberId or null for all): what a tile shows changed.
   * onBlocked(): the browser would not start playing received audio without a click (autoplay policy).
   */
  constructor({ cid, memberId, iceServers, slots, send, onChange, onBlocked, e2ee = null }) {
    this.cid = cid;
    this.memberId = memberId;
    this.iceServers = iceServers || [];
    this.slotCount = slots;
    this.send = send;
    this.onChange = onChange;
    this.onBlocked = onBlocked || (() => {});
    this.pc = null;
    this.slots = new Map();      // mid → member_id (or null): who the server forwards into each slot
    this.audios = new Map();     // mid → <audio>, kept across connections
    this.members = new Set();    // the room's other members (their tiles' link state follows this.pc)
    this.silenced = new Set();   // members the server says are not sending: not played
    this.localStream = null;
    this.started = false;
    this.closed = false;
    this.queue = Promise.resolve();  // offers, one at a time
    this.offerQueued = false;
    this.queuedFresh = false;    // the queued offer must make a new connection
    this.queuedRestart = false;  // the queued offer restarts ICE
    this.stale = false;          // an offer in place failed: the next one starts afresh
    this.offers = 0;             // answered offers (for the test hook)
    this.restarts = 0;
    this.watchdog = null;
    // An encrypted room's E2eeRoom (e2ee-room.js): frames through its worker, CBR Opus, `e2ee: true` on offers.
    this.e2ee = e2ee;
    this.transformed = new WeakSet();  // senders and receivers that have their transform
  }

  configuration() {
    const configuration = peerConfiguration(this.iceServers);
    return this.e2ee ? this.e2ee.peerConfiguration(configuration) : configuration;
  }

  /** Our offer as sent: an encrypted room asks for constant-bitrate Opus without DTX (e2ee-sdp.js). */
  async createOffer(pc, options) {
    const offer = await pc.createOffer(options);
    return this.e2ee ? { type: offer.type, sdp: this.e2ee.sdp(offer.sdp) } : offer;
  }

  offerBody(pc) {
    const body = { cid: this.cid, sdp: pc.localDescription.sdp };
    return this.e2ee ? { ...body, e2ee: true } : body;
  }

  answer(reply) {
    return { type: 'answer', sdp: this.e2ee ? this.e2ee.sdp(reply.sdp) : reply.sdp };
  }

  /** In an encrypted room every sender and receiver of the connection gets its transform, once. */
  attachTransforms(pc) {
    if (!this.e2ee) return;
    for (const transceiver of pc.getTransceivers()) {
      if (transceiver.direction === 'recvonly') {
        if (transceiver.mid == null || this.transformed.has(transceiver.receiver)) continue;
        this.transformed.add(transceiver.receiver);
        this.e2ee.attachReceiver(transceiver.receiver, transceiver.mid);
      } else if (!this.transformed.has(transceiver.sender)) {
        this.transformed.add(transceiver.sender);
        this.e2ee.attachSender(transceiver.sender);
      }
    }
  }

  /** The server detects speaking from the audio levels in our packets: speaking.js sends no claims. */
  get serverDetectsSpeaking() { return true; }

  get localTrack() { return this.localStream?.getAudioTracks()[0] || null; }

  /** Starts once the local media is settled: a stream to send, or null to only listen. */
  start(localStream) {
    this.localStream = localStream;
    this.started = true;
    this.renegotiate();
  }

  /** Starts (a stream) or stops (null) sending: a new offer with mid "0" sendonly or inactive. */
  setLocalStream(localStream) {
    if (this.localStream === localStream) return;
    this.localStream = localStream;
    if (this.started) this.renegotiate();
  }

  /** Plays a member's audio or not (the server drops what it may not send anyway). */
  silence(otherId, silenced) {
    if (silenced) this.silenced.add(otherId);
    else this.silenced.delete(otherId);
    this.applySilence();
  }

  connectTo(otherId) {
    if (otherId !== this.memberId) this.members.add(otherId);
  }

  remove(otherId) {
    this.members.delete(otherId);
    this.silenced.delete(otherId);
    this.onChange(otherId);
  }

  /**
   * media:slots from the server; media:restart: the node serving the room's audio stopped, so a new connection
   * offers again (another node answers, with its own certificate). rtc:* belongs to the mesh and is not expected here.
   */
  handle(message) {
    if (message.type === 'media:slots') this.applySlots(message.body?.slots);
    if (message.type === 'media:restart') {
      this.restarts = 0;
      if (this.started) this.renegotiate({ fresh: true });
    }
  }

  isLinked() { return this.pc?.connectionState === 'connected'; }
  peerIds() { return [...this.members]; }
  connectionTo() { return this.pc; }

  /** Fresh ICE servers (TURN credentials expire): for the next offer, and the current connection's next gathering. */
  setIceServers(iceServers) {
    this.iceServers = iceServers || [];
    try {
      this.pc?.setConfiguration(this.configuration());
    } catch (error) {
      console.warn('parlor: could not update the ICE servers of the connection to the server:', error);
    }
  }

  /**
   * After the signalling socket came back: offer again from the new connection, restarting ICE (the server hands our
   * session over to it; fresh TURN credentials are in use from here on).
   */
  recover() {
    this.restarts = 0;
    if (this.started) this.renegotiate({ iceRestart: true });
  }

  /** Leaving: media:close (unless the server already ended the membership), then everything is let go. */
  close({ tellServer } = {}) {
    if (this.closed) return;
    this.closed = true;
    if (tellServer && this.pc) this.send('media:close', { cid: this.cid }).catch(() => {});
    this.closePeer();
    for (const audio of this.audios.values()) {
      audio.srcObject = null;
      audio.remove();
    }
    this.audios.clear();
  }

  /**
   * Queues an offer, unless one is queued and not yet begun: that one will see the latest state anyway (and takes
   * over what this one asked for). fresh: on a new connection; iceRestart: in place, with new ICE credentials.
   */
  renegotiate({ fresh = false, iceRestart = false } = {}) {
    this.queuedFresh ||= fresh;
    this.queuedRestart ||= iceRestart;
    if (this.offerQueued) return;
    this.offerQueued = true;
    this.queue = this.queue
      .then(() => {
        const options = { fresh: this.queuedFresh, iceRestart: this.queuedRestart };
        this.offerQueued = this.queuedFresh = this.queuedRestart = false;
        if (this.closed) return undefined;
        return this.mayOfferInPlace(options) ? this.offerInPlace(options) : this.offerAfresh();
      })
      .catch((error) => console.warn('parlor: audio negotiation with the server failed:', error));
  }

  /** An answered connection that is up (or, for a restart, briefly down) can be renegotiated. */
  mayOfferInPlace({ fresh, iceRestart }) {
    const pc = this.pc;
    if (fresh || this.stale || !pc || pc.signalingState !== 'stable' || !pc.remoteDescription) return false;
    return pc.connectionState === 'connected' || (iceRestart && pc.connectionState === 'disconnected');
  }

  closePeer() {
    clearTimeout(this.watchdog);
    const pc = this.pc;
    this.pc = null;
    if (!pc) return;
    pc.onconnectionstatechange = null;
    pc.close();
  }

  /** The microphone into mid "0" (or out of it) and a new offer on the same connection. */
  async offerInPlace({ iceRestart }) {
    const pc = this.pc;
    const mic = pc.getTransceivers()[0];
    const track = this.localTrack;
    if (mic.sender.track !== track) await mic.sender.replaceTrack(track);
    if (track) mic.sender.setStreams?.(this.localStream);
    mic.direction = track ? 'sendonly' : 'inactive';
    await pc.setLocalDescription(await this.createOffer(pc, { iceRestart }));
    if (this.pc !== pc) return;
    let reply;
    try {
      reply = await this.send('media:offer', this.offerBody(pc));
    } catch (error) {
      // Unanswered: the connection goes on as it was, and the next offer (a resume, the watchdog) starts afresh.
      this.stale = true;
      if (this.pc === pc) await pc.setLocalDescription({ type: 'rollback' }).catch(() => {});
      throw error;
    }
    if (this.pc !== pc) return;
    this.applySlots(reply.slots);  // at once: a media:slots event that follows the reply must win over it
    await pc.setRemoteDescription(this.answer(reply));
    this.offers += 1;
    if (iceRestart) this.watch(pc, RESTART_AFTER_MS);
  }

  /** A new connection to the server, replacing the old one, and its first offer. */
  async offerAfresh() {
    this.stale = false;
    this.closePeer();
    const pc = new RTCPeerConnection(this.configuration());
    this.pc = pc;
    const track = this.localTrack;
    pc.addTransceiver(track || 'audio', {
      direction: track ? 'sendonly' : 'inactive', streams: track ? [this.localStream] : [],
    });
    for (let i = 0; i < this.slotCount; i += 1) pc.addTransceiver('audio', { direction: 'recvonly' });
    preferOpus(pc);
    pc.onconnectionstatechange = () => this.connectionChanged(pc);
    await pc.setLocalDescription(await this.createOffer(pc));
    if (this.pc !== pc) return;  // closed meanwhile (we left)
    this.attachTransforms(pc);   // the receivers' mids are known now
    this.attachSlots(pc);
    this.onChange(null);
    const reply = await this.send('media:offer', this.offerBody(pc));
    if (this.pc !== pc) return;
    // At once, before anything is awaited: a media:slots event that follows the reply must win over it.
    this.applySlots(reply.slots);
    await pc.setRemoteDescription(this.answer(reply));
    this.offers += 1;
    this.watch(pc, RESTART_AFTER_MS);
  }

  /** Each receive slot's track into the slot's <audio> (made once, reused by later connections). */
  attachSlots(pc) {
    for (const transceiver of pc.getTransceivers()) {
      const mid = transceiver.mid;
      if (mid == null || transceiver.direction !== 'recvonly') continue;
      let audio = this.audios.get(mid);
      if (!audio) {
        audio = document.createElement('audio');
        audio.autoplay = true;
        audio.hidden = true;
        audio.dataset.slot = mid;
        document.body.append(audio);
        this.audios.set(mid, audio);
      }
      audio.srcObject = new MediaStream([transceiver.receiver.track]);
      audio.play().catch(this.onBlocked);  // joining was a click, but a reload into a room is not
    }
    this.applySilence();
  }

  applySlots(slots) {
    if (!Array.isArray(slots)) return;
    this.slots = new Map(slots.map((slot) => [String(slot.mid), slot.member_id ?? null]));
    this.e2ee?.setSlots(slots);
    for (const audio of this.audios.values()) audio.dataset.memberId = this.slots.get(audio.dataset.slot) || '';
    this.applySilence();
    this.onChange(null);
  }

  applySilence() {
    for (const [mid, audio] of this.audios) audio.muted = this.silenced.has(this.slots.get(mid));
  }

  connectionChanged(pc) {
    if (this.pc !== pc) return;
    const state = pc.connectionState;
    if (state === 'connected') {
      this.restarts = 0;
      clearTimeout(this.watchdog);
    } else if (state === 'failed' || state === 'disconnected') {
      this.watch(pc, state === 'failed' ? 500 : RECONNECT_GRACE_MS);
    }
    this.onChange(null);
  }

  /** Offers again if the connection is still not up after `delay`. */
  watch(pc, delay) {
    clearTimeout(this.watchdog);
    this.watchdog = setTimeout(() => {
      if (this.pc !== pc || pc.connectionState === 'connected' || this.closed) return;
      if (this.restarts >= MAX_RESTARTS) {
        console.warn(`parlor: giving up on the audio connection to the server after ${MAX_RESTARTS} tries`);
        return;
      }
      this.restarts += 1;
      this.renegotiate({ fresh: true });
    }, delay);
  }

  /** [{member_id, mid, bytesReceived, audioLevel, totalAudioEnergy}] per receive slot that got packets. */
  async inboundAudioStats() {
    const rows = [];
    for (const transceiver of this.pc?.getTransceivers() || []) {
      if (transceiver.direction !== 'recvonly' || transceiver.mid == null) continue;
      const report = await transceiver.receiver.getStats();
      report.forEach((entry) => {
        if (entry.type !== 'inbound-rtp') return;
        rows.push({
          member_id: this.slots.get(transceiver.mid) ?? null, mid: transceiver.mid,
          bytesReceived: entry.bytesReceived || 0, audioLevel: entry.audioLevel || 0,
          totalAudioEnergy: entry.totalAudioEnergy || 0,
        });
      });
    }
    return rows;
  }

  /** [{bytesSent, packetsSent, timestamp}] of our microphone's stream (none while we only listen). */
  async outboundAudioStats() {
    const mic = this.pc?.getTransceivers()[0];
    if (!mic) return [];
    const rows = [];
    (await mic.sender.getStats()).forEach((entry) => {
      if (entry.type === 'outbound-rtp') {
        rows.push({ bytesSent: entry.bytesSent || 0, packetsSent: entry.packetsSent || 0, timestamp: entry.timestamp });
      }
    });
    return rows;
  }
}

/** Offer Opus only: the server forwards Opus, and a short SDP stays well within the server's 16 KiB limit. */
function preferOpus(pc) {
  const opus = (globalThis.RTCRtpReceiver?.getCapabilities?.('audio')?.codecs || [])
    .filter((codec) => codec.mimeType.toLowerCase() === 'audio/opus');
  if (!opus.length) return;
  for (const transceiver of pc.getTransceivers()) {
    try {
      transceiver.setCodecPreferences?.(opus);
    } catch (error) {
      return;  // an older browser: it offers all its codecs and the server picks Opus
    }
  }
}
