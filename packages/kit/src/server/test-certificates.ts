import { generate } from "selfsigned";

/**
 * Certificates generated at test time, so no key is ever committed. Test support only: the
 * service itself reads PEM files named by configuration.
 */

export interface PemPair {
  cert: string;
  key: string;
}

export interface TestPki {
  ca: PemPair;
  /** For `localhost` and 127.0.0.1, signed by `ca`. */
  server: PemPair;
  /** A client certificate signed by `ca`. */
  client: PemPair;
  /** A client certificate from an unrelated CA, which the server must refuse. */
  foreignClient: PemPair;
}

const common = { keyType: "ec", algorithm: "sha256" } as const;
const yesterday = () => new Date(Date.now() - 86_400_000);

async function createAuthority(commonName: string): Promise<PemPair> {
  const pems = await generate([{ name: "commonName", value: commonName }], {
    ...common,
    notBeforeDate: yesterday(),
    extensions: [
      { name: "basicConstraints", cA: true, critical: true },
      { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

async function issue(
  ca: PemPair,
  commonName: string,
  usage: "serverAuth" | "clientAuth",
): Promise<PemPair> {
  const pems = await generate([{ name: "commonName", value: commonName }], {
    ...common,
    notBeforeDate: yesterday(),
    ca,
    extensions: [
      { name: "basicConstraints", cA: false, critical: true },
      { name: "keyUsage", digitalSignature: true, critical: true },
      { name: "extKeyUsage", [usage]: true },
      {
        name: "subjectAltName",
        altNames: [
          { type: 2, value: commonName },
          { type: 7, ip: "127.0.0.1" },
        ],
      },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

export async function createTestPki(): Promise<TestPki> {
  const ca = await createAuthority("Atrium Test CA");
  const foreignCa = await createAuthority("Unrelated CA");
  return {
    ca,
    server: await issue(ca, "localhost", "serverAuth"),
    client: await issue(ca, "agent", "clientAuth"),
    foreignClient: await issue(foreignCa, "intruder", "clientAuth"),
  };
}
