import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** The pages a reader follows: the front page, every docs page, the bench figures. */
const PAGES = [
  'README.md',
  'bench/README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as dashes. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, '')
    .replace(/[^\p{L}\p{N} -]/gu, '')
    .replace(/ /g, '-');
}

function anchors(page: string): Set<string> {
  const text = read(page).replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1] ?? '')));
}

/** `[label](target)` links outside code, without their images' `!`. */
function links(page: string): string[] {
  const text = read(page)
    .replace(/```[\s\S]*?```/g, '')
    .replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] ?? '');
}

/** Every text file of the project (not dependencies, build output or local data). */
function projectFiles(dir = ROOT): string[] {
  const skip = new Set(['node_modules', '.git', 'dist', 'data', 'coverage']);
  return readdirSync(dir).flatMap((name) => {
    if (skip.has(name)) return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return projectFiles(path);
    return /\.(ts|mjs|js|json|md|yml|yaml|sql|example)$|^\.|^LICENSE$/.test(name) ? [path] : [];
  });
}

describe('README and docs', () => {
  it('every relative link points to a file that exists (and to a heading that exists)', () => {
    const broken: string[] = [];
    for (const page of PAGES) {
      for (const link of links(page)) {
        if (/^[a-z]+:/.test(link)) continue;
        const [path = '', anchor] = link.split('#');
        const target = path === '' ? page : relative(ROOT, resolve(ROOT, dirname(page), path));
        if (!existsSync(join(ROOT, target))) broken.push(`${page}: ${link} (no ${target})`);
        else if (anchor && target.endsWith('.md') && !anchors(target).has(anchor))
          broken.push(`${page}: ${link} (no heading #${anchor} in ${target})`);
      }
    }
    expect(broken).toEqual([]);
    expect(links('README.md').length).toBeGreaterThan(10);
  });

  it('nothing refers to a design document that is not in the repository', () => {
    const name = ['DESIGN', 'md'].join('.');
    const mentions = projectFiles()
      .filter((file) => readFileSync(file, 'utf8').includes(name))
      .map((file) => relative(ROOT, file));
    expect(mentions).toEqual([]);
  });

  it("the HTTP-mode manifest snippet in docs/installing.md has manifest.yml's slash command fields", () => {
    const fields = (yaml: string): Record<string, string> => {
      const block = /^ {2}slash_commands:\n((?: {4}.*\n)+)/m.exec(yaml)?.[1] ?? '';
      return Object.fromEntries(
        [...block.matchAll(/^ {4}[- ] (\w+): (.*)$/gm)].map((m) => [
          m[1] ?? '',
          (m[2] ?? '').replace(/ #.*$/, '').trim(),
        ]),
      );
    };
    const manifest = fields(read('manifest.yml'));
    const snippet = /```yaml\n([\s\S]*?)```/.exec(
      read('docs/installing.md').split('## HTTP mode')[1] ?? '',
    )?.[1];
    const documented = fields(snippet ?? '');
    expect(Object.keys(manifest)).toEqual(
      expect.arrayContaining(['command', 'description', 'usage_hint', 'should_escape']),
    );
    const { url, ...rest } = documented;
    expect(url).toBe('https://bot.example.com/slack/events');
    expect(rest).toEqual(manifest);
  });

  it('the license the README names is there, and package.json says the same', () => {
    expect(read('README.md')).toContain('MIT');
    expect(read('LICENSE')).toMatch(/^MIT License/);
    expect(JSON.parse(read('package.json')).license).toBe('MIT');
  });

  it('.gitignore keeps secrets, databases and their backups, audit exports and MCP servers files out of git', () => {
    const patterns = read('.gitignore').split('\n');
    for (const pattern of ['.env', '*.db', '*.csv', '*.jsonl', 'mcp-servers.json', 'mcp*.json'])
      expect(patterns).toContain(pattern);
  });
});
