CREATE TABLE "accepted_requests" (
	"key" text PRIMARY KEY NOT NULL,
	"accepted_at" bigint NOT NULL,
	"click" text,
	"lease_owner" text,
	"lease_until" bigint,
	"decided_at" bigint
);
--> statement-breakpoint
CREATE INDEX "accepted_requests_accepted" ON "accepted_requests" USING btree ("accepted_at");--> statement-breakpoint
CREATE INDEX "accepted_requests_leased" ON "accepted_requests" USING btree ("lease_until") WHERE "accepted_requests"."lease_owner" is not null;