CREATE TABLE "team_admins" (
	"team_id" text NOT NULL,
	"user_id" text NOT NULL,
	"added_by" text NOT NULL,
	"added_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "team_admins_user" ON "team_admins" USING btree ("team_id","user_id");