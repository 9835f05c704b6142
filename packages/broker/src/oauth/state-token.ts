import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

// One implementation shared with the gateway; re-exported because the broker imports it from here.
export { isAllowedReturnUrl } from "@atrium/kit";

/** What the broker needs back at the callback; travels through the browser sealed. */
export interface FlowState {
  /** oauth2 or saml. */
  kind: "oauth2" | "saml";
  providerId: string;
  workspaceId: string;
  returnUrl: string;
  redirectUri: string;
  scopes: string[];
  /** PKCE verifier and OIDC nonce: encrypted, so the browser and the IdP never see them. */
  codeVerifier?: string;
  nonce?: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

export interface StateCodec {
  encode(state: FlowState): string;
  /** Throws on a forged, altered or expired state; the message says which. */
  decode(token: string, now?: number): FlowState;
}

/**
 * AES-256-GCM under a key derived from STATE_KEY: the tag signs the state (expiry, provider,
 * workspace, return URL) and the encryption keeps the PKCE verifier out of the browser history.
 */
export function createStateCodec(stateKey: string): StateCodec {
  const key = createHash("sha256").update("atrium-broker-state\0").update(stateKey).digest();
  return {
    encode(state) {
      const nonce = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, nonce);
      const body = Buffer.concat([cipher.update(JSON.stringify(state), "utf8"), cipher.final()]);
      return Buffer.concat([nonce, body, cipher.getAuthTag()]).toString("base64url");
    },
    decode(token, now = Date.now()) {
      const raw = Buffer.from(token, "base64url");
      if (raw.length < 29) throw new Error("state is malformed");
      const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(raw.length - 16));
      let state: FlowState;
      try {
        const text = Buffer.concat([
          decipher.update(raw.subarray(12, raw.length - 16)),
          decipher.final(),
        ]).toString("utf8");
        state = JSON.parse(text) as FlowState;
      } catch {
        throw new Error("state signature is invalid");
      }
      if (state.expiresAt < now) throw new Error("state has expired");
      return state;
    },
  };
}
