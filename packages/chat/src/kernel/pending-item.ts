/** Something a yielded step waits for before it can go on. */
export interface PendingItem {
  kind: "credentials" | "approval";
  /** What exactly is missing or needs approving, in words a person can act on. */
  detail: string;
}
