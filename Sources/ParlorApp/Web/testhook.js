// window.parlor: read-only views of the client's state and a few actions, for the browser tests (Tests/browser).
import { state } from './state.js';
import { keyCheck } from './e2ee-senderkey.js';

window.parlor = {
  get state() { return state.connection?.state || 'offline'; },
  get memberId() { return state.room?.memberId || null; },
  get roomId() { return state.room?.cid || null; },
  get sending() { return !!state.room?.sending; },
  get muted() { return !!state.room?.muted; },
  get resumes() { return state.resumes; },
  get sessionId() { return state.session.id; },
  /** Why the server ended the session (close 4004/4005), or null. */
  get endReason() {
    const error = state.connection?.endError;
    return error && !error.code.startsWith('client:') ? error.message : null;
  },
  get iceServers() { return state.session.iceServers; },
  /** 'sfu' or 'mesh', as session:success said. */
  get mediaMode() { return state.session.media.mode; },
  get members() { return state.room?.members ? [...state.room.members.values()] : []; },
  get role() { return state.room?.members.get(state.room.memberId)?.role || null; },
  get mode() { return state.room?.mode || null; },
  get locked() { return !!state.room?.locked; },
  /** 'summary' or 'full' (a big stage room's presence), and the audience count and page shown in summary. */
  get presence() { return state.room ? (state.room.audience ? 'summary' : 'full') : null; },
  get audienceCount() { return state.room?.audience?.count ?? null; },
  get audiencePage() { return state.room?.audience ? [...state.room.audience.page] : []; },
  get handRaised() { return state.room?.members.get(state.room.memberId)?.handAt != null; },
  /** member_id → the RTCPeerConnection that carries their audio (with the SFU: the one to the server, for all). */
  get peers() {
    const media = state.room?.media;
    return media ? Object.fromEntries(media.peerIds().map((id) => [id, media.connectionTo(id)])) : {};
  },
  /** The SFU's connection to the server (null with the mesh), and its slots: mid → member_id. */
  get serverConnection() { return state.room?.media?.pc || null; },
  get slots() { return Object.fromEntries(state.room?.media?.slots || []); },
  /** Media offers answered by the server so far (the SFU re-offers on microphone changes and after a resume). */
  get offers() { return state.room?.media?.offers || 0; },
  /** Drops the socket as a network failure would, to exercise session:resume. */
  dropConnection() { state.connection?.simulateNetworkDrop(); },
  /** A protocol request on the page's connection, as a misbehaving client could send it. */
  request(type, body) { return state.connection.request(type, body); },
  async inboundAudioStats() { return state.room?.media ? state.room.media.inboundAudioStats() : []; },
  async outboundAudioStats() { return state.room?.media ? state.room.media.outboundAudioStats() : []; },
  /** An encrypted room: whether the joined room is one, and its keys (e2ee-room.js). */
  get encrypted() { return !!state.room?.encrypted; },
  get e2eeReady() { return !!state.room?.e2ee; },
  /** Our current sender key's id and raw bytes (base64): what a test searches the server's data for. */
  get e2eeKeyId() { return state.room?.e2ee?.ring.currentKey().id ?? null; },
  e2eeKeyMaterial() { return state.room?.e2ee?.ring.currentKeyMaterial() ?? null; },
  /** member_id → the key id of theirs we hold now (null before their key arrived). */
  get e2eePeerKeys() {
    const ring = state.room?.e2ee?.ring;
    if (!ring) return {};
    return Object.fromEntries([...ring.peers.keys()].map((id) => [id, ring.currentKeyOf(id)?.id ?? null]));
  },
  get e2eeRefusals() { return state.room?.e2ee ? [...state.room.e2ee.refusals] : []; },
  /** A member's safety code as its tile shows it ('own' for ours). */
  safetyCode(memberId) { return state.room?.e2ee?.identityOf(memberId)?.code ?? null; },
  /** Off: received frames reach the decoder still encrypted. Resolves once the worker applied it. */
  setDecrypting(enabled) { return state.room?.e2ee ? state.room.e2ee.media.setDecrypting(enabled) : Promise.resolve(); },
  /** Frames the room's worker encrypted, decrypted, dropped and (decryption off) passed on encrypted. */
  e2eeFrameCounts() { return state.room?.e2ee ? state.room.e2ee.media.counts() : Promise.resolve(null); },
  /** The check value (a hash, not the key) of our current sender key. */
  async e2eeKeyCheck() {
    const ring = state.room?.e2ee?.ring;
    return ring ? keyCheck(ring.currentKey().baseKey) : null;
  },
  /**
   * The check value of the key the last encrypted room this page was in (its keys kept after leaving) gives for
   * member `memberId`'s key id `keyId` (held, or ratcheted forward from one held), or null: a member who left must
   * not come to the key the others rotated to.
   */
  async lastRoomKeyCheck(memberId, keyId) {
    const base = await state.lastE2ee?.ring.keyOf(memberId, keyId);
    return base ? keyCheck(base) : null;
  },
};
