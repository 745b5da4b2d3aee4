import { defineConfig } from 'vitest/config';
import { COMMON_TEST_OPTIONS } from './vitest.config.js';

/**
 * Suites that start the bot, the terminal chat, a browser or other programs as processes or worker threads, need
 * PostgreSQL only, measure load (many requests), wait out real retry back-off (seconds per test), or read the
 * shared recordings of model servers: `npm test` runs them, `npm run test:fast` does not (docs/testing.md).
 */
export const SLOW_SUITES = [
  'test/bench/**',
  'test/browser/**',
  'test/e2e/acked-clicks.test.ts',
  'test/e2e/approve-restart-reject.test.ts',
  'test/e2e/audit-delivery.test.ts',
  'test/e2e/batch-decisions-late.test.ts',
  'test/e2e/card-update-faults.test.ts',
  'test/e2e/closed-output.test.ts',
  'test/e2e/console/console-process.test.ts',
  'test/e2e/crash-stages-*.test.ts',
  'test/e2e/database-faults.test.ts',
  'test/e2e/database-health.test.ts',
  'test/e2e/load.test.ts',
  'test/e2e/malformed-input.test.ts',
  'test/e2e/mcp-servers.test.ts',
  'test/e2e/model-cut-off.test.ts',
  'test/e2e/model-dialects-conformance.test.ts',
  'test/e2e/model-faults.test.ts',
  'test/e2e/multi-process.test.ts',
  'test/e2e/nested-agents-crash.test.ts',
  'test/e2e/oauth-token-rotation.test.ts',
  'test/e2e/oauth-uninstall-workers.test.ts',
  'test/e2e/policy-reload.test.ts',
  'test/e2e/policy-startup.test.ts',
  'test/e2e/restart.test.ts',
  'test/e2e/rolling-deploy.test.ts',
  'test/e2e/security.test.ts',
  'test/e2e/security/redaction.test.ts',
  'test/e2e/shutdown.test.ts',
  'test/e2e/slack-faults.test.ts',
  'test/e2e/startup-checks.test.ts',
  'test/e2e/stop-across-processes.test.ts',
  'test/e2e/telemetry.test.ts',
  'test/e2e/terminal-chat.test.ts',
  'test/e2e/tool-output-limit.test.ts',
  'test/integration/audit-cli.test.ts',
  'test/integration/context-budget.test.ts',
  'test/integration/db-copy.test.ts',
  'test/integration/decision-round-trips.test.ts',
  'test/integration/esm-imports.test.ts',
  'test/integration/team-clients-retries.test.ts',
  'test/integration/worker-handover.test.ts',
  'test/integration/worker-pool-roles.test.ts',
  'test/support/support.test.ts',
];

/**
 * `npm run test:fast`: unit, integration and the end-to-end suites that run the bot in the test's own process
 * against the fake Slack and model, on SQLite only.
 */
export default defineConfig({
  test: {
    ...COMMON_TEST_OPTIONS,
    include: [...COMMON_TEST_OPTIONS.include],
    exclude: SLOW_SUITES,
    env: { TEST_DATABASE_KINDS: 'sqlite' },
    // Temporary files (every suite's SQLite databases) in RAM when there is room: see the file.
    globalSetup: ['test/support/ram-temp-folder.ts'],
    // Keeps each module as transformed on disk (node_modules/.experimental-vitest-cache, keyed by its content),
    // so a run after the first does not transform the bot again (a few seconds of a run).
    experimental: { fsModuleCache: true },
  },
});
