import { benchTurnOverhead } from './bench/turn-overhead.js';
for (let i = 0; i < 2; i++) {
const r = await benchTurnOverhead({ turns: 300 });
console.log(r.rows.map((row) => `${row.case}: ${Number(row.metrics['median ms']).toFixed(2)}`).join(' | '));
}
process.exit(0);
