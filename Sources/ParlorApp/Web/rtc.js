// The WebRTC mesh: one RTCPeerConnection per other member of the room, audio only. Used when the server says
// `"media":{"mode":"mesh"}` in session:success (`parlor serve --media mesh`); otherwise sfu.js sends the audio
// through the server. Both offer the same methods to room.js.
//
// Glare rule: for each pair exactly one side offers, the member whose member_id sorts first. Every offer starts a
// fresh connection on both sides (the answerer replaces whatever it had), so a restart is just "offer again".
// The offerer restarts a connection that fails, or that is not up a while after its offer (a lost message).
//
// Every link negotiates audio both ways, also for a member without a microphone (a listener): when a listener is
// brought on stage its track goes into the existing senders (replaceTrack), with no new offer.

const RESTART_AFTER_MS = 10000;   // an offer not connected by then is tried again
const RECONNECT_GRACE_MS = 4000;  // a 'disconnected' link gets this long to recover by itself
const MAX_RESTARTS = 6;           // per peer, reset once connected

// 'relay' sends all media through the TURN servers (localStorage 'parlor.iceTransportPolicy'): for tests that must
// prove a TURN server relays, and for a user who wants to keep their address from the other members.
const ICE_TRANSPORT_POLICY = globalThis.localStorage?.getItem('parlor.iceTransportPolicy') === 'relay' ? 'relay' : 'all';

/** An RTCPeerConnection's configuration, for the mesh's links and the SFU's connection to the server. */
export function peerConfiguration(iceServers) {
  return { iceServers, iceTransportPolicy: ICE_TRANSPORT_POLICY };
}

export class Mesh {
  /**
   * send(type, body) → Promise: a protocol request. onChange(memberId): a peer's link state changed.
   * onBlocked(): the browser would not start playing received audio without a click (autoplay policy).
   */
  constructor({ cid, memberId, iceServers, send, onChange, onBlocked }) {
    this.cid = cid;
    this.memberId = memberId;
    this.iceServers = iceServers || [];
    this.send = send;
    this.onChange = onChange;
    this.onBlocked = onBlocked || (() => {});
    this.peers = new Map();          // member_id → Peer
    this.early = new Map();          // member_id → candidates that came before the offer
    this.queues = new Map();         // member_id → promise chain: one peer's signals are handled in order
    this.departed = new Set();       // members that left: work still queued for them is dropped
    this.silenced = new Set();       // members the server says are not sending: not played
    this.localStream = null;
    this.closed = false;
    this.ready = new Promise((resolve) => { this.markReady = resolve; });
  }

  /** Starts the mesh once the local media is settled: a stream to send, or null to only listen. */
  start(localStream) {
    this.localStream = localStream;
    this.markReady();
  }

  get localTrack() { return this.localStream?.getAudioTracks()[0] || null; }

  /** Our speaking changes are sent as audio:speaking:on/off and relayed to the others (speaking.js). */
  get serverDetectsSpeaking() { return false; }

  /** The mesh has no connection to the server, and no slots: each member has their own link. */
  get pc() { return null; }

  isLinked(otherId) { return this.peers.get(otherId)?.pc.connectionState === 'connected'; }
  peerIds() { return [...this.peers.keys()]; }
  connectionTo(otherId) { return this.peers.get(otherId)?.pc || null; }

  /** Starts (a stream) or stops (null) sending on every link, without renegotiating. */
  setLocalStream(localStream) {
    this.localStream = localStream;
    const track = this.localTrack;
    for (const [id, peer] of this.peers) {
      const transceiver = peer.pc.getTransceivers().find((t) => t.receiver.track?.kind === 'audio');
      transceiver?.sender.replaceTrack(track).catch((error) => {
        console.warn(`parlor: could not change the audio sent to ${id}:`, error);
      });
    }
  }

  /** Plays a member's audio or not, for the links to them now and later. */
  silence(otherId, silenced) {
    if (silenced) this.silenced.add(otherId);
    else this.silenced.delete(otherId);
    const peer = this.peers.get(otherId);
    if (peer) peer.audio.muted = silenced;
  }

  isOfferer(otherId) { return this.memberId < otherId; }

  /** A member we should be connected to: offer if the glare rule says we do, else wait for their offer. */
  connectTo(otherId) {
    if (otherId === this.memberId || !this.isOfferer(otherId)) return;
    this.enqueue(otherId, () => this.offer(otherId));
  }

