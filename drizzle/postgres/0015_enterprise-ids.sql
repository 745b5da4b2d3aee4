ALTER TABLE "approvals" ADD COLUMN "enterprise_id" text;--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "enterprise_id" text;