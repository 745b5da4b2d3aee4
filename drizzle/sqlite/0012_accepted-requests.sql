CREATE TABLE `accepted_requests` (
	`key` text PRIMARY KEY NOT NULL,
	`accepted_at` integer NOT NULL,
	`click` text,
	`lease_owner` text,
	`lease_until` integer,
	`decided_at` integer
);
--> statement-breakpoint
CREATE INDEX `accepted_requests_accepted` ON `accepted_requests` (`accepted_at`);--> statement-breakpoint
CREATE INDEX `accepted_requests_leased` ON `accepted_requests` (`lease_until`) WHERE "accepted_requests"."lease_owner" is not null;