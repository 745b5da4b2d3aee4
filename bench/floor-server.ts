import { createServer } from 'node:http';

/** The floor of the click benchmark, run as its own process: reads the request body and answers 200 at once. */
createServer((req, res) => {
  req.resume();
  req.on('end', () => res.end());
}).listen(Number(process.env.PORT), '127.0.0.1');
