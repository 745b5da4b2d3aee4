CREATE TABLE `audit_checkpoints` (
	`seq` integer PRIMARY KEY NOT NULL,
	`hash` text NOT NULL,
	`at` integer NOT NULL,
	`key_id` text NOT NULL,
	`signature` text NOT NULL,
	`posted_channel` text,
	`posted_ts` text,
	`posted_at` integer
);
--> statement-breakpoint
CREATE TABLE `audit_cursors` (
	`name` text PRIMARY KEY NOT NULL,
	`acked_seq` integer DEFAULT 0 NOT NULL,
	`acked_at` integer,
	`attempts` integer DEFAULT 0 NOT NULL,
	`last_error` text,
	`lease_owner` text,
	`lease_until` integer,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `audit_events` ADD `chain_version` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `audit_events` ADD `payload_digest` text;--> statement-breakpoint
CREATE INDEX `audit_events_run` ON `audit_events` (`run_id`);