// What the modules of the web client share: the server and its connection (the JavaScript client, sdk/parlor.js),
// the session, the joined room, and this browser's saved sign-in. Modules read and write `state.*` (an ES module
// cannot assign another module's bindings).
import { Parlor } from './sdk/parlor.js';

export const state = {
  connection: null,   // the Session on /ws (sdk/parlor.js), null when signed out
  session: { id: null, iceServers: [], maxSenders: null, media: { mode: 'mesh' } },
  room: null,         // the joined room, see room.js joinRoom
  resumes: 0,         // rooms resumed after a dropped socket (for the test hook)
};

// Name and token per tab, so two tabs can be two people. The claim secret /auth returns for a name is kept per
// name for the whole browser (localStorage): it is what gets this name's identity back while it is in use (a
// reload, another tab, a reconnect within the grace period); without it the server makes a separate identity.
export const saved = {
  get name() { return sessionStorage.getItem('parlor.name'); },
  get token() { return sessionStorage.getItem('parlor.jwt'); },
  set(name, token) {
    sessionStorage.setItem('parlor.name', name);
    sessionStorage.setItem('parlor.jwt', token);
  },
  clear() { sessionStorage.removeItem('parlor.name'); sessionStorage.removeItem('parlor.jwt'); },
};

/** This page's server; /auth sends the claim kept for the name (localStorage) and keeps the one returned. */
export const server = new Parlor(location.origin, {
  claims: {
    get: (name) => localStorage.getItem(`parlor.claim.${name}`),
    set: (name, claim) => localStorage.setItem(`parlor.claim.${name}`, claim),
  },
});

export function isStage() { return state.room?.mode === 'stage'; }
export function amModerator() { return state.room?.members.get(state.room.memberId)?.role === 'moderator'; }
export function nameOf(id) {
  return state.room?.members.get(id)?.user?.name || state.room?.names.get(id) || 'someone';
}
