CREATE TABLE `delegations` (
	`id` text PRIMARY KEY NOT NULL,
	`team_id` text NOT NULL,
	`delegator_id` text NOT NULL,
	`delegate_id` text NOT NULL,
	`until` integer NOT NULL,
	`created_at` integer NOT NULL,
	`ended_at` integer,
	`ended_by` text
);
--> statement-breakpoint
CREATE INDEX `delegations_delegate` ON `delegations` (`team_id`,`delegate_id`);--> statement-breakpoint
ALTER TABLE `approval_votes` ADD `on_behalf_of` text;