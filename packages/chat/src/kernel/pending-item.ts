/** Something a yielded step waits for before it can go on. */
export type PendingItem = SuppliedItem | ConsentItem;

/** A credential, a setting or a person's approval, supplied with the resume. */
export interface SuppliedItem {
  kind: "credentials" | "approval";
  /** What exactly is missing or needs approving, in words a person can act on. */
  detail: string;
}

/**
 * A connection the step needs does not exist or needs a new consent: the person opens
 * `authorization_url` (the gateway's connect flow for the step's workspace and this provider),
 * and the step resumes by itself once the connection is active. The MCP elicitation carries the
 * same four fields.
 */
export interface ConsentItem {
  kind: "consent";
  /** The broker's provider id. */
  provider: string;
  authorization_url: string;
  detail: string;
}

export const pendingKinds: readonly PendingItem["kind"][] = ["approval", "credentials", "consent"];
