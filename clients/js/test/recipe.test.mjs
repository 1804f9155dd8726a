// docs/testing.md's JavaScript recipe (the ```js block after `<!-- recipe: javascript -->`), run as written with
// node --test in a temporary directory, parlor.js copied beside it as the docs say.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, writeFile, copyFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repo, bin } from '../support/server.mjs';

export function extractRecipe(markdown) {
  const found = /^<!-- recipe: javascript -->\n```js\n([\s\S]*?)\n```$/m.exec(markdown);
  return found ? found[1] : null;
}

test('docs/testing.md has a JavaScript recipe and it passes under node --test', { timeout: 60000 }, async () => {
  const recipe = extractRecipe(await readFile(join(repo, 'docs/testing.md'), 'utf8'));
  assert.ok(recipe, 'docs/testing.md has no <!-- recipe: javascript --> ```js block');
  const work = await mkdtemp(join(tmpdir(), 'parlor-js-recipe-'));
  try {
    await writeFile(join(work, 'rooms.test.mjs'), recipe);
    await copyFile(join(repo, 'clients/js/parlor.js'), join(work, 'parlor.js'));
    // Without NODE_TEST_CONTEXT, which would make the child report to this runner and skip its files.
    const { NODE_TEST_CONTEXT, ...env } = process.env;
    const child = spawn(process.execPath, ['--test', 'rooms.test.mjs'], {
      cwd: work, env: { ...env, PARLOR_BIN: bin }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => { output += chunk; });
    child.stderr.on('data', (chunk) => { output += chunk; });
    const status = await new Promise((resolve) => child.once('exit', resolve));
    assert.equal(status, 0, `the recipe failed:\n${output}`);
    const passed = Number(/^# pass (\d+)$/m.exec(output)?.[1]);
    assert.ok(passed >= 3, `expected the recipe's tests to pass, got:\n${output}`);
    assert.match(output, /^# fail 0$/m);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
});

test('the extraction finds the block and only it', () => {
  assert.equal(extractRecipe('x\n<!-- recipe: javascript -->\n```js\nconst a = 1;\n```\nafter\n```js\nno\n```'), 'const a = 1;');
  assert.equal(extractRecipe('<!-- recipe: shell -->\n```sh\nls\n```'), null);
});
