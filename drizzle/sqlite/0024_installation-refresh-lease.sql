ALTER TABLE `slack_installations` ADD `lease_owner` text;--> statement-breakpoint
ALTER TABLE `slack_installations` ADD `lease_until` integer;