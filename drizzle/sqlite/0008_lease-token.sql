ALTER TABLE `runs` ADD `lease_token` text;--> statement-breakpoint
CREATE INDEX `runs_leased` ON `runs` (`lease_until`) WHERE "runs"."lease_owner" is not null;