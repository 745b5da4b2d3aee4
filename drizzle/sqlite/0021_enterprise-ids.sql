ALTER TABLE `approvals` ADD `enterprise_id` text;--> statement-breakpoint
ALTER TABLE `conversations` ADD `enterprise_id` text;