ALTER TABLE "runs" ADD COLUMN "lease_token" text;--> statement-breakpoint
CREATE INDEX "runs_leased" ON "runs" USING btree ("lease_until") WHERE "runs"."lease_owner" is not null;