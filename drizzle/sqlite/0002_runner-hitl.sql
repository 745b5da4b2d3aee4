CREATE TABLE `standing_approvals` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`conversation_id` text NOT NULL,
	`tool_name` text NOT NULL,
	`granted_by` text NOT NULL,
	`origin_approval_id` text NOT NULL,
	`granted_at` integer NOT NULL,
	`revoked_at` integer
);
--> statement-breakpoint
CREATE INDEX `standing_approvals_conversation_tool` ON `standing_approvals` (`conversation_id`,`tool_name`);--> statement-breakpoint
ALTER TABLE `approvals` ADD `origin_approval_id` text;