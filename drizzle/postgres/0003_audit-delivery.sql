CREATE TABLE "audit_checkpoints" (
	"seq" bigint PRIMARY KEY NOT NULL,
	"hash" text NOT NULL,
	"at" bigint NOT NULL,
	"key_id" text NOT NULL,
	"signature" text NOT NULL,
	"posted_channel" text,
	"posted_ts" text,
	"posted_at" bigint
);
--> statement-breakpoint
CREATE TABLE "audit_cursors" (
	"name" text PRIMARY KEY NOT NULL,
	"acked_seq" bigint DEFAULT 0 NOT NULL,
	"acked_at" bigint,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"lease_owner" text,
	"lease_until" bigint,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE INDEX "audit_events_run" ON "audit_events" USING btree ("run_id");