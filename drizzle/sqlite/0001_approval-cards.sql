CREATE TABLE `approval_cards` (
	`approval_id` text NOT NULL,
	`channel_id` text NOT NULL,
	`message_ts` text NOT NULL,
	`link` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `approval_cards_message` ON `approval_cards` (`approval_id`,`channel_id`,`message_ts`);