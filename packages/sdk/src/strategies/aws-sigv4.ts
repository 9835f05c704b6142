import { Sha256 } from "@aws-crypto/sha256-js";
import { SignatureV4 } from "@smithy/signature-v4";
import type { OutgoingRequest } from "./outgoing-request.js";

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface SigV4Options {
  region: string;
  service: string;
  credentials: AwsCredentials;
  /** Fixed signing time; tests use it to recompute a signature. */
  signingDate?: Date;
}

/** Signs with the AWS SDK's own signer, so canonicalisation matches what AWS verifies. */
export async function signSigV4(
  request: OutgoingRequest,
  options: SigV4Options,
): Promise<OutgoingRequest> {
  const signer = new SignatureV4({
    credentials: options.credentials,
    region: options.region,
    service: options.service,
    sha256: Sha256,
  });
  const { url } = request;
  const headers: Record<string, string> = { host: url.host };
  request.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const signed = await signer.sign(
    {
      method: request.method,
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port === "" ? undefined : Number(url.port),
      path: url.pathname,
      query: queryOf(url),
      headers,
      body: request.body,
    },
    { signingDate: options.signingDate },
  );
  const out = new Headers();
  for (const [name, value] of Object.entries(signed.headers)) {
    // fetch derives Host from the URL, and the signed value was taken from that same URL.
    if (name.toLowerCase() !== "host") out.set(name, value);
  }
  return { ...request, headers: out };
}

function queryOf(url: URL): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const name of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(name);
    query[name] = values.length === 1 ? values[0] : values;
  }
  return query;
}
