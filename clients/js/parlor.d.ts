// TypeScript declarations for parlor.js (Parlor's JavaScript client). The wire shapes are docs/protocol.md's.

export declare const DEV_ADMIN_TOKEN: string;

/** The server's `code`/`detail` (protocol.md "Error codes"), an `http:error:<status>`, or a `client:error:*`. */
export declare class ParlorError extends Error {
  constructor(code: string, detail?: string, options?: { status?: number; requestType?: string });
  readonly code: string;
  readonly detail?: string;
  /** The HTTP status for HTTP calls (0: unreachable); undefined over the WebSocket. */
  readonly status?: number;
  /** The request type of a WebSocket request that failed. */
  readonly requestType?: string;
}

export declare class ExpectationError extends Error {
  /** Every event the session had received when the expectation failed. */
  readonly received: ParlorEvent[];
}

export interface User { id: string; name: string }
export interface Member {
  member_id: string;
  user: User;
  state: 'JOINED' | 'LEFT';
  timestamp: { joined: string; left?: string };
  media: { audio_settings: { enabled: boolean; muted: boolean } };
  role: 'moderator' | 'speaker' | 'listener';
  hand_raised: boolean;
  hand_raised_at: string | null;
}
export interface RoomProperties { mode?: 'open' | 'stage'; e2ee?: boolean; ttl?: number; max_members?: number | null }
export interface Room {
  id: string; name: string; display_name: string; created_at?: string; created_by?: string | null;
  member_count?: number; last_event_id?: number; closed_at?: string; locked?: boolean;
  properties: RoomProperties;
  [key: string]: unknown;
}
export interface AuthReply { name: string; jwt: string; user_id: string; expires_at: string; claim: string }
/** An event: a message without a tid. `id` is absent for events that are not stored. */
export interface ParlorEvent {
  type: string; cid?: string; id?: number; from?: string; timestamp?: string;
  body?: { member_id?: string; user?: User; reason?: string; [key: string]: unknown };
}
export interface JoinReply {
  member_id: string; cid: string; members: Member[]; last_event_id: number;
  mode?: 'open' | 'stage'; locked?: boolean; role?: Member['role']; presence?: 'full' | 'summary';
  recording?: unknown; e2ee?: boolean; audience_count?: number; audience_cursor?: string;
}
export interface ResumeResult {
  resumed: string[];
  lost: string[];
  /** room id → membership-ended, too-far-behind, history-pruned, presence-summarised, or the resume's error code */
  lostReasons: Record<string, string>;
  reply?: Record<string, unknown>;
  error?: ParlorError;
}
export type SessionState = 'connecting' | 'connected' | 'reconnecting' | 'offline' | 'closed';
/** A function, an event type, or fields that must all hold (any other key is compared with body[key]). */
export type Matcher = ((event: ParlorEvent) => boolean)
  | string
  | { type?: string; room?: string; name?: string; member?: string; reason?: string; [bodyKey: string]: unknown };

export interface SessionOptions {
  /** Delays between reconnect attempts (±20 %); after the last, the session goes offline. */
  backoffMs?: number[];
  requestTimeoutMs?: number;
  /** 0: no pings. */
  pingIntervalMs?: number;
  /** Asked for a fresh token after close 4001 (token expired). */
  renewToken?: (() => Promise<string>) | null;
  maxRecorded?: number;
}

export interface ClaimStore { get(name: string): string | undefined | null; set(name: string, claim: string): unknown }

export declare class Parlor {
  constructor(url?: string, options?: { token?: string | null; adminToken?: string | null; claims?: ClaimStore; session?: SessionOptions });
  readonly url: string;
  token: string | null;
  adminToken: string | null;
  claims: ClaimStore;
  readonly sessions: Set<Session>;
  http<T = any>(method: string, path: string, options?: { token?: string | null; body?: unknown }): Promise<T>;
  /** POST /auth, sending the claim kept for this name and keeping the one returned. */
  auth(name: string, options?: { code?: string; claim?: string }): Promise<AuthReply>;
  rooms(options?: { token?: string }): Promise<Room[]>;
  room(id: string, options?: { token?: string }): Promise<Room>;
  createRoom(displayName: string, options?: { name?: string; properties?: RoomProperties; token?: string }): Promise<Room>;
  connect(token?: string | null, options?: SessionOptions): Promise<Session>;
  /** auth(name) + connect(), renewing the token with the kept claim when it expires. */
  session(name: string, options?: SessionOptions): Promise<Session>;
  /** Test mode: closes the member's connections like a network failure. */
  dropMember(roomId: string, memberId: string): Promise<unknown>;
  kickMember(roomId: string, memberId: string): Promise<unknown>;
  /** Test mode: deletes all data; sessions are closed with 4004. */
  reset(): Promise<unknown>;
  admin<T = any>(method: string, path: string, body?: unknown): Promise<T>;
  closeSessions(): Promise<void>;
}

