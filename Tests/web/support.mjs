// Shared by the web unit tests: members of one room, each with its identity and KeyRing, and a relay that plays
// the server's part (it passes e2ee:key bodies on, as the real server does, without reading them).
import './webcrypto.mjs';
import { MemoryStore, loadOrCreateIdentity } from '../../Sources/ParlorApp/Web/e2ee-identity.js';
import { KeyRing } from '../../Sources/ParlorApp/Web/e2ee-keys.js';

export const ROOM = 'RM-0123456789abcdef0123456789abcdef';

export function memberId(n) {
  return `MEM-${String(n).padStart(32, '0')}`;
}

/** Member n; `members`: the member ids already in the room when it joins. */
export async function makeMember(n, roomId = ROOM, members = []) {
  const store = new MemoryStore();
  const identity = await loadOrCreateIdentity(store, `user-${n}`);
  const id = memberId(n);
  return { id, store, identity, ring: await KeyRing.create({ roomId, memberId: id, identity, members }) };
}

/**
 * Delivers `bodies` from `from` to every member in `room` but the sender (the server broadcasts e2ee:key), then the
 * replies they make, until nobody has anything more to say. Returns every receive() result, in delivery order.
 */
export async function relay(room, from, bodies) {
  const results = [];
  const pending = bodies.map((body) => ({ from, body }));
  while (pending.length > 0) {
    const { from: sender, body } = pending.shift();
    for (const member of room) {
      if (member.id === sender.id) continue;
      const result = await member.ring.receive(sender.id, structuredClone(body));
      results.push({ to: member, from: sender, result });
      if (!result.ok || result.sendTo.length === 0) continue;
      for (const reply of await member.ring.messagesFor(result.sendTo)) pending.push({ from: member, body: reply });
    }
  }
  return results;
}

/** A room of `count` members who joined one after another, each announcing itself as it joins. */
export async function joinAll(count, roomId = ROOM, room = []) {
  for (let n = 0; n < count; n += 1) {
    const member = await makeMember(room.length + 1, roomId, room.map((other) => other.id));
    room.push(member);
    await relay(room, member, await member.ring.announce());
  }
  return room;
}
