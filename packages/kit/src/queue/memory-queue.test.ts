import { createMemoryQueue } from "./memory-queue.js";
import { queueContract } from "./queue-contract.js";

queueContract("memory", async () => createMemoryQueue());
