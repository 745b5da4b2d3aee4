import type { RunObserver } from '../agent/runner.js';
import type { ToolProgress } from '../agent/turn-settler.js';
import { AppError, describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import { redactText } from '../redact.js';
import type {
  AnswerStream,
  AnswerTarget,
  Progress,
  ProgressTarget,
  TaskUpdate,
  ThreadPoster,
  WorkDisplay,
} from './surface-ports.js';

export const THINKING_STATUS = 'is thinking…';

/**
 * What the people in a thread see while one run is driven: a status while it works ("is thinking…", "is
 * running list_notes…"), the answer streamed as the model writes it, and nothing left over afterwards. With
 * `tasks`, each tool call is a task in the streamed answer (waiting for approval, running, complete or failed)
 * and the answer goes on after it in the same message; without, text streamed before a tool call stays in the
 * thread and the answer after it starts a new message.
 */
export class RunPresenter {
  readonly #surface: ThreadPoster & WorkDisplay;
  readonly #target: AnswerTarget & ProgressTarget;
  readonly #logger: Logger;
  readonly #progress: Progress | undefined;
  readonly #tasks: boolean;
  #stream: AnswerStream | undefined;
  /** The model's text reached the stream since it was started or last showed a task. */
  #textSinceTask = false;
  #ending: Promise<string> = Promise.resolve('');

  /**
   * `working: false` when the run is driven only to end it (a stop): it is not shown as working. `tasks` when
   * answers are streamed: tool calls are then shown as tasks in the stream.
   */
  constructor(
    surface: ThreadPoster & WorkDisplay,
    target: AnswerTarget & ProgressTarget,
    logger: Logger,
    { working = true, tasks = false }: { working?: boolean; tasks?: boolean } = {},
  ) {
    this.#surface = surface;
    this.#target = target;
    this.#logger = logger;
    this.#tasks = tasks && surface.streamAnswer !== undefined;
    this.#progress = surface.startProgress?.(target);
    if (working) this.#progress?.set(THINKING_STATUS);
  }

  /** Hooks for the runner. */
  readonly observer: RunObserver = {
    onTextDelta: (text) => {
      if (!this.#surface.streamAnswer) return;
      this.#stream ??= this.#surface.streamAnswer(this.#target);
      this.#stream.append(text);
      this.#textSinceTask = true;
    },
    onTextCut: (text) => {
      this.#stream?.cut?.(text);
    },
    onToolProgress: (progress) => {
      if (progress.kind === 'running') this.#toolStarted(progress.toolName);
      if (!this.#tasks || !this.#surface.streamAnswer) return;
      this.#stream ??= this.#surface.streamAnswer(this.#target);
      this.#stream.task?.(taskUpdate(progress));
      this.#textSinceTask = false;
    },
  };

  /** A tool is about to run: the status says which. */
  #toolStarted(toolName: string): void {
    const status = `is running ${toolName}…`;
    // The stream stays open: its task shows the call.
    if (this.#tasks) {
      this.#progress?.set(status);
      return;
    }
    const streamed = this.#stream !== undefined;
    const ending = this.endStream();
    // Ending a streamed message may end Slack's working state with it: shown again once it has ended.
    if (streamed) void ending.then(() => this.#progress?.set(status));
    else this.#progress?.set(status);
  }

  /** True while an answer is being streamed into the thread. */
  get streaming(): boolean {
    return this.#stream !== undefined;
  }

  /** Finishes the message being streamed, if any; the next text starts a new one. */
  endStream(): Promise<string> {
    const stream = this.#stream;
    this.#stream = undefined;
    this.#textSinceTask = false;
    if (stream) this.#ending = this.#ending.then(() => stream.finish());
    return this.#ending;
  }

  /**
   * Ends the message being streamed where it is, dropping what was not shown yet (the work was stopped, or left
   * to another process), with `note` after what was shown.
   */
  async abandonStream(note?: string): Promise<void> {
    const stream = this.#stream;
    if (!stream?.abandon) {
      await this.endStream();
      return;
    }
    this.#stream = undefined;
    this.#textSinceTask = false;
    const abandon = stream.abandon.bind(stream);
    this.#ending = this.#ending.then(async () => {
      await abandon(note);
      return '';
    });
    await this.#ending;
  }

  /** Delivers the final answer: the streamed message is finished, or the text is posted when nothing streamed. */
  async answer(text: string): Promise<void> {
    // A stream that shows only tasks (the model did not stream this text): the answer ends it.
    if (this.#stream && !this.#textSinceTask) this.#stream.append(text.trim() === '' ? 'Done.' : text);
    const streamed = this.#stream !== undefined;
    const missing = await this.endStream();
    if (missing) throw new UndeliveredAnswer(missing);
    if (streamed) return;
    const answer = text.trim() === '' ? 'Done.' : text;
    try {
      if (this.#surface.postAnswer) await this.#surface.postAnswer(this.#target, answer);
      else await this.#surface.postText(this.#target, answer);
    } catch (error) {
      this.#logger.error('answer could not be posted', {
        channelId: this.#target.channelId,
        error: describeError(error),
      });
    }
  }

  /**
   * Ends what shows work: `waiting` when the run waits for a person (Slack shows the session as needing input),
   * `ended` otherwise (the status, or the fallback reaction, is cleared).
   */
  async done(how: 'waiting' | 'ended' = 'ended'): Promise<void> {
    await this.endStream();
    if (how === 'waiting') await this.#progress?.suspend();
    else await this.#progress?.clear();
  }
}

/** Slack limits each task update to this many characters. */
export const MAX_TASK_CHARS = 256;

/** A tool call's progress as a task: never its arguments; a short output, credentials redacted. */
export function taskUpdate(progress: ToolProgress): TaskUpdate {
  const base = { id: progress.callId, title: shortText(progress.toolName) };
  switch (progress.kind) {
    case 'waiting':
      return {
        ...base,
        status: 'pending',
        output: shortText(`Waiting for approval by ${progress.approvers}`),
      };
    case 'running':
      return { ...base, status: 'in_progress' };
    case 'settled': {
      const output = shortText(progress.output) || (progress.status === 'ok' ? 'Done.' : 'Failed.');
      return { ...base, status: progress.status === 'ok' ? 'complete' : 'error', output };
    }
  }
}

/** One line, credentials redacted, at most `MAX_TASK_CHARS` characters. */
function shortText(text: string): string {
  return oneLine(redactText(text), MAX_TASK_CHARS);
}

/** Slack limits a session title to this many characters. */
export const MAX_TITLE_CHARS = 200;

/** A session's title from the message that started it: mentions left out, on one line, at most 200 characters. */
export function sessionTitle(text: string): string | undefined {
  return oneLine(text.replace(/<@[A-Z0-9]+(?:\|[^>]*)?>/g, ' '), MAX_TITLE_CHARS) || undefined;
}

/** `text` on one line, cut with an ellipsis to at most `max` characters. */
function oneLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= max ? line : `${line.slice(0, max - 1).trimEnd()}…`;
}

/** Part of an answer Slack would not show, neither streamed nor posted: it stays owed to the thread. */
export class UndeliveredAnswer extends AppError {
  readonly text: string;

  /** `cause`: Slack's refusal (a rate limit sets when to try again). */
  constructor(text: string, options?: ErrorOptions) {
    super('surface.undelivered_answer', 'Slack did not accept the end of the answer', options);
    this.text = text;
  }
}
