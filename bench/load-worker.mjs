// The load generator runs on its own thread, so the server under test does not share an event loop with it.
// Each message is a batch of prepared requests, sent at once; the answer is each request's response time (ms).
import { parentPort } from 'node:worker_threads';

parentPort?.on('message', async (batch) => {
  const times = await Promise.all(
    batch.map(async ({ url, headers, body }) => {
      const started = performance.now();
      const response = await fetch(url, { method: body === undefined ? 'GET' : 'POST', headers, body });
      await response.arrayBuffer();
      const elapsed = performance.now() - started;
      return response.ok ? elapsed : -response.status;
    }),
  );
  parentPort?.postMessage(times);
});
