import { cacheContract } from "../testing/cache-contract.js";
import { createMemoryCache } from "./memory-cache.js";

cacheContract("memory", async (_t, onHandlerError) => createMemoryCache({ onHandlerError }));
