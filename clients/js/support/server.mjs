// One `parlor serve --dev --port 0` per test file (PARLOR_BIN, else the worktree's .build/debug/parlor), wiped
// between tests through the test-mode admin route, stopped by PID at the end.
import { before, after, afterEach } from 'node:test';
import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';
import { startParlor } from '../node.js';

export const repo = fileURLToPath(new URL('../../../', import.meta.url));
export const bin = resolve(process.env.PARLOR_BIN || `${repo}.build/debug/parlor`);  // absolute: the recipe runs elsewhere

/** Registers the server's hooks; the returned object's `server` is set once it listens. */
export function useServer(args = ['--grace-period', '1']) {
  const context = { server: null };
  before(async () => { context.server = await startParlor({ bin, args }); });
  afterEach(async () => { await context.server?.reset(); });
  after(async () => { await context.server?.stop(); });
  return context;
}
