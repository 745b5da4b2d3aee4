ALTER TABLE "slack_installations" ADD COLUMN "lease_owner" text;--> statement-breakpoint
ALTER TABLE "slack_installations" ADD COLUMN "lease_until" bigint;