import type { webApi } from '@slack/bolt';
import { z } from 'zod';
import type { ApprovalRecord } from '../approvals/approval.js';
import type { ApprovalCardStore } from '../approvals/ports.js';
import { KeyedQueue } from '../conversations/keyed-queue.js';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import { buildApprovalCard } from './blocks/approval-card.js';
import { buildApprovalCopyCard } from './blocks/approval-copy-card.js';
import type { CardLocation } from './slack-surface.js';

export interface RefreshOptions {
  /** Where a click saw the thread card, when that may differ from the stored one. */
  fallback?: CardLocation;
  /** Approvals so far, used only when the store cannot say. */
  approvers?: readonly string[];
  /** The decision was "Approve for this thread". */
  standing?: boolean;
}

/** A permalink safe to put inside `<url|label>`. */
const permalinkSchema = z.object({ permalink: z.url().regex(/^https:\/\/[^|<>\s]+$/) });

/**
 * Keeps every copy of an approval card (the thread card and the copies in the rule's approval channel) in
 * step with the stored state. Updates of one approval are serialised and each renders the state read at that
 * moment, so racing clicks can never leave an older picture (buttons of a decided request) on top.
 */
export interface CardPublisher {
  /** Posts the copy in the rule's approval channel, if it names one, and records where it went. */
  postCopies(approval: ApprovalRecord): Promise<void>;
  /** Re-renders every copy of the card from the state stored now. */
  refresh(approval: ApprovalRecord, options?: RefreshOptions): Promise<void>;
}

export function createCardPublisher(
  client: webApi.WebClient,
  cards: ApprovalCardStore | undefined,
  logger: Logger,
): CardPublisher {
  const queue = new KeyedQueue();
  const update = async (location: CardLocation, card: { text: string; blocks: unknown[] }) => {
    // Always send the full blocks: an update with text only leaves the old buttons in place.
    await client.chat.update({ channel: location.channelId, ts: location.messageTs, ...card });
  };
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
  return {
    async postCopies(approval) {
      const channel = approval.rule.approvalChannel;
      if (!channel || !cards || channel === approval.channelId) return;
      const link = await permalink(approval);
      const card = buildApprovalCopyCard(approval, [], link);
      const posted = await client.chat.postMessage({ channel, text: card.text, blocks: card.blocks });
      if (!posted.ts) throw new Error('chat.postMessage returned no ts');
      cards.addExtraCard(approval, { channelId: posted.channel ?? channel, messageTs: posted.ts, link });
    },
    refresh(given, { fallback, approvers: givenApprovers = [], standing = false } = {}) {
      return queue.run(given.id, async () => {
        const approval = cards?.get(given.id) ?? given;
        const approvers = cards?.approvers(given.id) ?? givenApprovers;
        const copies = cards?.extraCards(approval.id) ?? [];
        let failure: unknown;
        for (const location of threadCards(approval, fallback, copies)) {
          await update(location, buildApprovalCard(approval, approvers, { standing })).catch((e: unknown) => {
            failure = e;
          });
        }
        for (const copy of copies) {
          try {
            await update(copy, buildApprovalCopyCard(approval, approvers, copy.link));
          } catch (error) {
            logger.warn('approval card copy update failed', {
              approvalId: approval.id,
              channelId: copy.channelId,
              error: describeError(error),
            });
          }
        }
        if (failure) throw failure;
      });
    },
  };
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
  const clicked = fallback && !copies.some((copy) => same(copy, fallback)) ? fallback : undefined;
  const locations = [stored, clicked].filter((l): l is CardLocation => l !== undefined);
  return locations.filter((l, i) => locations.findIndex((o) => same(o, l)) === i);
}
