CREATE TABLE `approval_limit_keys` (
	`key` text PRIMARY KEY NOT NULL
);
--> statement-breakpoint
CREATE TABLE `approval_limit_uses` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`key` text NOT NULL,
	`approval_id` text NOT NULL,
	`at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `approval_limit_uses_key_at` ON `approval_limit_uses` (`key`,`at`);