// Entry of the memory service's worker threads (piscina). Plain JavaScript on purpose: Node 20
// does not hand the tsx loader of a run from sources (the tests) on to worker threads, so this
// file registers it when the pool asks for it, then loads the module that does the work and
// runs the task's function.
import { workerData } from "node:worker_threads";

if (workerData.tsx) (await import(workerData.tsx)).register();
const tasks = await import(workerData.module);

export default ({ task, input }) => tasks[task](input);
