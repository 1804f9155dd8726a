// window.parlor: read-only views of the client's state and a few actions, for the browser tests (Tests/browser).
import { state } from './state.js';

window.parlor = {
  get state() { return state.connection?.state || 'offline'; },
  get memberId() { return state.room?.memberId || null; },
  get roomId() { return state.room?.cid || null; },
  get sending() { return !!state.room?.sending; },
  get muted() { return !!state.room?.muted; },
  get resumes() { return state.resumes; },
  get sessionId() { return state.session.id; },
  /** Why the server ended the session (close 4004/4005), or null. */
  get endReason() { return state.connection?.endReason || null; },
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
  dropConnection() { state.connection?.socket?.close(4001, 'test drop'); },
  /** A protocol request on the page's connection, as a misbehaving client could send it. */
  request(type, body) { return state.connection.request(type, body); },
  async inboundAudioStats() { return state.room?.media ? state.room.media.inboundAudioStats() : []; },
  async outboundAudioStats() { return state.room?.media ? state.room.media.outboundAudioStats() : []; },
};
