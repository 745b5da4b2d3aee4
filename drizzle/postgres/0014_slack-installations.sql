CREATE TABLE "slack_installations" (
	"id" text PRIMARY KEY NOT NULL,
	"team_id" text,
	"enterprise_id" text,
	"enterprise_install" integer NOT NULL,
	"installer_user_id" text,
	"bot_user_id" text,
	"sealed" text NOT NULL,
	"installed_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE INDEX "slack_installations_enterprise" ON "slack_installations" USING btree ("enterprise_id");