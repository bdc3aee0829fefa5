/**
 * Every relative link of the documents a reader starts from (README.md, SECURITY.md, CONTRIBUTING.md, docs/*.md,
 * docs/guides/*.md) points at a file of the repository, and every `#anchor` at a heading of its target, so moving a
 * section or a file cannot leave a dead link behind. Links inside code blocks and to other sites are not checked.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/dist.js';

const DOCUMENTS = [
  'README.md',
  'SECURITY.md',
  'CONTRIBUTING.md',
  ...['docs', 'docs/guides'].flatMap((folder) =>
    existsSync(join(ROOT, folder))
      ? readdirSync(join(ROOT, folder))
          .filter((name) => name.endsWith('.md'))
          .map((name) => `${folder}/${name}`)
      : [],
  ),
].filter((file) => existsSync(join(ROOT, file)));

/** The text outside fenced code blocks and inline code. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-');
}

function anchors(file: string): Set<string> {
  const found = new Set<string>();
  const text = readFileSync(join(ROOT, file), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  for (const match of text.matchAll(/^#{1,6} (.+)$/gm)) {
    const base = anchorOf(match[1] ?? '');
    let name = base;
    for (let n = 1; found.has(name); n++) name = `${base}-${n}`;
    found.add(name);
  }
  for (const match of text.matchAll(/<a (?:name|id)="([^"]+)"/g)) found.add(match[1] ?? '');
  return found;
}

interface Link {
  from: string;
  target: string;
}

function links(): Link[] {
  const all: Link[] = [];
  for (const from of DOCUMENTS) {
    const text = prose(readFileSync(join(ROOT, from), 'utf8'));
    for (const match of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)|<img [^>]*src="([^"]+)"/g)) {
      const target = match[1] ?? match[2] ?? '';
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      all.push({ from, target });
    }
  }
  return all;
}

/** Why a link does not resolve, or null when it does. */
function brokenReason({ from, target }: Link): string | null {
  const [path = '', fragment] = target.split('#');
  const file = path === '' ? from : normalize(join(dirname(from), decodeURIComponent(path)));
  if (relative(ROOT, join(ROOT, file)).startsWith('..')) return 'leaves the repository';
  if (!existsSync(join(ROOT, file))) return `${file} does not exist`;
  if (fragment === undefined || fragment === '') return null;
  if (!file.endsWith('.md') || statSync(join(ROOT, file)).isDirectory()) return null;
  return anchors(file).has(fragment) ? null : `${file} has no heading #${fragment}`;
}

describe('relative links in the documentation', () => {
  const found = links();

  it('are found in README.md and the guides', () => {
    expect(found.filter((link) => link.from === 'README.md').length).toBeGreaterThan(20);
    expect(found.filter((link) => link.from.startsWith('docs/guides/')).length).toBeGreaterThan(20);
  });

  it('all resolve to a file, and an anchor to a heading of it', () => {
    const broken = found.flatMap((link) => {
      const reason = brokenReason(link);
      return reason === null ? [] : [`${link.from}: (${link.target}) ${reason}`];
    });
    expect(broken).toEqual([]);
  });

  it('would catch a missing file and a missing heading', () => {
    expect(brokenReason({ from: 'README.md', target: 'docs/guides/no-such-guide.md' })).toMatch(/does not exist/);
    expect(brokenReason({ from: 'README.md', target: '#no-such-heading' })).toMatch(/no heading/);
    expect(brokenReason({ from: 'README.md', target: '#install' })).toBeNull();
    expect(anchorOf('DPoP, `private_key_jwt` and pushed authorization requests')).toBe(
      'dpop-private_key_jwt-and-pushed-authorization-requests',
    );
  });
});
