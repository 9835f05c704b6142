import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";
import { needsServer } from "@atrium/kit/testing";
import { generate } from "selfsigned";
import { SignedXml } from "xml-crypto";
import { startBrokerOnTestPostgres, testBrokerEnv } from "../testing/test-broker.js";

const IDP_ENTITY = "https://idp.example.test/metadata";
const SP_ENTITY = "urn:atrium:broker:test";
const ACS_URL = "http://localhost:8081/saml/acs";

function samlResponse(options: { nameId: string; audience: string }): string {
  const now = new Date();
  const iso = (offsetMs: number) => new Date(now.getTime() + offsetMs).toISOString();
  return `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_${randomUUID()}" Version="2.0" IssueInstant="${iso(0)}" Destination="${ACS_URL}"><saml:Issuer>${IDP_ENTITY}</saml:Issuer><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status><saml:Assertion ID="_${randomUUID()}" Version="2.0" IssueInstant="${iso(0)}"><saml:Issuer>${IDP_ENTITY}</saml:Issuer><saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress">${options.nameId}</saml:NameID><saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData NotOnOrAfter="${iso(300_000)}" Recipient="${ACS_URL}"/></saml:SubjectConfirmation></saml:Subject><saml:Conditions NotBefore="${iso(-60_000)}" NotOnOrAfter="${iso(300_000)}"><saml:AudienceRestriction><saml:Audience>${options.audience}</saml:Audience></saml:AudienceRestriction></saml:Conditions><saml:AuthnStatement AuthnInstant="${iso(0)}" SessionIndex="_s1"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:Password</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement><saml:AttributeStatement><saml:Attribute Name="role"><saml:AttributeValue>admin</saml:AttributeValue></saml:Attribute></saml:AttributeStatement></saml:Assertion></samlp:Response>`;
}

/** Signs the assertion the way an IdP does: enveloped signature placed after its Issuer. */
function signAssertion(xml: string, privateKey: string, cert: string): string {
  const sig = new SignedXml({
    privateKey,
    publicCert: cert,
    signatureAlgorithm: "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
    canonicalizationAlgorithm: "http://www.w3.org/2001/10/xml-exc-c14n#",
  });
  sig.addReference({
    xpath: "//*[local-name(.)='Assertion']",
    digestAlgorithm: "http://www.w3.org/2001/04/xmlenc#sha256",
    transforms: [
      "http://www.w3.org/2000/09/xmldsig#enveloped-signature",
      "http://www.w3.org/2001/10/xml-exc-c14n#",
    ],
  });
  sig.computeSignature(xml, {
    location: {
      reference: "//*[local-name(.)='Assertion']/*[local-name(.)='Issuer']",
      action: "after",
    },
  });
  return sig.getSignedXml();
}

test("SAML SP flow validates assertions signed by the IdP's key", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const idpKeys = await generate([{ name: "commonName", value: "idp.example.test" }], {
    keySize: 2048,
  });
  const otherKeys = await generate([{ name: "commonName", value: "evil.example.test" }], {
    keySize: 2048,
  });
  const { broker } = await startBrokerOnTestPostgres(t, testBrokerEnv({ SAML_ACS_URL: ACS_URL }));

  const provider = await broker.call("POST", "/providers", {
    name: "corp-saml",
    auth_type: "saml",
    saml_idp_entity_id: IDP_ENTITY,
    saml_idp_sso_url: "https://idp.example.test/sso",
    saml_idp_x509_cert: idpKeys.cert,
    saml_sp_entity_id: SP_ENTITY,
  });
  assert.equal(provider.status, 200, JSON.stringify(provider.body));

  const started = await broker.call("POST", "/saml/start", {
    provider_id: provider.body.id,
    workspace_id: "ws-saml",
    return_url: "http://localhost:3000/after-saml",
  });
  assert.equal(started.status, 200, JSON.stringify(started.body));
  const redirect = new URL(String(started.body.redirect_url));
  assert.equal(redirect.origin + redirect.pathname, "https://idp.example.test/sso");
  assert.ok(redirect.searchParams.get("SAMLRequest"));
  const relayState = String(started.body.relay_state);

  const post = (xml: string) =>
    fetch(`${broker.url}/saml/acs`, {
      method: "POST",
      headers: { "x-api-key": broker.apiKey, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        SAMLResponse: Buffer.from(xml).toString("base64"),
        RelayState: relayState,
      }),
    });

  const forged = await post(
    signAssertion(
      samlResponse({ nameId: "mallory@example.test", audience: SP_ENTITY }),
      otherKeys.private,
      otherKeys.cert,
    ),
  );
  assert.equal(forged.status, 400);
  await forged.body?.cancel();
  const unsigned = await post(samlResponse({ nameId: "alice@example.test", audience: SP_ENTITY }));
  assert.equal(unsigned.status, 400);
  await unsigned.body?.cancel();
  const wrongAudience = await post(
    signAssertion(
      samlResponse({ nameId: "alice@example.test", audience: "urn:other" }),
      idpKeys.private,
      idpKeys.cert,
    ),
  );
  assert.equal(wrongAudience.status, 400);
  await wrongAudience.body?.cancel();

  const accepted = await post(
    signAssertion(
      samlResponse({ nameId: "alice@example.test", audience: SP_ENTITY }),
      idpKeys.private,
      idpKeys.cert,
    ),
  );
  const body = (await accepted.json()) as {
    connection: Record<string, string>;
    return_url: string;
  };
  assert.equal(accepted.status, 200, JSON.stringify(body));
  assert.equal(body.connection.status, "active");
  assert.equal(body.connection.subject, "alice@example.test");
  assert.equal(body.return_url, "http://localhost:3000/after-saml");

  const token = await broker.call("GET", `/connections/${body.connection.id}/token`);
  assert.equal(token.body.name_id, "alice@example.test");
  assert.deepEqual(token.body.attributes, { role: "admin" });
  const failures = await broker.call("GET", "/audit?event_type=token.exchange_failed");
  assert.equal(failures.body.total, 3);
});
