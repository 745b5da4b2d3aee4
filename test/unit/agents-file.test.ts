import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentsFileProblem, parseAgents, readAgentsFile } from '../../src/agent/agents-file.js';

const KNOWN = { builtIn: ['get_current_time', 'create_note', 'list_notes'], mcpServers: ['github'] };

const agent = (name: string, tools: string[] = [], extra: Record<string, unknown> = {}) => ({
  name,
  description: `The ${name} agent.`,
  instructions: `You are ${name}.`,
  tools,
  ...extra,
});

describe('AGENTS_FILE', () => {
  it('reads named agents with their instructions, model, tools (built-in, MCP, other agents) and limit', () => {
    const result = parseAgents(
      {
        agents: [
          agent('triage', ['github__create_issue', 'researcher', 'create_note'], {
            model: 'gpt-5',
            maxTurns: 4,
            needsApproval: true,
          }),
          { name: 'researcher', description: 'Reads.', instructions: 'Read things.' },
        ],
      },
      KNOWN,
    );
    expect(result).toEqual({
      ok: true,
      agents: [
        {
          name: 'triage',
          description: 'The triage agent.',
          instructions: 'You are triage.',
          model: 'gpt-5',
          tools: ['github__create_issue', 'researcher', 'create_note'],
          maxTurns: 4,
          needsApproval: true,
        },
        {
          name: 'researcher',
          description: 'Reads.',
          instructions: 'Read things.',
          model: undefined,
          tools: [],
          maxTurns: undefined,
          needsApproval: false,
        },
      ],
    });
  });

  it('lists every problem at once, each with its place and its fix', () => {
    const result = parseAgents(
      {
        agents: [
          agent('triage', ['launch_rockets', 'jira__create', 'github__create_issue']),
          agent('triage'),
          agent('main'),
          agent('create_note'),
          { name: 'bad name!', description: '', instructions: 'x', maxTurns: 0, colour: 'red' },
        ],
      },
      KNOWN,
    );
    if (result.ok) throw new Error('accepted');
    expect(result.problems).toEqual([
      'agents[4].name: use 1 to 64 letters, digits, "_" or "-"',
      'agents[4].description: say in a sentence what the agent does (the caller reads it)',
      'agents[4].maxTurns: Too small: expected number to be >=1',
      'agents[4]: Unrecognized key: "colour"',
      'agents: "triage" is named twice; give each agent its own name',
      'agents: "main" is the bot\'s own agent; choose another name',
      'agents: "create_note" is the name of a tool; choose another name',
      'agents.triage.tools: unknown tool "launch_rockets"; use a built-in tool (get_current_time, create_note, list_notes), SERVER__TOOL for a server of MCP_SERVERS_FILE, or another agent',
      'agents.triage.tools: unknown tool "jira__create"; use a built-in tool (get_current_time, create_note, list_notes), SERVER__TOOL for a server of MCP_SERVERS_FILE, or another agent',
    ]);
  });

  it('refuses agents that call each other in a circle, naming the circle', () => {
    const result = parseAgents(
      { agents: [agent('a', ['b']), agent('b', ['c', 'create_note']), agent('c', ['a'])] },
      KNOWN,
    );
    expect(result).toEqual({
      ok: false,
      problems: ['agents: a → b → c → a call each other in a circle; break it'],
    });
    expect(parseAgents({ agents: [agent('self', ['self'])] }, KNOWN)).toEqual({
      ok: false,
      problems: ['agents: self → self call each other in a circle; break it'],
    });
    // The same agent reached twice without a circle is fine.
    expect(parseAgents({ agents: [agent('a', ['b', 'c']), agent('b', ['c']), agent('c')] }, KNOWN).ok).toBe(
      true,
    );
  });

  it('a file that cannot be read, is not JSON or is not a list of agents is one clear problem', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agents-file-'));
    const path = join(dir, 'agents.json');
    expect(readAgentsFile(path, KNOWN)).toEqual({ ok: false, problems: ['cannot read the file (ENOENT)'] });
    writeFileSync(path, '{"agents": [');
    expect(readAgentsFile(path, KNOWN)).toMatchObject({
      ok: false,
      problems: [expect.stringMatching(/^not valid JSON \(/)],
    });
    writeFileSync(path, '{"agents": {"triage": {}}}');
    expect(agentsFileProblem(path, KNOWN)).toBe(
      `AGENTS_FILE ${path} is invalid:\n  - use an object with "agents": a list of agents, each with a name`,
    );
    writeFileSync(path, JSON.stringify({ agents: [agent('triage', ['create_note'])] }));
    expect(agentsFileProblem(path, KNOWN)).toBeUndefined();
    expect(agentsFileProblem(undefined, KNOWN)).toBeUndefined();
  });
});
