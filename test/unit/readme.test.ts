import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AUDIT_USAGE } from '../../src/cli/audit-cli.js';
import { DB_USAGE } from '../../src/cli/db-cli.js';
import { POLICY_USAGE } from '../../src/cli/policy-cli.js';
import { loadConfig } from '../../src/config.js';
import { SLOW_SUITES } from '../../vitest.fast.config.js';

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

/** One variable of `envSchema` in src/config-schema.ts: its name and the text of its zod chain. */
interface SchemaVariable {
  name: string;
  chain: string;
}

/** The variables src/config-schema.ts reads: the keys of its `envSchema = z.object({ … })`, read from its text. */
function configVariables(): SchemaVariable[] {
  const source = read('src/config-schema.ts');
  const block = /const envSchema = z\.object\(\{\n([\s\S]*?)\n\}\);/.exec(source)?.[1] ?? '';
  const starts = [...block.matchAll(/^ {2}([A-Z][A-Z0-9_]*):/gm)];
  return starts.map((match, i) => ({
    name: match[1] ?? '',
    chain: block.slice(match.index, starts[i + 1]?.index ?? block.length),
  }));
}

/** The rows of a configuration table: the variables each names, and its meaning and default cells. */
function configRows(
  section = read('docs/configuration.md'),
): { names: string[]; meaning: string; fallback: string }[] {
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => {
      const [first = '', meaning = '', fallback = ''] = line.split(' | ').map((cell) => cell.trim());
      const names = [...first.replace(/^\| /, '').matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1] ?? '');
      return { names, meaning, fallback: fallback.replace(/ \|$/, '') };
    });
}

/** `30_000` → `30000`; a quoted string without its quotes. */
const literal = (text: string) => text.replace(/_/g, '').replace(/^'(.*)'$/, '$1');

/** The variables `.env.example` shows, set or commented out (`# NAME=value`), with their example values. */
function envExampleVariables(): { name: string; value: string; commented: boolean }[] {
  return [...read('.env.example').matchAll(/^(# )?([A-Z][A-Z0-9_]*)=(.*)$/gm)].map((m) => ({
    name: m[2] ?? '',
    value: m[3] ?? '',
    commented: m[1] !== undefined,
  }));
}

/** The kinds of the `AuditKind` union in src/audit/audit-event.ts. */
function auditKinds(): string[] {
  const union = /export type AuditKind =([\s\S]*?);/.exec(read('src/audit/audit-event.ts'))?.[1] ?? '';
  return [...union.matchAll(/'([a-z_.]+)'/g)].map((m) => m[1] ?? '');
}

/** Every TypeScript file under a folder of src/. */
function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => `${dir}/${name}`);
}

