// Runs a TypeScript module of the benchmark on a worker thread: registers tsx, then calls the module's
// `workerMain(data, port)`.
import { parentPort, workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
const module = await import(workerData.module);
await module.workerMain(workerData.data, parentPort);
