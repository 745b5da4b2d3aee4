import { benchClickAck } from './bench/click-ack.js';
import { formatTable } from './bench/report.js';
import { startEmbeddedPostgres } from './test/support/embedded-postgres.js';
const pg = await startEmbeddedPostgres(['-c', 'max_connections=300']);
try {
  const r = await benchClickAck({ concurrencies: [1, 10, 100], samples: 200 }, pg.url);
  console.log(formatTable(r));
} finally { await pg.stop(); }
process.exit(0);