  /** An rtc:offer / rtc:answer / rtc:ice message from the server. */
  handle(message) {
    const from = message.from || message.body?.from;
    if (!from || from === this.memberId) return;
    const body = message.body || {};
    if (message.type === 'rtc:offer') this.enqueue(from, () => this.answer(from, body.sdp));
    else if (message.type === 'rtc:answer') this.enqueue(from, () => this.accept(from, body.sdp));
    else if (message.type === 'rtc:ice') this.enqueue(from, () => this.addCandidate(from, body.candidate));
  }

  /** The member left: close our connection to them. */
  remove(otherId) {
    this.departed.add(otherId);
    this.peers.get(otherId)?.close();
    this.peers.delete(otherId);
    this.early.delete(otherId);
    this.silenced.delete(otherId);
    this.onChange(otherId);
  }

  /** Leaving: every link closes (the others see us leave and close theirs). */
  close() {
    this.closed = true;
    for (const id of [...this.peers.keys()]) this.remove(id);
  }

  /**
   * Fresh ICE servers from session:success or session:resume (TURN credentials expire): used by every connection
   * made from now on, and by the existing ones when ICE next gathers (a restart or a network change).
   */
  setIceServers(iceServers) {
    this.iceServers = iceServers || [];
    for (const [id, peer] of this.peers) {
      try {
        peer.pc.setConfiguration(Peer.configuration(this.iceServers));
      } catch (error) {
        console.warn(`parlor: could not update the ICE servers of the link to ${id}:`, error);
      }
    }
  }

  /** After the signalling socket came back: links we offer and that are not up are offered again. */
  recover() {
    for (const [id, peer] of this.peers) {
      if (this.isOfferer(id) && peer.pc.connectionState !== 'connected') this.restart(id);
    }
  }

  enqueue(otherId, task) {
    const previous = this.queues.get(otherId) || this.ready;
    const next = previous.then(() => (this.closed || this.departed.has(otherId) ? undefined : task())).catch((error) => {
      console.warn(`parlor: signalling with ${otherId} failed:`, error);
    });
    this.queues.set(otherId, next);
  }

  /** A new peer connection to `otherId`, replacing any old one. */
  createPeer(otherId) {
    this.peers.get(otherId)?.close();
    const peer = new Peer(otherId, this.iceServers, this.onBlocked);
    peer.audio.muted = this.silenced.has(otherId);
    peer.restarts = this.peers.get(otherId)?.restarts ?? 0;
    this.peers.set(otherId, peer);
    peer.pc.onicecandidate = (event) => {
      if (this.peers.get(otherId) !== peer) return;
      this.send('rtc:ice', { cid: this.cid, to: otherId, candidate: event.candidate ? event.candidate.toJSON() : null })
        .catch(() => {});
    };
    peer.pc.onconnectionstatechange = () => {
      if (this.peers.get(otherId) !== peer) return;
      const state = peer.pc.connectionState;
      if (state === 'connected') {
        peer.restarts = 0;
        clearTimeout(peer.watchdog);
      } else if (this.isOfferer(otherId) && (state === 'failed' || state === 'disconnected')) {
        this.watch(otherId, peer, state === 'failed' ? 500 : RECONNECT_GRACE_MS);
      }
      this.onChange(otherId);
    };
    this.onChange(otherId);
    return peer;
  }

  /** Restarts the link if it is still not connected after `delay` (offerer side only). */
  watch(otherId, peer, delay) {
    clearTimeout(peer.watchdog);
    peer.watchdog = setTimeout(() => {
      if (this.peers.get(otherId) === peer && peer.pc.connectionState !== 'connected') this.restart(otherId);
    }, delay);
  }

  restart(otherId) {
    const peer = this.peers.get(otherId);
    if (!peer || this.closed) return;
    if (peer.restarts >= MAX_RESTARTS) {
      console.warn(`parlor: giving up on a link to ${otherId} after ${MAX_RESTARTS} restarts`);
      return;
    }
    peer.restarts += 1;
    this.enqueue(otherId, () => this.offer(otherId));
  }

  async offer(otherId) {
    const peer = this.createPeer(otherId);
    const pc = peer.pc;
    if (this.localTrack) pc.addTrack(this.localTrack, this.localStream);
    else pc.addTransceiver('audio', { direction: 'sendrecv' });  // nothing is sent until a track is put in
    await pc.setLocalDescription(await pc.createOffer());
    this.watch(otherId, peer, RESTART_AFTER_MS);
    await this.send('rtc:offer', { cid: this.cid, to: otherId, sdp: pc.localDescription.sdp });
  }

