CREATE TABLE `greeted_users` (
	`team_id` text NOT NULL,
	`user_id` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `greeted_users_user` ON `greeted_users` (`team_id`,`user_id`);