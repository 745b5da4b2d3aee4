ALTER TABLE `runs` ADD `pending_reply` text;--> statement-breakpoint
CREATE INDEX `runs_pending_reply` ON `runs` (`id`) WHERE "runs"."pending_reply" is not null;