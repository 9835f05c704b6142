export interface ProgressStream {
  isTTY?: boolean;
  columns?: number;
  write(text: string): unknown;
}

/** A one-line progress bar redrawn in place; silent when the stream is not a terminal. */
export function createProgressBar(stream: ProgressStream, label: string) {
  return (done: number, total: number) => {
    if (!stream.isTTY || total === 0) return;
    const width = Math.max(10, Math.min(40, (stream.columns ?? 80) - label.length - 20));
    const filled = Math.round((done / total) * width);
    const bar = `${"=".repeat(filled)}${" ".repeat(width - filled)}`;
    stream.write(`\r${label} [${bar}] ${done}/${total}${done === total ? "\n" : ""}`);
  };
}