  async answer(otherId, sdp) {
    const peer = this.createPeer(otherId);
    const pc = peer.pc;
    await pc.setRemoteDescription({ type: 'offer', sdp });
    // addTrack reuses the audio transceiver the offer created, turning it to send as well; without a track it is
    // turned to send all the same, so a track can be put in later.
    if (this.localTrack) pc.addTrack(this.localTrack, this.localStream);
    else for (const transceiver of pc.getTransceivers()) transceiver.direction = 'sendrecv';
    await pc.setLocalDescription(await pc.createAnswer());
    await this.flushCandidates(peer, this.early.get(otherId));
    this.early.delete(otherId);
    await this.send('rtc:answer', { cid: this.cid, to: otherId, sdp: pc.localDescription.sdp });
  }

  async accept(otherId, sdp) {
    const peer = this.peers.get(otherId);
    if (!peer || peer.pc.signalingState !== 'have-local-offer') return;  // a stale answer to an older offer
    await peer.pc.setRemoteDescription({ type: 'answer', sdp });
    await this.flushCandidates(peer);
  }

  async addCandidate(otherId, candidate) {
    if (!candidate || !candidate.candidate) return;  // end of candidates: nothing to do
    const peer = this.peers.get(otherId);
    if (!peer) {
      // Before their offer: keep it for the connection the offer will create.
      const list = this.early.get(otherId) || [];
      list.push(candidate);
      this.early.set(otherId, list);
      return;
    }
    if (!peer.pc.remoteDescription) {
      peer.pendingCandidates.push(candidate);
      return;
    }
    await peer.pc.addIceCandidate(candidate).catch(() => {});  // one of an older connection: harmless
  }

  async flushCandidates(peer, extra = []) {
    const candidates = [...extra, ...peer.pendingCandidates];
    peer.pendingCandidates = [];
    for (const candidate of candidates) await peer.pc.addIceCandidate(candidate).catch(() => {});
  }

  /** [{member_id, bytesReceived, audioLevel, totalAudioEnergy}] from each connection's inbound-rtp audio statistics. */
  async inboundAudioStats() {
    const rows = [];
    for (const [id, peer] of this.peers) {
      const report = await peer.pc.getStats();
      report.forEach((entry) => {
        if (entry.type === 'inbound-rtp' && (entry.kind || entry.mediaType) === 'audio') {
          rows.push({
            member_id: id, bytesReceived: entry.bytesReceived || 0, audioLevel: entry.audioLevel || 0,
            totalAudioEnergy: entry.totalAudioEnergy || 0,
          });
        }
      });
    }
    return rows;
  }

  /** [{member_id, bytesSent, packetsSent, timestamp}] of what we send on each link. */
  async outboundAudioStats() {
    const rows = [];
    for (const [id, peer] of this.peers) {
      (await peer.pc.getStats()).forEach((entry) => {
        if (entry.type === 'outbound-rtp' && (entry.kind || entry.mediaType) === 'audio') {
          rows.push({ member_id: id, bytesSent: entry.bytesSent || 0, packetsSent: entry.packetsSent || 0, timestamp: entry.timestamp });
        }
      });
    }
    return rows;
  }
}

/** One connection and the hidden <audio> element that plays what it receives. */
class Peer {
  constructor(memberId, iceServers, onBlocked) {
    this.memberId = memberId;
    this.pc = new RTCPeerConnection(Peer.configuration(iceServers));
    this.pendingCandidates = [];
    this.restarts = 0;
    this.watchdog = null;
    this.audio = document.createElement('audio');
    this.audio.autoplay = true;
    this.audio.dataset.memberId = memberId;
    this.audio.hidden = true;
    document.body.append(this.audio);
    this.pc.ontrack = (event) => {
      this.audio.srcObject = event.streams[0] || new MediaStream([event.track]);
      this.audio.play().catch(onBlocked);  // joining was a click, but a reload into a room is not
    };
  }

  static configuration(iceServers) {
    return peerConfiguration(iceServers);
  }

  close() {
    clearTimeout(this.watchdog);
    this.pc.onicecandidate = this.pc.onconnectionstatechange = this.pc.ontrack = null;
    this.pc.close();
    this.audio.srcObject = null;
    this.audio.remove();
  }
}
