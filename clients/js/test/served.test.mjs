// The server serves this very file at /sdk/parlor.js (Sources/ParlorApp/Web/sdk links here): one copy in git.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { useServer } from '../support/server.mjs';

const context = useServer();

test('/sdk/parlor.js and /sdk/parlor.d.ts are clients/js/parlor.js and parlor.d.ts', { timeout: 20000 }, async () => {
  for (const name of ['parlor.js', 'parlor.d.ts']) {
    const response = await fetch(`${context.server.url}/sdk/${name}`);
    assert.equal(response.status, 200, `/sdk/${name}`);
    const served = Buffer.from(await response.arrayBuffer());
    const onDisk = await readFile(new URL(`../${name}`, import.meta.url));
    assert.ok(served.equals(onDisk), `/sdk/${name} differs from clients/js/${name}`);
  }
  const type = (await fetch(`${context.server.url}/sdk/parlor.js`)).headers.get('content-type');
  assert.match(type, /^text\/javascript/);
});
