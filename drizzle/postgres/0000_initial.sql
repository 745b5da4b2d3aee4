CREATE TABLE "approval_cards" (
	"approval_id" text NOT NULL,
	"channel_id" text NOT NULL,
	"message_ts" text NOT NULL,
	"link" text,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "approval_votes" (
	"approval_id" text NOT NULL,
	"user_id" text NOT NULL,
	"vote" text NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "approvals" (
	"id" text PRIMARY KEY NOT NULL,
	"run_id" text NOT NULL,
	"conversation_id" text NOT NULL,
	"team_id" text NOT NULL,
	"turn" integer NOT NULL,
	"call_id" text NOT NULL,
	"tool_name" text NOT NULL,
	"arguments" text NOT NULL,
	"arguments_hash" text NOT NULL,
	"edited_arguments" text,
	"origin_approval_id" text,
	"status" text NOT NULL,
	"requester_id" text NOT NULL,
	"rule" text NOT NULL,
	"decided_by" text,
	"decided_at" bigint,
	"reason" text,
	"channel_id" text NOT NULL,
	"thread_ts" text NOT NULL,
	"message_ts" text,
	"result" text,
	"expires_at" bigint,
	"remind_at" bigint,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "audit_events" (
	"seq" bigint PRIMARY KEY NOT NULL,
	"at" bigint NOT NULL,
	"actor" text NOT NULL,
	"kind" text NOT NULL,
	"team_id" text,
	"conversation_id" text,
	"run_id" text,
	"approval_id" text,
	"payload" text NOT NULL,
	"prev_hash" text NOT NULL,
	"hash" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "conversation_items" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"conversation_id" text NOT NULL,
	"run_id" text,
	"turn" integer,
	"kind" text NOT NULL,
	"data" text NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "conversations" (
	"id" text PRIMARY KEY NOT NULL,
	"team_id" text NOT NULL,
	"channel_id" text NOT NULL,
	"thread_ts" text NOT NULL,
	"surface" text DEFAULT 'slack' NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "deliveries" (
	"id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"conversation_id" text NOT NULL,
	"approval_id" text,
	"run_id" text,
	"text" text,
	"attempts" integer DEFAULT 0 NOT NULL,
	"due_at" bigint NOT NULL,
	"lease_owner" text,
	"lease_until" bigint,
	"noticed" integer DEFAULT 0 NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "greeted_users" (
	"team_id" text NOT NULL,
	"user_id" text NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "home_viewers" (
	"team_id" text NOT NULL,
	"user_id" text NOT NULL,
	"auditor" integer NOT NULL,
	"opened_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "notes" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"team_id" text NOT NULL,
	"text" text NOT NULL,
	"created_by" text NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "processed_events" (
	"key" text PRIMARY KEY NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "queued_messages" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"conversation_id" text NOT NULL,
	"user_id" text NOT NULL,
	"text" text NOT NULL,
	"message_ts" text NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "runs" (
	"id" text PRIMARY KEY NOT NULL,
	"conversation_id" text NOT NULL,
	"status" text NOT NULL,
	"state" text NOT NULL,
	"schema_version" integer NOT NULL,
	"turn" integer NOT NULL,
	"requester_id" text NOT NULL,
	"error" text,
	"lease_owner" text,
	"lease_until" bigint,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "standing_approvals" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"conversation_id" text NOT NULL,
	"tool_name" text NOT NULL,
	"granted_by" text NOT NULL,
	"origin_approval_id" text NOT NULL,
	"granted_at" bigint NOT NULL,
	"revoked_at" bigint
);
--> statement-breakpoint
CREATE UNIQUE INDEX "approval_cards_message" ON "approval_cards" USING btree ("approval_id","channel_id","message_ts");--> statement-breakpoint
CREATE UNIQUE INDEX "approval_votes_user" ON "approval_votes" USING btree ("approval_id","user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "approvals_run_call" ON "approvals" USING btree ("run_id","call_id");--> statement-breakpoint
CREATE INDEX "approvals_status" ON "approvals" USING btree ("status");--> statement-breakpoint
CREATE INDEX "approvals_run_turn" ON "approvals" USING btree ("run_id","turn");--> statement-breakpoint
CREATE INDEX "audit_events_approval" ON "audit_events" USING btree ("approval_id");--> statement-breakpoint
CREATE INDEX "audit_events_at" ON "audit_events" USING btree ("at");--> statement-breakpoint
CREATE INDEX "conversation_items_conversation" ON "conversation_items" USING btree ("conversation_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "conversations_thread" ON "conversations" USING btree ("team_id","channel_id","thread_ts");--> statement-breakpoint
CREATE INDEX "deliveries_due" ON "deliveries" USING btree ("due_at");--> statement-breakpoint
CREATE UNIQUE INDEX "greeted_users_user" ON "greeted_users" USING btree ("team_id","user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "home_viewers_user" ON "home_viewers" USING btree ("team_id","user_id");--> statement-breakpoint
CREATE INDEX "notes_team" ON "notes" USING btree ("team_id");--> statement-breakpoint
CREATE INDEX "queued_messages_conversation" ON "queued_messages" USING btree ("conversation_id","id");--> statement-breakpoint
CREATE INDEX "runs_conversation_status" ON "runs" USING btree ("conversation_id","status");--> statement-breakpoint
CREATE INDEX "runs_status" ON "runs" USING btree ("status");--> statement-breakpoint
CREATE UNIQUE INDEX "runs_one_active" ON "runs" USING btree ("conversation_id") WHERE "runs"."status" in ('running', 'paused');--> statement-breakpoint
CREATE INDEX "standing_approvals_conversation_tool" ON "standing_approvals" USING btree ("conversation_id","tool_name");