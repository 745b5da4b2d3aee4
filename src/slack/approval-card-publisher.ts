import type { webApi } from '@slack/bolt';
import { z } from 'zod';
import type { ApprovalRecord } from '../approvals/approval.js';
import type { ApprovalCardStore, ExtraCard } from '../approvals/ports.js';
import { KeyedQueue } from '../conversations/keyed-queue.js';
import type { CardLocation, CardUpdate } from '../conversations/ports.js';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import { buildApprovalCard, type SlackMessage } from './blocks/approval-card.js';
import { buildApprovalCopyCard } from './blocks/approval-copy-card.js';

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
  /** Posts the copy in the rule's approval channel, if it names one, and records where it went. */
  postCopies(approval: ApprovalRecord): Promise<void>;
  /** Re-renders every copy of the card from the state stored now. */
  refresh(approval: ApprovalRecord, update?: CardUpdate): Promise<void>;
}

interface Rendered {
  location: CardLocation;
  card: SlackMessage;
  /** The thread card, whose failure the caller hears of; copies are only logged. */
  primary: boolean;
}

export function createCardPublisher(
  client: webApi.WebClient,
  cards: ApprovalCardStore | undefined,
  logger: Logger,
): CardPublisher {
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
    return [
      ...threadCards(approval, update.fallback, copies).map((location) => ({
        location,
        card: buildApprovalCard(approval, approvers, { standing }),
        primary: true,
      })),
      ...copies.map((copy) => ({
        location: copy,
        card: buildApprovalCopyCard(approval, approvers, copy.link),
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
        if (primary) failure = error;
        else
          logger.warn('approval card copy update failed', {
            approvalId,
            channelId: location.channelId,
            error: describeError(error),
          });
      }
    }
    if (failure) throw failure;
  };
  return {
    async postCopies(approval) {
      const channel = approval.rule.approvalChannel;
      if (!channel || !cards || channel === approval.channelId) return;
      const link = await permalink(approval);
      const card = buildApprovalCopyCard(approval, [], link);
      const posted = await client.chat.postMessage({
        channel,
        text: card.text,
        blocks: card.blocks,
        unfurl_links: false,
        unfurl_media: false,
      });
      if (!posted.ts) throw new Error('chat.postMessage returned no ts');
      await cards.addExtraCard(approval, {
        channelId: posted.channel ?? channel,
        messageTs: posted.ts,
        link,
      });
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
