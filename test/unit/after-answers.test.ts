import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { afterAnswers } from '../../src/slack/after-answers.js';

const response = () => new EventEmitter() as unknown as ServerResponse;

describe('work after an answer', () => {
  it('waits until every request being read is answered, then runs in order', () => {
    const after = afterAnswers(createLogger('error', () => {}));
    const [first, second] = [response(), response()];
    after.opened(first);
    after.opened(second);
    const ran: string[] = [];
    after.run(() => ran.push('a'));
    after.run(() => ran.push('b'));
    first.emit('close');
    expect(ran).toEqual([]);
    second.emit('close');
    expect(ran).toEqual(['a', 'b']);
    after.run(() => ran.push('c'));
    expect(ran).toEqual(['a', 'b', 'c']);
  });

  it('waits at most 5 ms for requests still unanswered, and one failing piece stops none of the others', async () => {
    const logs: string[] = [];
    const after = afterAnswers(createLogger('error', (line) => logs.push(line)));
    after.opened(response());
    const ran: string[] = [];
    after.run(() => {
      throw new Error('worker gone');
    });
    after.run(() => ran.push('b'));
    expect(ran).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(ran).toEqual(['b']);
    expect(logs.join('\n')).toContain('worker gone');
  });
});