export declare class Session {
  readonly server: Parlor;
  token: string;
  readonly state: SessionState;
  readonly sessionId: string | null;
  /** The last session:success body. */
  readonly info: { session_id: string; user: User; ice_servers: unknown[]; max_audio_senders?: number; media?: { mode: 'sfu' | 'mesh'; slots?: number } } | null;
  readonly iceServers: unknown[];
  /** Joined rooms, resumed after a drop: cid → member id and the last event id seen. */
  readonly rooms: Map<string, { memberId: string; lastEventId: number }>;
  /** Why the session went offline: client:error:reconnect-failed, session:error:server-reset (4004), session:error:taken-over (4005), auth:error:invalid-token (4003). */
  readonly endError: ParlorError | null;
  readonly received: ParlorEvent[];
  /** The close code of the last socket lost (4000: dropped by the client itself). */
  readonly lastCloseCode?: number;
  readonly resumes: (ResumeResult & { afterDrop: number })[];

  on(kind: 'event', listener: (event: ParlorEvent) => void): () => void;
  on(kind: 'state', listener: (state: SessionState) => void): () => void;
  on(kind: 'session', listener: (body: NonNullable<Session['info']>, isReconnect: boolean) => void): () => void;
  on(kind: 'resumed', listener: (result: ResumeResult) => void): () => void;
  on(kind: 'error', listener: (error: ParlorError) => void): () => void;

  /** Opens the socket and keeps it open (reconnecting with backoff); connect() does this and waits. */
  open(): void;
  connect(): Promise<Session>;
  retry(): void;
  close(): Promise<void>;

  request<T = any>(type: string, body?: Record<string, unknown>, options?: { timeoutMs?: number }): Promise<T>;
  ping(): Promise<{}>;
  join(cid: string, options?: { e2ee?: boolean }): Promise<JoinReply>;
  leave(cid: string): Promise<{}>;
  members(cid: string, options?: { pageSize?: number; cursor?: string; order?: 'asc' | 'desc'; state?: 'JOINED' | 'LEFT' | 'ALL'; role?: Member['role']; hands?: boolean }): Promise<{ cid: string; members: Member[]; cursor?: string }>;
  events(cid: string, options?: { since?: number | string; pageSize?: number }): Promise<{ cid: string; events: ParlorEvent[]; cursor?: string }>;
  watch(cid: string): Promise<{ cid: string; last_event_id: number }>;
  unwatch(cid: string): Promise<{ cid: string }>;
  enableAudio(cid: string): Promise<{}>;
  disableAudio(cid: string): Promise<{}>;
  mute(cid: string): Promise<{}>;
  unmute(cid: string): Promise<{}>;
  setSpeaking(cid: string, speaking: boolean): Promise<{}>;
  sendOffer(cid: string, to: string, sdp: string): Promise<{}>;
  sendAnswer(cid: string, to: string, sdp: string): Promise<{}>;
  sendIce(cid: string, to: string, candidate: unknown): Promise<{}>;
  mediaOffer(cid: string, sdp: string, options?: { e2ee?: boolean }): Promise<{ sdp: string; [key: string]: unknown }>;
  mediaClose(cid: string): Promise<{}>;
  raiseHand(cid: string): Promise<{}>;
  lowerHand(cid: string, memberId?: string): Promise<{}>;
  setRole(cid: string, memberId: string, role: Member['role']): Promise<{}>;
  ban(cid: string, userId: string, seconds: number): Promise<{ until: string }>;
  muteAll(cid: string): Promise<{ muted: number }>;
  lock(cid: string): Promise<{}>;
  unlock(cid: string): Promise<{}>;
  sendMessage(cid: string, text: string): Promise<{ id: number }>;
  sendCiphertext(cid: string, ciphertext: string): Promise<{ id: number }>;
  react(cid: string, emoji: string): Promise<{}>;
  startRecording(cid: string): Promise<{ recording_id: string; started_at: string }>;
  stopRecording(cid: string, recordingId?: string): Promise<{ recording_id: string }>;
  sendKey(cid: string, body: Record<string, unknown>): Promise<{}>;
  setStreamPublic(cid: string, isPublic: boolean): Promise<{ public: boolean; listeners: number }>;

  /** Cuts the socket as a network failure would; the session reconnects and resumes. */
  simulateNetworkDrop(): void;
  pauseReconnects(): void;
  resumeReconnects(): void;
  /** The first matching event after the previous match, or ExpectationError listing every event received. */
  expect(matcher: Matcher, options?: { timeout?: number }): Promise<ParlorEvent>;
  /** Fails at the first matching event after the previous match within `timeout` ms. */
  expectNone(matcher: Matcher, options?: { timeout?: number }): Promise<void>;
  skipToNow(): void;
  expectState(state: SessionState, options?: { timeout?: number }): Promise<SessionState>;
  /** The resume after the latest drop. */
  expectResumed(options?: { timeout?: number }): Promise<ResumeResult>;
}

export declare function matcher(spec: Matcher): { test(event: ParlorEvent): boolean; description: string };
