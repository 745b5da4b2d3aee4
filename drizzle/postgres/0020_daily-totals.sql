CREATE TABLE "approval_days" (
	"team_id" text NOT NULL,
	"day" integer NOT NULL,
	"tool_name" text NOT NULL,
	"status" text NOT NULL,
	"requests" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "approval_wait_days" (
	"team_id" text NOT NULL,
	"day" integer NOT NULL,
	"tool_name" text NOT NULL,
	"bucket" integer NOT NULL,
	"decided" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "deadline_days" (
	"team_id" text NOT NULL,
	"day" integer NOT NULL,
	"kind" text NOT NULL,
	"events" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "run_usage_days" (
	"team_id" text NOT NULL,
	"day" integer NOT NULL,
	"series" text NOT NULL,
	"series_key" text NOT NULL,
	"runs" bigint NOT NULL,
	"unrecorded" bigint NOT NULL,
	"prompt_tokens" bigint NOT NULL,
	"completion_tokens" bigint NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "approval_days_key" ON "approval_days" USING btree ("team_id","day","tool_name","status");--> statement-breakpoint
CREATE UNIQUE INDEX "approval_wait_days_key" ON "approval_wait_days" USING btree ("team_id","day","tool_name","bucket");--> statement-breakpoint
CREATE UNIQUE INDEX "deadline_days_key" ON "deadline_days" USING btree ("team_id","day","kind");--> statement-breakpoint
CREATE UNIQUE INDEX "run_usage_days_key" ON "run_usage_days" USING btree ("team_id","day","series","series_key");--> statement-breakpoint
-- The daily totals are kept by these triggers as rows are written (src/db/schema/daily-totals.ts). Those on
-- approvals are deferred to the commit and take the audit chain's head first (AUDIT_HEAD_LOCK of
-- src/db/sql/sql-database.ts, held already by every transaction that records an event, and to its end), as
-- those on audit_events fire under it: a total's row is only ever written under the head, one transaction at a
-- time, so the totals add no lock order of their own.
-- A request's team, tool and creation time never change; its status and decision time do.
CREATE FUNCTION wait_bucket(wait bigint) RETURNS integer LANGUAGE sql IMMUTABLE AS $$
  SELECT floor(ln(greatest(wait, 1)::double precision) / ln(1.1::double precision))::integer
$$;
--> statement-breakpoint
CREATE FUNCTION approval_days_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    IF OLD.status IS NOT DISTINCT FROM NEW.status AND OLD.decided_at IS NOT DISTINCT FROM NEW.decided_at THEN
      RETURN NULL;
    END IF;
  END IF;
  PERFORM pg_advisory_xact_lock(7120531);
  IF TG_OP = 'UPDATE' THEN
    IF OLD.status IS DISTINCT FROM NEW.status THEN
      UPDATE approval_days SET requests = requests - 1
        WHERE team_id = OLD.team_id AND day = OLD.created_at / 86400000 AND tool_name = OLD.tool_name
          AND status = OLD.status;
    END IF;
    IF OLD.decided_at IS NOT NULL AND OLD.decided_at IS DISTINCT FROM NEW.decided_at THEN
      UPDATE approval_wait_days SET decided = decided - 1
        WHERE team_id = OLD.team_id AND day = OLD.created_at / 86400000 AND tool_name = OLD.tool_name
          AND bucket = wait_bucket(OLD.decided_at - OLD.created_at);
    END IF;
  END IF;
  IF TG_OP = 'INSERT' OR OLD.status IS DISTINCT FROM NEW.status THEN
    INSERT INTO approval_days AS d (team_id, day, tool_name, status, requests)
      VALUES (NEW.team_id, NEW.created_at / 86400000, NEW.tool_name, NEW.status, 1)
      ON CONFLICT (team_id, day, tool_name, status) DO UPDATE SET requests = d.requests + 1;
  END IF;
  IF NEW.decided_at IS NOT NULL AND (TG_OP = 'INSERT' OR OLD.decided_at IS DISTINCT FROM NEW.decided_at) THEN
    INSERT INTO approval_wait_days AS w (team_id, day, tool_name, bucket, decided)
      VALUES (NEW.team_id, NEW.created_at / 86400000, NEW.tool_name, wait_bucket(NEW.decided_at - NEW.created_at), 1)
      ON CONFLICT (team_id, day, tool_name, bucket) DO UPDATE SET decided = w.decided + 1;
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER approval_days_keep AFTER INSERT OR UPDATE OF status, decided_at ON approvals
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION approval_days_keep();
--> statement-breakpoint
CREATE FUNCTION deadline_days_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO deadline_days AS d (team_id, day, kind, events) VALUES (NEW.team_id, NEW.at / 86400000, NEW.kind, 1)
    ON CONFLICT (team_id, day, kind) DO UPDATE SET events = d.events + 1;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER deadline_days_keep AFTER INSERT ON audit_events FOR EACH ROW
  WHEN (NEW.team_id IS NOT NULL AND NEW.kind IN ('approval.expired', 'approval.escalated'))
  EXECUTE FUNCTION deadline_days_keep();
--> statement-breakpoint
-- An audit payload as JSON, or null when it is not JSON (which never fails the write that stores it).
CREATE FUNCTION audit_payload_json(payload text) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  RETURN payload::jsonb;
EXCEPTION WHEN others THEN
  RETURN NULL;
END;
$$;
--> statement-breakpoint
-- One count of a run's end as src/audit/usage.ts reads it: a number from 0 to 2^53 - 1 in the `usage` object,
-- else null (the run then counts as unrecorded).
CREATE FUNCTION audit_usage_count(doc jsonb, field text) RETURNS numeric LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN jsonb_typeof(doc -> 'usage' -> field) = 'number' THEN
    CASE WHEN (doc -> 'usage' ->> field)::numeric BETWEEN 0 AND 9007199254740991
      THEN (doc -> 'usage' ->> field)::numeric END
  END
$$;
--> statement-breakpoint
-- The runs' ends that count in usage, with who started each run and its counts: what run_usage_days sums.
CREATE VIEW run_usage_ends AS
  SELECT c.seq, c.run_id, c.team_id, c.at / 86400000 AS day,
    coalesce((SELECT s.actor FROM audit_events s WHERE s.run_id = c.run_id AND s.kind = 'run.started'
      ORDER BY s.seq LIMIT 1), '') AS person,
    audit_usage_count(audit_payload_json(c.payload), 'promptTokens') AS prompt,
    audit_usage_count(audit_payload_json(c.payload), 'completionTokens') AS completion
  FROM audit_events c
  WHERE c.team_id IS NOT NULL AND c.run_id IS NOT NULL
    AND (c.kind = 'run.completed' OR (c.kind IN ('run.failed', 'run.cancelled') AND c.payload LIKE '%"usage":%'));
--> statement-breakpoint
-- The tools each run called, by name ('' for a run that called none is added where it is read).
CREATE VIEW run_tools AS
  SELECT DISTINCT e.run_id, doc.json ->> 'tool' AS tool
  FROM audit_events e, LATERAL (SELECT audit_payload_json(e.payload) AS json) doc
  WHERE e.run_id IS NOT NULL AND e.kind = 'tool.finished' AND jsonb_typeof(doc.json -> 'tool') = 'string';
--> statement-breakpoint
CREATE FUNCTION run_usage_days_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO run_usage_days AS u (team_id, day, series, series_key, runs, unrecorded, prompt_tokens, completion_tokens)
    SELECT e.team_id, e.day, k.series, k.series_key, 1,
      CASE WHEN e.prompt IS NULL OR e.completion IS NULL THEN 1 ELSE 0 END,
      round(coalesce(e.prompt, 0)), round(coalesce(e.completion, 0))
    FROM run_usage_ends e, LATERAL (
      SELECT 'person' AS series, e.person AS series_key
      UNION ALL SELECT 'tool', t.tool FROM run_tools t WHERE t.run_id = e.run_id
      UNION ALL SELECT 'tool', '' WHERE NOT EXISTS (SELECT 1 FROM run_tools t WHERE t.run_id = e.run_id)
    ) AS k
    WHERE e.seq = NEW.seq
    ON CONFLICT (team_id, day, series, series_key) DO UPDATE SET runs = u.runs + 1,
      unrecorded = u.unrecorded + excluded.unrecorded, prompt_tokens = u.prompt_tokens + excluded.prompt_tokens,
      completion_tokens = u.completion_tokens + excluded.completion_tokens;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER run_usage_days_keep AFTER INSERT ON audit_events FOR EACH ROW
  WHEN (NEW.team_id IS NOT NULL AND NEW.run_id IS NOT NULL
    AND (NEW.kind = 'run.completed' OR (NEW.kind IN ('run.failed', 'run.cancelled') AND NEW.payload LIKE '%"usage":%')))
  EXECUTE FUNCTION run_usage_days_keep();
--> statement-breakpoint
-- The totals of what is already stored, as the triggers above would have kept them.
INSERT INTO approval_days (team_id, day, tool_name, status, requests)
  SELECT team_id, created_at / 86400000, tool_name, status, count(*) FROM approvals
  GROUP BY team_id, created_at / 86400000, tool_name, status;
--> statement-breakpoint
INSERT INTO approval_wait_days (team_id, day, tool_name, bucket, decided)
  SELECT team_id, created_at / 86400000, tool_name, wait_bucket(decided_at - created_at), count(*)
  FROM approvals WHERE decided_at IS NOT NULL
  GROUP BY team_id, created_at / 86400000, tool_name, wait_bucket(decided_at - created_at);
--> statement-breakpoint
INSERT INTO deadline_days (team_id, day, kind, events)
  SELECT team_id, at / 86400000, kind, count(*) FROM audit_events
  WHERE team_id IS NOT NULL AND kind IN ('approval.expired', 'approval.escalated')
  GROUP BY team_id, at / 86400000, kind;
--> statement-breakpoint
INSERT INTO run_usage_days (team_id, day, series, series_key, runs, unrecorded, prompt_tokens, completion_tokens)
  SELECT e.team_id, e.day, k.series, k.series_key, count(*),
    sum(CASE WHEN e.prompt IS NULL OR e.completion IS NULL THEN 1 ELSE 0 END),
    sum(round(coalesce(e.prompt, 0))), sum(round(coalesce(e.completion, 0)))
  FROM run_usage_ends e, LATERAL (
    SELECT 'person' AS series, e.person AS series_key
    UNION ALL SELECT 'tool', t.tool FROM run_tools t WHERE t.run_id = e.run_id
    UNION ALL SELECT 'tool', '' WHERE NOT EXISTS (SELECT 1 FROM run_tools t WHERE t.run_id = e.run_id)
  ) AS k
  GROUP BY e.team_id, e.day, k.series, k.series_key;
