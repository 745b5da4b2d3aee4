CREATE TABLE `approval_days` (
	`team_id` text NOT NULL,
	`day` integer NOT NULL,
	`tool_name` text NOT NULL,
	`status` text NOT NULL,
	`requests` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `approval_days_key` ON `approval_days` (`team_id`,`day`,`tool_name`,`status`);--> statement-breakpoint
CREATE TABLE `approval_wait_days` (
	`team_id` text NOT NULL,
	`day` integer NOT NULL,
	`tool_name` text NOT NULL,
	`bucket` integer NOT NULL,
	`decided` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `approval_wait_days_key` ON `approval_wait_days` (`team_id`,`day`,`tool_name`,`bucket`);--> statement-breakpoint
CREATE TABLE `deadline_days` (
	`team_id` text NOT NULL,
	`day` integer NOT NULL,
	`kind` text NOT NULL,
	`events` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `deadline_days_key` ON `deadline_days` (`team_id`,`day`,`kind`);--> statement-breakpoint
CREATE TABLE `run_usage_days` (
	`team_id` text NOT NULL,
	`day` integer NOT NULL,
	`series` text NOT NULL,
	`series_key` text NOT NULL,
	`runs` integer NOT NULL,
	`unrecorded` integer NOT NULL,
	`prompt_tokens` integer NOT NULL,
	`completion_tokens` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `run_usage_days_key` ON `run_usage_days` (`team_id`,`day`,`series`,`series_key`);--> statement-breakpoint
-- The daily totals are kept by these triggers as rows are written (src/db/schema/daily-totals.ts). A request's
-- team, tool and creation time never change; its status and decision time do.
CREATE TRIGGER approval_days_insert AFTER INSERT ON approvals BEGIN
  INSERT INTO approval_days (team_id, day, tool_name, status, requests)
    VALUES (NEW.team_id, NEW.created_at / 86400000, NEW.tool_name, NEW.status, 1)
    ON CONFLICT (team_id, day, tool_name, status) DO UPDATE SET requests = requests + 1;
  INSERT INTO approval_wait_days (team_id, day, tool_name, bucket, decided)
    SELECT NEW.team_id, NEW.created_at / 86400000, NEW.tool_name,
      CAST(floor(ln(max(NEW.decided_at - NEW.created_at, 1)) / ln(1.1)) AS INTEGER), 1
    WHERE NEW.decided_at IS NOT NULL
    ON CONFLICT (team_id, day, tool_name, bucket) DO UPDATE SET decided = decided + 1;
END;
--> statement-breakpoint
CREATE TRIGGER approval_days_status AFTER UPDATE OF status ON approvals WHEN OLD.status IS NOT NEW.status BEGIN
  UPDATE approval_days SET requests = requests - 1
    WHERE team_id = OLD.team_id AND day = OLD.created_at / 86400000 AND tool_name = OLD.tool_name
      AND status = OLD.status;
  INSERT INTO approval_days (team_id, day, tool_name, status, requests)
    VALUES (NEW.team_id, NEW.created_at / 86400000, NEW.tool_name, NEW.status, 1)
    ON CONFLICT (team_id, day, tool_name, status) DO UPDATE SET requests = requests + 1;
END;
--> statement-breakpoint
CREATE TRIGGER approval_wait_days_decided AFTER UPDATE OF decided_at ON approvals
WHEN OLD.decided_at IS NOT NEW.decided_at BEGIN
  UPDATE approval_wait_days SET decided = decided - 1
    WHERE OLD.decided_at IS NOT NULL AND team_id = OLD.team_id AND day = OLD.created_at / 86400000
      AND tool_name = OLD.tool_name
      AND bucket = CAST(floor(ln(max(OLD.decided_at - OLD.created_at, 1)) / ln(1.1)) AS INTEGER);
  INSERT INTO approval_wait_days (team_id, day, tool_name, bucket, decided)
    SELECT NEW.team_id, NEW.created_at / 86400000, NEW.tool_name,
      CAST(floor(ln(max(NEW.decided_at - NEW.created_at, 1)) / ln(1.1)) AS INTEGER), 1
    WHERE NEW.decided_at IS NOT NULL
    ON CONFLICT (team_id, day, tool_name, bucket) DO UPDATE SET decided = decided + 1;
END;
--> statement-breakpoint
CREATE TRIGGER deadline_days_insert AFTER INSERT ON audit_events
WHEN NEW.team_id IS NOT NULL AND NEW.kind IN ('approval.expired', 'approval.escalated') BEGIN
  INSERT INTO deadline_days (team_id, day, kind, events) VALUES (NEW.team_id, NEW.at / 86400000, NEW.kind, 1)
    ON CONFLICT (team_id, day, kind) DO UPDATE SET events = events + 1;
END;
--> statement-breakpoint
-- A run's end, counted as src/audit/usage.ts reads it: each count a number from 0 to 2^53 - 1 in the payload's
-- `usage` object, else the run counts as unrecorded (a payload that is not JSON counts so too, and never
-- fails the write). `instr`, not LIKE, which ignores case in SQLite and not in PostgreSQL.
CREATE TRIGGER run_usage_days_insert AFTER INSERT ON audit_events
WHEN NEW.team_id IS NOT NULL AND NEW.run_id IS NOT NULL
  AND (NEW.kind = 'run.completed' OR (NEW.kind IN ('run.failed', 'run.cancelled') AND instr(NEW.payload, '"usage":') > 0))
BEGIN
  INSERT INTO run_usage_days (team_id, day, series, series_key, runs, unrecorded, prompt_tokens, completion_tokens)
    SELECT NEW.team_id, NEW.at / 86400000, series, series_key, 1,
      CASE WHEN prompt IS NULL OR completion IS NULL THEN 1 ELSE 0 END,
      CAST(round(coalesce(prompt, 0)) AS INTEGER), CAST(round(coalesce(completion, 0)) AS INTEGER)
    FROM (
      SELECT
        CASE WHEN json_valid(NEW.payload) THEN
          CASE WHEN json_type(NEW.payload, '$.usage.promptTokens') IN ('integer', 'real')
            AND json_extract(NEW.payload, '$.usage.promptTokens') BETWEEN 0 AND 9007199254740991
          THEN json_extract(NEW.payload, '$.usage.promptTokens') END
        END AS prompt,
        CASE WHEN json_valid(NEW.payload) THEN
          CASE WHEN json_type(NEW.payload, '$.usage.completionTokens') IN ('integer', 'real')
            AND json_extract(NEW.payload, '$.usage.completionTokens') BETWEEN 0 AND 9007199254740991
          THEN json_extract(NEW.payload, '$.usage.completionTokens') END
        END AS completion
    ) AS counts, (
      SELECT 'person' AS series, coalesce((SELECT s.actor FROM audit_events s
        WHERE s.run_id = NEW.run_id AND s.kind = 'run.started' ORDER BY s.seq LIMIT 1), '') AS series_key
      UNION ALL
      SELECT 'tool', tool FROM (
        SELECT DISTINCT CASE WHEN json_valid(t.payload) THEN CASE WHEN json_type(t.payload, '$.tool') = 'text' THEN json_extract(t.payload, '$.tool') END END AS tool
        FROM audit_events t WHERE t.run_id = NEW.run_id AND t.kind = 'tool.finished'
      ) WHERE tool IS NOT NULL
      UNION ALL
      SELECT 'tool', '' WHERE NOT EXISTS (SELECT 1 FROM audit_events t WHERE t.run_id = NEW.run_id
        AND t.kind = 'tool.finished' AND CASE WHEN json_valid(t.payload) THEN CASE WHEN json_type(t.payload, '$.tool') = 'text' THEN json_extract(t.payload, '$.tool') END END IS NOT NULL)
    ) AS keys
    WHERE true
    ON CONFLICT (team_id, day, series, series_key) DO UPDATE SET runs = runs + 1,
      unrecorded = unrecorded + excluded.unrecorded, prompt_tokens = prompt_tokens + excluded.prompt_tokens,
      completion_tokens = completion_tokens + excluded.completion_tokens;
END;
--> statement-breakpoint
-- The totals of what is already stored, as the triggers above would have kept them.
INSERT INTO approval_days (team_id, day, tool_name, status, requests)
  SELECT team_id, created_at / 86400000, tool_name, status, count(*) FROM approvals
  GROUP BY team_id, created_at / 86400000, tool_name, status;
--> statement-breakpoint
INSERT INTO approval_wait_days (team_id, day, tool_name, bucket, decided)
  SELECT team_id, created_at / 86400000, tool_name,
    CAST(floor(ln(max(decided_at - created_at, 1)) / ln(1.1)) AS INTEGER) AS bucket, count(*)
  FROM approvals WHERE decided_at IS NOT NULL
  GROUP BY team_id, created_at / 86400000, tool_name, bucket;
--> statement-breakpoint
INSERT INTO deadline_days (team_id, day, kind, events)
  SELECT team_id, at / 86400000, kind, count(*) FROM audit_events
  WHERE team_id IS NOT NULL AND kind IN ('approval.expired', 'approval.escalated')
  GROUP BY team_id, at / 86400000, kind;
--> statement-breakpoint
INSERT INTO run_usage_days (team_id, day, series, series_key, runs, unrecorded, prompt_tokens, completion_tokens)
  SELECT e.team_id, e.day, k.series, k.series_key, count(*),
    sum(CASE WHEN e.prompt IS NULL OR e.completion IS NULL THEN 1 ELSE 0 END),
    sum(CAST(round(coalesce(e.prompt, 0)) AS INTEGER)), sum(CAST(round(coalesce(e.completion, 0)) AS INTEGER))
  FROM (
    SELECT c.run_id, c.team_id, c.at / 86400000 AS day,
      CASE WHEN json_valid(c.payload) THEN
        CASE WHEN json_type(c.payload, '$.usage.promptTokens') IN ('integer', 'real')
          AND json_extract(c.payload, '$.usage.promptTokens') BETWEEN 0 AND 9007199254740991
        THEN json_extract(c.payload, '$.usage.promptTokens') END
      END AS prompt,
      CASE WHEN json_valid(c.payload) THEN
        CASE WHEN json_type(c.payload, '$.usage.completionTokens') IN ('integer', 'real')
          AND json_extract(c.payload, '$.usage.completionTokens') BETWEEN 0 AND 9007199254740991
        THEN json_extract(c.payload, '$.usage.completionTokens') END
      END AS completion
    FROM audit_events c
    WHERE c.team_id IS NOT NULL AND c.run_id IS NOT NULL
      AND (c.kind = 'run.completed' OR (c.kind IN ('run.failed', 'run.cancelled') AND instr(c.payload, '"usage":') > 0))
  ) AS e
  JOIN (
    SELECT r.run_id, 'person' AS series, coalesce((SELECT s.actor FROM audit_events s
      WHERE s.run_id = r.run_id AND s.kind = 'run.started' ORDER BY s.seq LIMIT 1), '') AS series_key
    FROM (SELECT DISTINCT run_id FROM audit_events WHERE run_id IS NOT NULL) AS r
    UNION ALL
    SELECT run_id, 'tool', tool FROM (
      SELECT DISTINCT t.run_id, CASE WHEN json_valid(t.payload) THEN CASE WHEN json_type(t.payload, '$.tool') = 'text' THEN json_extract(t.payload, '$.tool') END END AS tool
      FROM audit_events t WHERE t.run_id IS NOT NULL AND t.kind = 'tool.finished'
    ) WHERE tool IS NOT NULL
    UNION ALL
    SELECT r.run_id, 'tool', '' FROM (SELECT DISTINCT run_id FROM audit_events WHERE run_id IS NOT NULL) AS r
    WHERE NOT EXISTS (SELECT 1 FROM audit_events t WHERE t.run_id = r.run_id AND t.kind = 'tool.finished'
      AND CASE WHEN json_valid(t.payload) THEN CASE WHEN json_type(t.payload, '$.tool') = 'text' THEN json_extract(t.payload, '$.tool') END END IS NOT NULL)
  ) AS k ON k.run_id = e.run_id
  GROUP BY e.team_id, e.day, k.series, k.series_key;
