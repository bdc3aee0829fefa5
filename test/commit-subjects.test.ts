/**
 * .ci/commit-subjects, the CI step that holds new commits to "area: subject" in at most 72 characters, run against
 * scratch repositories: a full one from a given base, and a shallow clone that does not reach the base.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const SCRIPT = join(import.meta.dirname, '..', '.ci', 'commit-subjects');
const scratch = mkdtempSync(join(tmpdir(), 'sentinel-commit-subjects-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const IDENTITY = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' };

function git(cwd: string, ...args: string[]): string {
  const result = spawnSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, ...IDENTITY } });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
  return result.stdout.trim();
}

/** A repository whose history is `subjects`, oldest first; returns its path and each commit's hash. */
function repository(name: string, subjects: string[]): { dir: string; commits: string[] } {
  const dir = join(scratch, name);
  git(scratch, 'init', '-q', dir);
  const commits = subjects.map((subject, index) => {
    writeFileSync(join(dir, 'file.txt'), `${index}\n`);
    git(dir, 'add', 'file.txt');
    git(dir, 'commit', '-q', '-m', subject);
    return git(dir, 'rev-parse', 'HEAD');
  });
  return { dir, commits };
}

function check(cwd: string, base?: string): { status: number | null; output: string } {
  const result = spawnSync(SCRIPT, base === undefined ? [] : [base], { cwd, encoding: 'utf8' });
  return { status: result.status, output: result.stdout + result.stderr };
}

describe('.ci/commit-subjects', () => {
  const old = 'Bench: an old subject from before the rule, which is far longer than seventy-two characters';
  const good = [
    'docs: say what the guard checks',
    'second-factor: take the pending step only once',
    'keys/signers: name the slot → label map',
  ];

  it('passes commits after the base that read "area: subject" within 72 characters', () => {
    // 72 characters but 74 bytes: the limit counts characters.
    const { dir, commits } = repository('good', [old, ...good, `ci: ${'x'.repeat(66)} →`]);
    const result = check(dir, commits[0]);
    expect(result.output).toContain('4 checked, 0 to reword');
    expect(result.status).toBe(0);
  });

  it('fails on a long subject, a capitalised area and a subject without an area, and names each', () => {
    const bad = [`ci: ${'x'.repeat(69)}`, 'Bench: measure the guard', 'measure the guard', 'docs:no space'];
    const { dir, commits } = repository('bad', [old, ...good, ...bad]);
    const result = check(dir, commits[0]);
    expect(result.status).toBe(1);
    expect(result.output).toContain('7 checked, 4 to reword');
    expect(result.output).toContain(`${commits[4]?.slice(0, 7)}: subject is 73 characters (at most 72)`);
    for (const subject of bad.slice(1))
      expect(result.output).toContain(`subject is not 'area: subject' (area lowercase, - or / between words): ${subject}`);
  });

  it('checks every commit a shallow clone holds when the base is not among them', () => {
    const { dir, commits } = repository('deep', [old, 'docs: one', 'Docs: two']);
    const shallow = join(scratch, 'shallow');
    git(scratch, 'clone', '-q', '--depth', '1', `file://${dir}`, shallow);
    const result = check(shallow, commits[0]);
    expect(result.output).toContain('shallow clone without');
    expect(result.output).toContain('1 checked, 1 to reword');
    expect(result.status).toBe(1);
  });

  it('refuses a full clone that lacks the base rather than guess the range', () => {
    const { dir } = repository('other', ['docs: one']);
    const result = check(dir, '0123456789abcdef0123456789abcdef01234567');
    expect(result.output).toContain('is not in this history');
    expect(result.status).toBe(1);
  });

  it('starts, in this repository, from a base that exists', () => {
    const result = check(join(import.meta.dirname, '..'));
    expect(result.output).toMatch(/commit subjects: \d+ checked/);
  });
});
