CREATE TABLE "team_admins" (
	"team_id" text NOT NULL,
	"user_id" text NOT NULL,
	"added_by" text NOT NULL,
	"added_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "approvals" ADD COLUMN "enterprise_id" text;--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "enterprise_id" text;--> statement-breakpoint
CREATE UNIQUE INDEX "team_admins_user" ON "team_admins" USING btree ("team_id","user_id");