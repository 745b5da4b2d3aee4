ALTER TABLE `runs` ADD `stop_requested_by` text;--> statement-breakpoint
ALTER TABLE `runs` ADD `stop_requested_at` integer;