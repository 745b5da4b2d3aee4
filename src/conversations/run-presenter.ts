import type { RunObserver } from '../agent/runner.js';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { AnswerStream, AnswerTarget, Progress, ProgressTarget, ThreadSurface } from './ports.js';

export const THINKING_STATUS = 'is thinking…';

/**
 * What the people in a thread see while one run is driven: a status while it works ("is thinking…", "is
 * running list_notes…"), the answer streamed as the model writes it, and nothing left over afterwards. Text
 * streamed before a tool call stays in the thread; the answer after it starts a new message.
 */
export class RunPresenter {
  readonly #surface: ThreadSurface;
  readonly #target: AnswerTarget & ProgressTarget;
  readonly #logger: Logger;
  readonly #progress: Progress | undefined;
  #stream: AnswerStream | undefined;
  #ending: Promise<string> = Promise.resolve('');

  constructor(surface: ThreadSurface, target: AnswerTarget & ProgressTarget, logger: Logger) {
    this.#surface = surface;
    this.#target = target;
    this.#logger = logger;
    this.#progress = surface.startProgress?.(target);
    this.#progress?.set(THINKING_STATUS);
  }

  /** Hooks for the runner. */
  readonly observer: RunObserver = {
    onTextDelta: (text) => {
      if (!this.#surface.streamAnswer) return;
      this.#stream ??= this.#surface.streamAnswer(this.#target);
      this.#stream.append(text);
    },
    onToolStart: (toolName) => {
      void this.endStream();
      this.#progress?.set(`is running ${toolName}…`);
    },
  };

  /** True while an answer is being streamed into the thread. */
  get streaming(): boolean {
    return this.#stream !== undefined;
  }

  /** Finishes the message being streamed, if any; the next text starts a new one. */
  endStream(): Promise<string> {
    const stream = this.#stream;
    this.#stream = undefined;
    if (stream) this.#ending = this.#ending.then(() => stream.finish());
    return this.#ending;
  }

  /** Delivers the final answer: the streamed message is finished, or the text is posted when nothing streamed. */
  async answer(text: string): Promise<void> {
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

  /** Clears the status (or the fallback reaction). */
  async done(): Promise<void> {
    await this.endStream();
    await this.#progress?.clear();
  }
}

/** Part of an answer Slack would not show, neither streamed nor posted: it stays owed to the thread. */
export class UndeliveredAnswer extends Error {
  readonly text: string;

  constructor(text: string) {
    super('Slack did not accept the end of the answer');
    this.name = new.target.name;
    this.text = text;
  }
}
