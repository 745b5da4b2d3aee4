CREATE TABLE `deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`conversation_id` text NOT NULL,
	`approval_id` text,
	`run_id` text,
	`text` text,
	`attempts` integer DEFAULT 0 NOT NULL,
	`due_at` integer NOT NULL,
	`lease_owner` text,
	`lease_until` integer,
	`noticed` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `deliveries_due` ON `deliveries` (`due_at`);--> statement-breakpoint
CREATE TABLE `home_viewers` (
	`team_id` text NOT NULL,
	`user_id` text NOT NULL,
	`auditor` integer NOT NULL,
	`opened_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `home_viewers_user` ON `home_viewers` (`team_id`,`user_id`);--> statement-breakpoint
ALTER TABLE `conversations` ADD `surface` text DEFAULT 'slack' NOT NULL;--> statement-breakpoint
ALTER TABLE `runs` ADD `lease_owner` text;--> statement-breakpoint
ALTER TABLE `runs` ADD `lease_until` integer;--> statement-breakpoint
CREATE UNIQUE INDEX `runs_one_active` ON `runs` (`conversation_id`) WHERE "runs"."status" in ('running', 'paused');