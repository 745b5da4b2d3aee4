ALTER TABLE "approvals" ADD COLUMN "break_glass_by" text;--> statement-breakpoint
ALTER TABLE "approvals" ADD COLUMN "break_glass_reason" text;--> statement-breakpoint
ALTER TABLE "approvals" ADD COLUMN "break_glass_acked_by" text;--> statement-breakpoint
ALTER TABLE "approvals" ADD COLUMN "break_glass_acked_at" bigint;