/** Slack Web API methods that need no scope of their own (token checks, views, permalinks). */
const METHODS_WITHOUT_SCOPE = new Set([
  'auth.test',
  'auth.teams.list',
  'apps.connections.open',
  'views.open',
  'views.update',
  'views.publish',
  'chat.getPermalink',
]);

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

  it('docs/configuration.md lists every variable src/config-schema.ts reads, and nothing else', () => {
    const read = configVariables().map((v) => v.name);
    expect(read.length).toBeGreaterThan(40);
    const documented = configRows().flatMap((row) => row.names);
    expect(read.filter((name) => !documented.includes(name))).toEqual([]);
    expect(documented.filter((name) => !read.includes(name))).toEqual([]);
    expect(new Set(documented).size).toBe(documented.length);
  });

  it("the README's short configuration table quotes docs/configuration.md's rows word for word (links aside)", () => {
    const readme = read('README.md').split('## Configuration')[1]?.split('\n## ')[0] ?? '';
    // The same links, written from the README's folder.
    const rows = readme
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) => line.replaceAll('](docs/', ']('));
    expect(rows.length).toBeGreaterThan(5);
    const full = read('docs/configuration.md').split('\n');
    expect(rows.filter((row) => !full.includes(row))).toEqual([]);
  });

  it("docs/configuration.md gives each variable's default and range as src/config-schema.ts has them", () => {
    const rows = configRows();
    const wrong: string[] = [];
    for (const { name, chain } of configVariables()) {
      const row = rows.find((r) => r.names.includes(name));
      if (!row) continue;
      const fallback = /\.default\(('[^']*'|[\d_]+|true|false)\)/.exec(chain)?.[1];
      if (fallback !== undefined) {
        const expected = literal(fallback);
        const ok = expected === '' ? row.fallback === 'empty' : row.fallback.includes(`\`${expected}\``);
        if (!ok) wrong.push(`${name}: default ${expected || '(empty)'}, README says ${row.fallback}`);
      }
      // `.min(1)` of zod, or `{ min: 1, max: 100 }` of wholeNumber.
      const min = /(?:\.min\(|\bmin: )([\d_]+)/.exec(chain)?.[1];
      const max = /(?:\.max\(|\bmax: )([\d_]+)/.exec(chain)?.[1];
      if (min !== undefined && max !== undefined && !row.meaning.includes(`${literal(min)}–${literal(max)}`))
        wrong.push(`${name}: range ${literal(min)}–${literal(max)} missing from "${row.meaning}"`);
    }
    expect(wrong).toEqual([]);
  });

  it('.env.example shows every variable src/config-schema.ts reads, only those, optional ones commented out', () => {
    const read = configVariables().map((v) => v.name);
    const shown = envExampleVariables();
    expect(read.filter((name) => !shown.some((v) => v.name === name))).toEqual([]);
    expect(shown.filter((v) => !read.includes(v.name)).map((v) => v.name)).toEqual([]);
    // Set (not commented out): what the quick start says to fill in, and the HTTP-mode secret left empty.
    expect(shown.filter((v) => !v.commented).map((v) => v.name)).toEqual([
      'SLACK_BOT_TOKEN',
      'SLACK_APP_TOKEN',
      'SLACK_SIGNING_SECRET',
      'OPENAI_API_KEY',
      'ADMIN_USER_IDS',
    ]);
  });

  it('every example value commented out in .env.example is one the bot accepts', () => {
    const refused: string[] = [];
    for (const { name, value, commented } of envExampleVariables()) {
      if (!commented || value === '') continue;
      const result = loadConfig({ OPENAI_API_KEY: 'sk-test', [name]: value }, 'audit');
      const problems = result.ok ? [] : result.problems.filter((p) => p.startsWith(`${name}:`));
      refused.push(...problems);
    }
    expect(refused).toEqual([]);
  });

  it('every test file the docs name exists (the promise → test table of docs/architecture.md too)', () => {
    const testFiles = projectFiles(join(ROOT, 'test')).map((file) => relative(ROOT, file));
    const missing: string[] = [];
    for (const page of PAGES) {
      const text = read(page);
      for (const [path] of text.matchAll(/\btest\/[\w./-]+\.ts\b/g))
        if (!existsSync(join(ROOT, path))) missing.push(`${page}: ${path}`);
      // Bare file names (`crash-stages-sqlite.test.ts`) name a file somewhere under test/.
      for (const [, name] of text.matchAll(/`([\w.-]+\.test\.ts)`/g))
        if (!testFiles.some((file) => file.endsWith(`/${name}`))) missing.push(`${page}: ${name}`);
    }
    expect(missing).toEqual([]);
    const promises = read('docs/architecture.md').split('## Which test proves which promise')[1] ?? '';
    expect([...promises.matchAll(/`test\/[\w./-]+\.ts`/g)].length).toBeGreaterThan(20);
  });

  it('docs/testing.md lists exactly the slow suites of vitest.fast.config.ts that npm run test:fast leaves out', () => {
    const section =
      read('docs/testing.md').split('### Suites only `npm test` runs')[1]?.split('\n#')[0] ?? '';
    const listed = [...section.matchAll(/^- `([^`]+)`/gm)].map((m) => m[1] ?? '');
    expect(listed).toEqual([...SLOW_SUITES]);
  });

  it('docs/audit.md describes every kind of audit event the code writes, and no other', () => {
    const kinds = auditKinds();
    expect(kinds.length).toBeGreaterThan(20);
    const table = read('docs/audit.md').split('## The log')[1]?.split('\n## ')[0] ?? '';
    const rows = table.split('\n').filter((line) => line.startsWith('| `'));
    const documented = rows.flatMap((row) =>
      [...(row.split(' | ')[0] ?? '').matchAll(/`([a-z_.]+)`/g)].map((m) => m[1] ?? ''),
    );
    expect(kinds.filter((kind) => !documented.includes(kind))).toEqual([]);
    expect(documented.filter((kind) => !kinds.includes(kind))).toEqual([]);
  });

  it('manifest.yml subscribes to exactly the events the listeners register', () => {
    const manifest = read('manifest.yml');
    const subscribed = [
      ...(/^ {4}bot_events:\n((?: {6}- .*\n)+)/m.exec(manifest)?.[1] ?? '').matchAll(/- ([\w.]+)/g),
    ].map((m) => m[1] ?? '');
    const code = sourceFiles('src/slack').map(read).join('\n');
    const listened = new Set([...code.matchAll(/app\.event\('([\w.]+)'/g)].map((m) => m[1] ?? ''));
    // app.message hears every message event the manifest subscribes to.
    const hearsMessages = /app\.message\(/.test(code);
    expect(
      subscribed.filter((event) => !(listened.has(event) || (hearsMessages && event.startsWith('message.')))),
    ).toEqual([]);
    expect([...listened].filter((event) => !subscribed.includes(event))).toEqual([]);
    expect(subscribed).toEqual(
      expect.arrayContaining(['message.channels', 'message.groups', 'message.im', 'message.mpim']),
    );
  });

  it("every Slack method the code calls is named in manifest.yml's scope comments, unless it needs no scope", () => {
    const manifest = read('manifest.yml');
    const code = [...sourceFiles('src/slack'), ...sourceFiles('src/cli'), ...sourceFiles('src/compose')]
      .map(read)
      .join('\n');
    const called = new Set(
      [
        ...code.matchAll(
          /\b(?:client|WebClient\([^)]*\))\.((?:chat|views|users|usergroups|conversations|reactions|assistant|agents|auth|apps)(?:\.\w+)+)\(/g,
        ),
      ].map((m) => m[1] ?? ''),
    );
    expect(called.size).toBeGreaterThan(10);
    const unnamed = [...called].filter(
      (method) => !METHODS_WITHOUT_SCOPE.has(method) && !manifest.includes(method),
    );
    expect(unnamed).toEqual([]);
  });

  it("every npm run audit, db, policy and chat command the docs show uses a subcommand and flags of that CLI's usage", () => {
    const chat = /const USAGE = '([^']+)'/.exec(read('src/chat.ts'))?.[1] ?? '';
    const usage: Record<string, string> = { audit: AUDIT_USAGE, db: DB_USAGE, policy: POLICY_USAGE, chat };
    const scripts = JSON.parse(read('package.json')).scripts as Record<string, string>;
    const wrong: string[] = [];
    let checked = 0;
    for (const page of PAGES) {
      for (const [command, script = '', rest = ''] of read(page).matchAll(
        /npm run (?:--silent |-s )?([\w:]+)(?: -- ([^\n`|&#]*))?/g,
      )) {
        if (!(script in scripts)) wrong.push(`${page}: ${command} (no script "${script}")`);
        const text = usage[script];
        if (text === undefined) continue;
        // Optional parts are written in brackets: `[--since 30d]`.
        const words = rest
          .trim()
          .split(/\s+/)
          .map((word) => word.replace(/^\[/, ''))
          .filter((word) => word !== '' && word !== '…');
        const sub = words[0]?.startsWith('-') ? undefined : words[0];
        if (
          script === 'chat'
            ? sub !== undefined
            : sub !== undefined &&
              !new RegExp(`^\\s*(?:Usage: )?(?:npm run ${script} -- )?${sub}\\b`, 'm').test(text)
        )
          wrong.push(`${page}: ${command} (no command "${sub}")`);
        for (const flag of words
          .filter((word) => word.startsWith('--'))
          .map((word) => word.replace(/[=[\]].*$/, '')))
          if (!text.includes(flag)) wrong.push(`${page}: ${command} (no option ${flag})`);
        checked++;
      }
    }
    expect(wrong).toEqual([]);
    expect(checked).toBeGreaterThan(30);
  });

  it("a doc example whose output is piped or captured runs npm silently (-s), so npm's header is not in it", () => {
    const loud: string[] = [];
    for (const page of PAGES)
      for (const [example] of read(page).matchAll(
        /(?:\$\(|`)?npm run (?!-s |--silent )[\w:]+(?: -- [^\n`|)]*)? *(?:\||\))[^\n]*/g,
      ))
        if (!example.startsWith('`') && (example.includes('|') || example.startsWith('$(')))
          loud.push(`${page}: ${example}`);
    expect(loud).toEqual([]);
  });

  it('the README stays a front page: details belong in docs/', () => {
    expect(Buffer.byteLength(read('README.md'))).toBeLessThan(12_000);
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

  it('.gitignore covers every key file the docs and .env.example create, should one be made in the project folder', () => {
    const ignored = read('.gitignore')
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('#') && !line.includes('/'))
      .map((glob) => new RegExp(`^${glob.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}$`));
    const keyFiles = new Set<string>();
    for (const page of [...PAGES, '.env.example']) {
      const text = read(page);
      // openssl genpkey/pkey -out FILE, ssh-keygen -f FILE, and settings naming a key file.
      for (const [, path = ''] of text.matchAll(/(?:-out|-f) +"?([^\s"`)]+)/g)) keyFiles.add(path);
      for (const [, path = ''] of text.matchAll(/_KEY=([^\s`]+\.(?:pem|key))\b/g)) keyFiles.add(path);
    }
    const names = [...keyFiles]
      .map((path) => path.split('/').pop() ?? '')
      .filter((n) => /\.(pem|key)$/.test(n));
    expect(names).toEqual(expect.arrayContaining(['audit-signing.pem', 'audit-signing.pub.pem']));
    expect(names.filter((name) => !ignored.some((glob) => glob.test(name)))).toEqual([]);
  });

  it('the docs keep the audit signing key outside the project folder, with mode 0600', () => {
    const signing = read('docs/audit.md').split('## Signed checkpoints')[1]?.split('\n## ')[0] ?? '';
    expect(signing).toMatch(/openssl genpkey [^\n]*-out audit-signing\.pem/);
    expect(signing).toMatch(
      /mkdir -p -m 700 ~\/\.config\/slack-approval-agent && cd ~\/\.config\/slack-approval-agent/,
    );
    expect(signing).toContain('chmod 600 audit-signing.pem');
    const example = /^# AUDIT_SIGNING_KEY=(.*)$/m.exec(read('.env.example'))?.[1] ?? '';
    expect(example).toMatch(/^\/etc\//);
  });
});
