import Database from 'better-sqlite3';
import { approvalIdOf, isApprovalCard } from '../test/e2e/harness.js';
import { startBotProcess } from '../test/support/bot-process.js';
import { clickRequest, pauseThreads, scriptApprovalFlow, startFakes, waitForAnswers, ANSWER } from './rig.js';

const concurrencies = (process.argv[2] ?? '1,10,100').split(',').map(Number);
const samples = Number(process.argv[3] ?? 300);
const fakes = await startFakes();
const bot = await startBotProcess({ env: { ...fakes.env, LOG_LEVEL: process.env.BOT_LOG ?? 'warn' } });
const url = `${bot.url}/slack/events`;
let needed0 = 0; let cards0: import('../test/support/fake-slack.js').SlackCall[] = [];
try {
  scriptApprovalFlow(fakes.model);
  const rounds = concurrencies.map((c) => Math.max(1, Math.ceil(samples / c)));
  const warmup = Math.max(...concurrencies);
  const needed = warmup + concurrencies.reduce((sum, c, i) => sum + c * (rounds[i] ?? 1), 0);
  const t0 = performance.now();
  const cards = await pauseThreads(fakes, url, needed);
  needed0 = needed; cards0 = cards.slice(0, needed);
  console.log('paused', needed, 'in', ((performance.now() - t0) / 1000).toFixed(1), 's');
  let used = 0;
  let answered = 0;
  const measure = async (n: number) => {
    const batch = cards.slice(used, used + n);
    used += n;
    await fakes.load.fire(batch.map((card) => clickRequest(url, card)));
    answered += n;
    const t = performance.now();
    await waitForAnswers(fakes, answered);
    const ms = performance.now() - t;
    if (ms > 1000) console.log('slow answers', answered, ms.toFixed(0), 'ms');
  };
  await measure(warmup);
  for (const [i, c] of concurrencies.entries()) {
    const t = performance.now();
    for (let r = 0; r < (rounds[i] ?? 1); r++) await measure(c);
    console.log(c, 'done in', ((performance.now() - t) / 1000).toFixed(1), 's');
  }
  const out = bot.output();
  const counts: Record<string, number> = {};
  for (const m of out.matchAll(/"msg":"([^"]+)"/g)) counts[m[1] ?? ''] = (counts[m[1] ?? ''] ?? 0) + 1;
  console.log('bot log messages', counts, 'answers', fakes.slack.calls.filter((c) => c.params.text === ANSWER).length, 'model calls', fakes.model.requests.length);
  const allCards = fakes.slack.calls.filter((c) => c.method === 'chat.postMessage' && isApprovalCard(c));
  console.log('cards', allCards.length, 'distinct approvals', new Set(allCards.map(approvalIdOf)).size, 'in first', needed0, 'cards used:', new Set(cards0.map(approvalIdOf)).size);
  const ans = fakes.slack.calls.filter((c) => c.method === 'chat.postMessage' && c.params.text === ANSWER);
  console.log('answers', ans.length, 'distinct threads', new Set(ans.map((c) => String(c.params.thread_ts))).size);
} catch (e) {
  console.log('FAILED', e);
  const db = new Database(fakes.env.DATABASE_PATH, { readonly: true });
  console.log(db.prepare("select status, count(*) n from runs group by status").all());
  console.log(db.prepare("select status, count(*) n from approvals group by status").all());
  console.log(db.prepare("select kind, attempts, count(*) n from deliveries group by kind, attempts").all());
  console.log(db.prepare("select id, status, lease_owner, lease_until, updated_at from runs where status in ('running') limit 5").all());
  const methods: Record<string, number> = {};
  for (const c of fakes.slack.calls) methods[c.method] = (methods[c.method] ?? 0) + 1;
  console.log(methods, 'answers', fakes.slack.calls.filter((c) => c.params.text === ANSWER).length);
  console.log(bot.output().slice(-6000));
} finally {
  await bot.kill('SIGTERM');
  await fakes.close();
}
