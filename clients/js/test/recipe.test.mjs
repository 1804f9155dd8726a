// docs/testing.md's JavaScript recipes (each ```js block after `<!-- recipe: javascript -->`), run as written with
// node --test in a temporary directory, parlor.js and node.js copied beside them as the docs say.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, writeFile, copyFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repo, bin } from '../support/server.mjs';

export function extractRecipes(markdown) {
  return [...markdown.matchAll(/^<!-- recipe: javascript -->\n```js\n([\s\S]*?)\n```$/gm)].map((found) => found[1]);
}

test('docs/testing.md has JavaScript recipes and they pass under node --test', { timeout: 90000 }, async () => {
  const recipes = extractRecipes(await readFile(join(repo, 'docs/testing.md'), 'utf8'));
  assert.ok(recipes.length >= 2, 'docs/testing.md should have the rooms and the audio <!-- recipe: javascript --> blocks');
  const tests = recipes.reduce((count, recipe) => count + (recipe.match(/^test\(/gm) ?? []).length, 0);
  const work = await mkdtemp(join(tmpdir(), 'parlor-js-recipe-'));
  try {
    const files = recipes.map((_, index) => `recipe-${index}.test.mjs`);
    await Promise.all(recipes.map((recipe, index) => writeFile(join(work, files[index]), recipe)));
    for (const name of ['parlor.js', 'node.js']) await copyFile(join(repo, 'clients/js', name), join(work, name));
    // Without NODE_TEST_CONTEXT, which would make the child report to this runner and skip its files.
    const { NODE_TEST_CONTEXT, ...env } = process.env;
    const child = spawn(process.execPath, ['--test', ...files], {
      cwd: work, env: { ...env, PARLOR_BIN: bin }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => { output += chunk; });
    child.stderr.on('data', (chunk) => { output += chunk; });
    const status = await new Promise((resolve) => child.once('exit', resolve));
    assert.equal(status, 0, `the recipes failed:\n${output}`);
    assert.match(output, new RegExp(`^# pass ${tests}$`, 'm'), `expected the recipes' ${tests} tests to pass:\n${output}`);
    assert.match(output, /^# fail 0$/m);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
});

test('the extraction finds the javascript blocks and only them', () => {
  const markdown = 'x\n<!-- recipe: javascript -->\n```js\nconst a = 1;\n```\nafter\n```js\nno\n```\n'
    + '<!-- recipe: shell -->\n```sh\nls\n```\n<!-- recipe: javascript -->\n```js\nconst b = 2;\n```\n';
  assert.deepEqual(extractRecipes(markdown), ['const a = 1;', 'const b = 2;']);
  assert.deepEqual(extractRecipes('<!-- recipe: shell -->\n```sh\nls\n```'), []);
});
