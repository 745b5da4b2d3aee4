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
ALTER TABLE "audit_events" ADD COLUMN "chain_version" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "audit_events" ADD COLUMN "payload_digest" text;--> statement-breakpoint
CREATE INDEX "audit_events_run" ON "audit_events" USING btree ("run_id");--> statement-breakpoint
-- Still append-only, except that the payload of a version 2 event may be replaced (retention prunes its content
-- to digests, which verify still checks); every other column, and every version 1 event, stays as written.
CREATE OR REPLACE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.chain_version = 2 AND NEW.chain_version = 2
     AND (NEW.seq, NEW.at, NEW.actor, NEW.kind, NEW.team_id, NEW.conversation_id, NEW.run_id, NEW.approval_id,
          NEW.prev_hash, NEW.hash, NEW.payload_digest)
     IS NOT DISTINCT FROM (OLD.seq, OLD.at, OLD.actor, OLD.kind, OLD.team_id, OLD.conversation_id, OLD.run_id,
          OLD.approval_id, OLD.prev_hash, OLD.hash, OLD.payload_digest) THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'audit events are append-only';
END;
$$;
