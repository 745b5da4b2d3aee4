CREATE TABLE `approval_votes` (
	`approval_id` text NOT NULL,
	`user_id` text NOT NULL,
	`vote` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `approval_votes_user` ON `approval_votes` (`approval_id`,`user_id`);--> statement-breakpoint
CREATE TABLE `approvals` (
	`id` text PRIMARY KEY NOT NULL,
	`run_id` text NOT NULL,
	`conversation_id` text NOT NULL,
	`team_id` text NOT NULL,
	`turn` integer NOT NULL,
	`call_id` text NOT NULL,
	`tool_name` text NOT NULL,
	`arguments` text NOT NULL,
	`arguments_hash` text NOT NULL,
	`edited_arguments` text,
	`status` text NOT NULL,
	`requester_id` text NOT NULL,
	`rule` text NOT NULL,
	`decided_by` text,
	`decided_at` integer,
	`reason` text,
	`channel_id` text NOT NULL,
	`thread_ts` text NOT NULL,
	`message_ts` text,
	`result` text,
	`expires_at` integer,
	`remind_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `approvals_run_call` ON `approvals` (`run_id`,`call_id`);--> statement-breakpoint
CREATE INDEX `approvals_status` ON `approvals` (`status`);--> statement-breakpoint
CREATE INDEX `approvals_run_turn` ON `approvals` (`run_id`,`turn`);--> statement-breakpoint
CREATE TABLE `audit_events` (
	`seq` integer PRIMARY KEY NOT NULL,
	`at` integer NOT NULL,
	`actor` text NOT NULL,
	`kind` text NOT NULL,
	`team_id` text,
	`conversation_id` text,
	`run_id` text,
	`approval_id` text,
	`payload` text NOT NULL,
	`prev_hash` text NOT NULL,
	`hash` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `audit_events_approval` ON `audit_events` (`approval_id`);--> statement-breakpoint
CREATE INDEX `audit_events_at` ON `audit_events` (`at`);--> statement-breakpoint
CREATE TABLE `conversation_items` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`conversation_id` text NOT NULL,
	`run_id` text,
	`turn` integer,
	`kind` text NOT NULL,
	`data` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `conversation_items_conversation` ON `conversation_items` (`conversation_id`,`id`);--> statement-breakpoint
CREATE TABLE `conversations` (
	`id` text PRIMARY KEY NOT NULL,
	`team_id` text NOT NULL,
	`channel_id` text NOT NULL,
	`thread_ts` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `conversations_thread` ON `conversations` (`team_id`,`channel_id`,`thread_ts`);--> statement-breakpoint
CREATE TABLE `notes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`team_id` text NOT NULL,
	`text` text NOT NULL,
	`created_by` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `notes_team` ON `notes` (`team_id`);--> statement-breakpoint
CREATE TABLE `processed_events` (
	`key` text PRIMARY KEY NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `queued_messages` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`conversation_id` text NOT NULL,
	`user_id` text NOT NULL,
	`text` text NOT NULL,
	`message_ts` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `queued_messages_conversation` ON `queued_messages` (`conversation_id`,`id`);--> statement-breakpoint
CREATE TABLE `runs` (
	`id` text PRIMARY KEY NOT NULL,
	`conversation_id` text NOT NULL,
	`status` text NOT NULL,
	`state` text NOT NULL,
	`schema_version` integer NOT NULL,
	`turn` integer NOT NULL,
	`requester_id` text NOT NULL,
	`error` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `runs_conversation_status` ON `runs` (`conversation_id`,`status`);--> statement-breakpoint
CREATE INDEX `runs_status` ON `runs` (`status`);