CREATE TABLE "delegations" (
	"id" text PRIMARY KEY NOT NULL,
	"team_id" text NOT NULL,
	"delegator_id" text NOT NULL,
	"delegate_id" text NOT NULL,
	"until" bigint NOT NULL,
	"created_at" bigint NOT NULL,
	"ended_at" bigint,
	"ended_by" text
);
--> statement-breakpoint
ALTER TABLE "approval_votes" ADD COLUMN "on_behalf_of" text;--> statement-breakpoint
CREATE INDEX "delegations_delegate" ON "delegations" USING btree ("team_id","delegate_id");