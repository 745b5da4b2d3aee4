import type { webApi } from '@slack/bolt';
import { z } from 'zod';
import { type ApprovalRecord, type Approver, notifiesByDm } from '../approvals/approval.js';
import type { Deciders } from '../approvals/deciders.js';
import type { ApprovalCardStore, ExtraCard } from '../approvals/ports.js';
import { MAX_DIRECT_MESSAGES, nobodyCanDecide } from '../approvals/who-to-tell.js';
import { KeyedQueue } from '../conversations/keyed-queue.js';
import type { CardLocation, CardUpdate } from '../conversations/surface-ports.js';
import { AppError, describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import { buildApprovalCard, type SlackMessage } from './blocks/approval-card.js';
import { buildApprovalCopyCard } from './blocks/approval-copy-card.js';
import { cardMetadata, findCopyInChannel } from './card-in-thread.js';
import { NO_PREVIEWS } from './no-previews.js';
import { postOnce, slackErrorCode } from './slack-errors.js';

/** A permalink safe to put inside `<url|label>`. */
const permalinkSchema = z.object({ permalink: z.url().regex(/^https:\/\/[^|<>\s]+$/) });

/** Renders after which a card is left as it is even if the state moved again (the next change renders it). */
const MAX_RENDERS = 3;

/**
 * Keeps every copy of an approval card (the thread card and the copies in the rule's approval channel) in
 * step with the stored state. Updates of one approval are serialised within a process, and each update reads
 * the state again once sent: when another process changed the request meanwhile (its update may have landed
 * first), this one renders once more, so the last picture Slack shows is always the latest state.
 */
export interface CardPublisher {
  /**
   * Posts the copy in the rule's approval channel, if it names one, and, when the rule says `notify: dm`, a
   * copy to each person who may decide (at most 25; the others are named in the thread), recording each.
   * `lookFirst`: an earlier try may have posted the channel's copy without recording it; it is adopted if found.
   */
  postCopies(approval: ApprovalRecord, options?: { lookFirst?: boolean }): Promise<void>;
  /**
   * After an escalation: a copy by direct message to each person `escalateTo` names (at most 25, the others
   * named in the thread), then every copy re-rendered to say so.
   */
  postEscalation(approval: ApprovalRecord): Promise<void>;
  /** Re-renders every copy of the card from the state stored now. */
  refresh(approval: ApprovalRecord, update?: CardUpdate): Promise<void>;
}

interface Rendered {
  location: CardLocation;
  card: SlackMessage;
  /** The thread card, whose failure the caller hears of; a copy's too while Slack refuses it only for now. */
  primary: boolean;
}

/** Who is sent a request directly, and whether anybody can decide it at all. */
export type DeciderDirectory = Pick<Deciders, 'peopleToTell' | 'adminsOf'>;

const NOBODY: DeciderDirectory = { adminsOf: async () => [], peopleToTell: async () => [] };

/**
 * `clients.once` posts the copy in the approval channel without retrying by itself: after an answer that was
 * lost, the channel is looked at first (`postOnce`), so a copy Slack kept is not posted twice and left with
 * buttons nobody updates. Copies by direct message are posted with the retrying client: their channel is not
 * known before Slack answers, so they cannot be looked for, and one twice is better than one never.
 */
export function createCardPublisher(
  clients: { client: webApi.WebClient; once?: webApi.WebClient },
  cards: ApprovalCardStore | undefined,
  logger: Logger,
  deciders: DeciderDirectory = NOBODY,
): CardPublisher {
  const { client } = clients;
  const queue = new KeyedQueue();
  const permalink = async (approval: ApprovalRecord): Promise<string | null> => {
    try {
      const reply = await client.chat.getPermalink({
        channel: approval.channelId,
        message_ts: approval.threadTs,
      });
      return permalinkSchema.parse(reply).permalink;
    } catch (error) {
      logger.warn('no permalink for the approval copy', {
        approvalId: approval.id,
        error: describeError(error),
      });
      return null;
    }
  };
  const render = async (given: ApprovalRecord, update: CardUpdate): Promise<Rendered[]> => {
    const approval = (await cards?.get(given.id)) ?? given;
    const approvers = (await cards?.approvers(given.id)) ?? update.approvers ?? [];
    const copies: ExtraCard[] = (await cards?.extraCards(approval.id)) ?? [];
    const standing = update.standing ?? false;
    const delegated = (await cards?.delegatedVotes(approval.id)) ?? {};
    const admins = await deciders.adminsOf(approval.teamId, approval.enterpriseId);
    const nobody = nobodyCanDecide(approval.rule, approval.requesterId, admins);
    return [
      ...threadCards(approval, update.fallback, copies).map((location) => ({
        location,
        card: buildApprovalCard(approval, approvers, { standing, delegated, nobodyCanDecide: nobody }),
        primary: true,
      })),
      ...copies.map((copy) => ({
        location: copy,
        card: buildApprovalCopyCard(approval, approvers, copy.link, delegated),
        primary: false,
      })),
    ];
  };
  const send = async (approvalId: string, rendered: readonly Rendered[]) => {
    let failure: unknown;
    for (const { location, card, primary } of rendered) {
      try {
        // Always send the full blocks: an update with text only leaves the old buttons in place.
        await client.chat.update({ channel: location.channelId, ts: location.messageTs, ...card });
      } catch (error) {
        // A copy Slack refuses for now (rate limit, outage) is owed like the thread card, so no copy keeps its
        // buttons; one refused for good (deleted, archived) is only logged: the next change tries it again.
        if (primary || passing(error)) failure ??= error;
        if (!primary)
          logger.warn('approval card copy update failed', {
            approvalId,
            channelId: location.channelId,
            error: describeError(error),
          });
      }
    }
    if (failure) throw failure;
  };
  /** Posts a copy in `channel` (a channel, or a person for a direct message) and records where it is. */
  const postCopy = async (
    approval: ApprovalRecord,
    channel: string,
    link: string | null,
    { toPerson = false, lookFirst = false } = {},
  ) => {
    if (!cards) return;
    const card = buildApprovalCopyCard(approval, [], link);
    const post = async (poster: webApi.WebClient): Promise<CardLocation> => {
      const posted = await poster.chat.postMessage({
        channel,
        text: card.text,
        blocks: card.blocks,
        metadata: cardMetadata(approval.id),
        ...NO_PREVIEWS,
      });
      if (!posted.ts) throw new AppError('surface.no_message_ts', 'chat.postMessage returned no ts');
      return { channelId: posted.channel ?? channel, messageTs: posted.ts };
    };
    // A lookup that fails posts anyway: a copy twice rather than never.
    const shown = () => findCopyInChannel(client, channel, approval).catch(() => undefined);
    const location = toPerson
      ? await post(client)
      : ((lookFirst ? await shown() : undefined) ??
        (await postOnce(() => post(clients.once ?? client), shown)));
    await cards.addExtraCard(approval, { ...location, link });
  };
  /** One copy per person who may decide, each on its own: one that fails is logged, the others still go. */
  const postDirectMessages = async (
    approval: ApprovalRecord,
    link: string | null,
    approvers: readonly Approver[] = approval.rule.approvers,
    already: readonly string[] = [],
  ) => {
    const people = (await deciders.peopleToTell(approval, approvers)).filter(
      (userId) => !already.includes(userId),
    );
    for (const userId of people.slice(0, MAX_DIRECT_MESSAGES)) {
      await postCopy(approval, userId, link, { toPerson: true }).catch((error: unknown) =>
        logger.warn('approval card could not be sent by direct message', {
          approvalId: approval.id,
          userId,
          error: describeError(error),
        }),
      );
    }
    const rest = people.slice(MAX_DIRECT_MESSAGES);
    if (rest.length > 0)
      await client.chat.postMessage({
        channel: approval.channelId,
        thread_ts: approval.threadTs,
        ...NO_PREVIEWS,
        text: `:envelope: The request \`${approval.id}\` was sent by direct message to ${MAX_DIRECT_MESSAGES} people who may decide; ${rest.length} more may decide it too: ${rest.map((id) => `<@${id}>`).join(', ')}.`,
      });
  };
  return {
    async postCopies(approval, { lookFirst = false } = {}) {
      const channel = approval.rule.approvalChannel;
      const toChannel = Boolean(channel && channel !== approval.channelId);
      const byDm = notifiesByDm(approval.rule);
      if (!cards || (!toChannel && !byDm)) return;
      const link = await permalink(approval);
      if (channel && toChannel) await postCopy(approval, channel, link, { lookFirst });
      if (byDm) await postDirectMessages(approval, link);
    },
    async postEscalation(approval) {
      if (!cards) return;
      const escalateTo = approval.rule.escalateTo ?? [];
      // Whoever already got a copy by direct message is not sent a second one.
      const already = notifiesByDm(approval.rule) ? await deciders.peopleToTell(approval) : [];
      await postDirectMessages(approval, await permalink(approval), escalateTo, already);
      await this.refresh(approval);
    },
    refresh(given, update = {}) {
      return queue.run(given.id, async () => {
        let sent = '';
        for (let round = 0; round < MAX_RENDERS; round += 1) {
          const rendered = await render(given, update);
          const picture = JSON.stringify(rendered);
          if (picture === sent) return;
          await send(given.id, rendered);
          sent = picture;
        }
      });
    },
  };
}

/** Slack answers that say "not now" rather than "never": a failed HTTP call, a rate limit, Slack's own trouble. */
const PASSING_SLACK_ERRORS = new Set([
  'ratelimited',
  'internal_error',
  'fatal_error',
  'service_unavailable',
  'request_timeout',
]);

function passing(error: unknown): boolean {
  const code = slackErrorCode(error);
  return code === undefined || PASSING_SLACK_ERRORS.has(code);
}

/**
 * The stored thread card, and the clicked one when it is neither that nor a copy (a crash right after posting
 * led to a repost).
 */
function threadCards(
  approval: ApprovalRecord,
  fallback: CardLocation | undefined,
  copies: readonly CardLocation[],
): CardLocation[] {
  const same = (a: CardLocation, b: CardLocation) =>
    a.channelId === b.channelId && a.messageTs === b.messageTs;
  const stored = approval.messageTs
    ? { channelId: approval.channelId, messageTs: approval.messageTs }
    : undefined;
  // A stored location is the card: a clicked message elsewhere is never updated then.
  const clicked = !stored && fallback && !copies.some((copy) => same(copy, fallback)) ? fallback : undefined;
  const locations = [stored, clicked].filter((l): l is CardLocation => l !== undefined);
  return locations.filter((l, i) => locations.findIndex((o) => same(o, l)) === i);
}
