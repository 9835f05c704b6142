import { queueContract } from "../testing/queue-contract.js";
import { createMemoryQueue } from "./memory-queue.js";

queueContract("memory", async () => createMemoryQueue());
