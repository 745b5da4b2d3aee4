-- Terminal conversations were told apart by their workspace id; now by a column.
UPDATE `conversations` SET `surface` = 'terminal' WHERE `team_id` = 'local';
--> statement-breakpoint
-- Replies owed to threads move from the runs into the delivery outbox.
INSERT INTO `deliveries` (`id`, `kind`, `conversation_id`, `run_id`, `text`, `attempts`, `due_at`, `noticed`, `created_at`)
  SELECT 'reply:' || `id`, 'reply', `conversation_id`, `id`, `pending_reply`, 0, `updated_at`, 0, `updated_at`
  FROM `runs` WHERE `pending_reply` IS NOT NULL;
--> statement-breakpoint
-- Pending requests whose card was never posted are owed their card.
INSERT INTO `deliveries` (`id`, `kind`, `conversation_id`, `approval_id`, `run_id`, `attempts`, `due_at`, `noticed`, `created_at`)
  SELECT 'card:' || `id`, 'card', `conversation_id`, `id`, `run_id`, 0, `created_at`, 0, `created_at`
  FROM `approvals` WHERE `status` = 'pending' AND `message_ts` IS NULL;
