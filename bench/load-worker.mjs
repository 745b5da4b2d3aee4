// The load generator runs on its own thread, so the server under test does not share an event loop with it.
// Each message is a batch of prepared requests, sent at once; the answer is each request's response time (ms).
// It uses node:http with keep-alive connections rather than fetch: fetch costs the generator several times more
// CPU a request, and at 100 requests at once that cost, not the server, was most of what the floor measured.
import http from 'node:http';
import { parentPort } from 'node:worker_threads';

const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });

/**
 * Sends one request; resolves with its response time, or minus its status when that is not 2xx. A request on a
 * kept-alive connection the server closed meanwhile is sent once more on a new one, timed from then, as Node's
 * documentation advises (`request.reusedSocket`).
 */
function send(prepared, again = false) {
  const { url, headers = {}, body } = prepared;
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const options = {
      method: body === undefined ? 'GET' : 'POST',
      headers: body === undefined ? headers : { ...headers, 'content-length': Buffer.byteLength(body) },
      agent,
    };
    const request = http.request(url, options, (response) => {
      response.resume();
      response.on('error', reject);
      response.on('end', () => {
        const elapsed = performance.now() - started;
        const status = response.statusCode ?? 0;
        resolve(status >= 200 && status < 300 ? elapsed : -status);
      });
    });
    request.on('error', (error) => {
      if (!again && request.reusedSocket && error.code === 'ECONNRESET') resolve(send(prepared, true));
      else reject(error);
    });
    request.end(body);
  });
}

parentPort?.on('message', async (batch) => {
  parentPort?.postMessage(await Promise.all(batch.map((prepared) => send(prepared))));
});
