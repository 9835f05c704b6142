/** One finding, attributed to the file (and line, when known) it comes from. */
export interface ManifestProblem {
  file: string;
  line?: number;
  message: string;
}

export function formatProblem(problem: ManifestProblem): string {
  const where = problem.line ? `${problem.file}:${problem.line}` : problem.file;
  return `${where}: ${problem.message}`;
}

/** Raised when the manifest cannot be used; carries every problem found, not just the first. */
export class ManifestProblems extends Error {
  constructor(readonly problems: ManifestProblem[]) {
    super(problems.map(formatProblem).join("\n"));
    this.name = "ManifestProblems";
  }
}
