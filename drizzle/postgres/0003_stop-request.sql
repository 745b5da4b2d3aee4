ALTER TABLE "runs" ADD COLUMN "stop_requested_by" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "stop_requested_at" bigint;