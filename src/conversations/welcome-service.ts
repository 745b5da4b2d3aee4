import type { Clock } from '../clock.js';
import type { SuggestedPrompt } from '../config-suggested-prompts.js';
import { AppError, describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { PostOutcome } from '../tools/ports.js';

/** Remembers who was greeted, so each person is greeted once (across restarts and racing deliveries). */
export interface GreetingStore {
  /** Records the greeting; true only for the first caller. */
  claim(teamId: string, userId: string, at: number): Promise<boolean>;
  /** Forgets a claim whose greeting could not be posted, so the next visit tries again. */
  release(teamId: string, userId: string): Promise<void>;
}

/** What the Messages tab needs from Slack. */
export interface WelcomeSurface {
  post(channelId: string, text: string, options: { teamId: string }): Promise<PostOutcome>;
  setSuggestedPrompts(
    channel: { teamId: string; channelId: string },
    prompts: readonly SuggestedPrompt[],
    title?: string,
  ): Promise<void>;
}

export interface WelcomeServiceDeps {
  store: GreetingStore;
  surface: WelcomeSurface;
  clock: Clock;
  logger: Logger;
  prompts: readonly SuggestedPrompt[];
}

export const PROMPTS_TITLE = 'Try asking';

/** The first words a person reads from the bot in its Messages tab. */
export function greetingText(userId: string): string {
  return [
    `Hi <@${userId}>! I am an assistant with tools: I can tell the time anywhere, list, add and delete the team's notes, and post messages to channels.`,
    'Anything that changes something waits until a person approves it with a button in the conversation.',
    'Write to me here, or mention me in a channel and I will answer in the thread.',
  ].join(' ');
}

/**
 * The app's Messages tab: each opening shows the suggested prompts; the first opening per person also posts
 * a greeting. Slack failures are logged; a greeting that could not be posted is tried again next time.
 */
export class WelcomeService {
  readonly #deps: WelcomeServiceDeps;

  constructor(deps: WelcomeServiceDeps) {
    this.#deps = deps;
  }

  async messagesTabOpened(visit: { teamId: string; userId: string; channelId: string }): Promise<void> {
    const { store, surface, clock, logger, prompts } = this.#deps;
    if (prompts.length > 0) {
      try {
        await surface.setSuggestedPrompts(visit, prompts, PROMPTS_TITLE);
      } catch (error) {
        logger.warn('suggested prompts could not be set', { error: describeError(error) });
      }
    }
    if (!(await store.claim(visit.teamId, visit.userId, clock.now()))) return;
    try {
      const outcome = await surface.post(visit.channelId, greetingText(visit.userId), {
        teamId: visit.teamId,
      });
      if (outcome.kind !== 'posted')
        throw new AppError('surface.not_posted', `the greeting was not posted (${outcome.kind})`);
    } catch (error) {
      logger.warn('greeting could not be posted', { userId: visit.userId, error: describeError(error) });
      await store.release(visit.teamId, visit.userId);
    }
  }
}
