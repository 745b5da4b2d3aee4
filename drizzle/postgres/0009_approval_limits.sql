CREATE TABLE "approval_limit_keys" (
	"key" text PRIMARY KEY NOT NULL
);
--> statement-breakpoint
CREATE TABLE "approval_limit_uses" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"key" text NOT NULL,
	"approval_id" text NOT NULL,
	"at" bigint NOT NULL
);
--> statement-breakpoint
CREATE INDEX "approval_limit_uses_key_at" ON "approval_limit_uses" USING btree ("key","at");