CREATE TABLE `team_admins` (
	`team_id` text NOT NULL,
	`user_id` text NOT NULL,
	`added_by` text NOT NULL,
	`added_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `team_admins_user` ON `team_admins` (`team_id`,`user_id`);--> statement-breakpoint
ALTER TABLE `approvals` ADD `enterprise_id` text;--> statement-breakpoint
ALTER TABLE `conversations` ADD `enterprise_id` text;