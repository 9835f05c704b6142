// Entry of the text analysis worker threads (piscina runs the named export a task asks for).
// compromise's tagger takes hundreds of milliseconds on a long chain; here it does not hold up
// the event loop that answers requests.
import { type ChainAnalysis, extractiveAnalysis, extractiveSummary } from "./text-analysis.js";

export const analyse = (text: string): ChainAnalysis => extractiveAnalysis(text);

export const summarise = (text: string): string => extractiveSummary(text);
