DROP INDEX `runs_pending_reply`;--> statement-breakpoint
ALTER TABLE `runs` DROP COLUMN `pending_reply`;