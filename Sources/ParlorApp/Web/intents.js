// What a view asks for that another module carries out: the lobby asks to join a room or to renew the token, and
// app.js says who answers. Modules import downwards only (session → lobby, room → lobby, events → room), so the
// lobby names no module above it and the import graph has no circle.
const handlers = new Map();

/** Says which function carries out `intent`; one handler per intent, set once by app.js. */
export function handle(intent, handler) {
  if (handlers.has(intent)) throw new Error(`intent ${intent} already has a handler`);
  handlers.set(intent, handler);
}

/** Asks for `intent`; returns whatever its handler returns (a promise for async ones). */
export function request(intent, ...args) {
  const handler = handlers.get(intent);
  if (!handler) throw new Error(`intent ${intent} has no handler`);
  return handler(...args);
}
