import type { ServerResponse } from 'node:http';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';

/** The longest a piece of work waits for the requests being answered. */
const MAX_WAIT_MS = 5;

export interface AfterAnswers {
  /** A request has started: counted until its response is sent (or its connection closed). */
  opened(res: ServerResponse): void;
  /** Runs `work` once no request is waiting for its answer, or after at most 5 ms. */
  run(work: () => void): void;
}

/**
 * Work that follows an answer (a click handed over to be decided) waits until every request being read has been
 * answered: under a burst of clicks the acks leave first, and the decisions they start do not compete with the
 * acks still to send for the same cores. Under steady traffic nothing waits more than 5 ms.
 */
export function afterAnswers(logger: Logger): AfterAnswers {
  let unanswered = 0;
  let waiting: (() => void)[] = [];
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    const due = waiting;
    waiting = [];
    for (const work of due) {
      try {
        work();
      } catch (error) {
        logger.error('work after an answer failed', { error: describeError(error) });
      }
    }
  };
  return {
    opened(res) {
      unanswered++;
      res.once('close', () => {
        unanswered--;
        if (unanswered === 0 && waiting.length > 0) flush();
      });
    },
    run(work) {
      waiting.push(work);
      if (unanswered === 0) flush();
      else timer ??= setTimeout(flush, MAX_WAIT_MS);
    },
  };
}
