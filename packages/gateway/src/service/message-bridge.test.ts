import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { brokerV1, gatewayV1 } from "@atrium/api";
import {
  create,
  createFileRegistry,
  type DescMessage,
  isFieldSet,
  type MessageShape,
  toJson,
} from "@bufbuild/protobuf";
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorProtoSchema,
  timestampFromDate,
} from "@bufbuild/protobuf/wkt";
import { bridgeOf } from "./message-bridge.js";

/** The contract is the JSON: a bridged message must read exactly as the one it came from. */
function assertSameJson<From extends DescMessage, To extends DescMessage>(
  from: From,
  message: MessageShape<From>,
  to: To,
) {
  const bridged = bridgeOf(from, to)(message);
  assert.equal(bridged.$typeName, to.typeName);
  assert.deepEqual(
    toJson(to, bridged, { useProtoFieldName: true }),
    toJson(from, message, { useProtoFieldName: true }),
  );
}

describe("message bridge", () => {
  it("copies every token field, the strategy and the expiry into the public token", () => {
    const token = create(brokerV1.TokenResponseSchema, {
      connectionId: "c-1",
      authType: "oauth2",
      status: "active",
      healthStatus: "healthy",
      accessToken: "access",
      tokenType: "Bearer",
      expiresAt: timestampFromDate(new Date("2030-01-02T03:04:05Z")),
      scopes: ["read", "write"],
      idToken: "id",
      apiKey: "key",
      username: "user",
      password: "pass",
      nameId: "name",
      attributes: { team: "a" },
      strategy: { type: "api_key", headerName: "X-Key", headerPrefix: "Token " },
    });
    assertSameJson(brokerV1.TokenResponseSchema, token, gatewayV1.TokenSchema);
    const bridged = bridgeOf(brokerV1.TokenResponseSchema, gatewayV1.TokenSchema)(token);
    assert.equal(bridged.strategy?.$typeName, "gateway.v1.CredentialStrategy");
  });

  it("copies lists of messages and maps, and leaves the source's lists its own", () => {
    const deliveries = create(brokerV1.ListWebhookDeliveriesResponseSchema, {
      deliveries: [
        {
          id: "d-1",
          status: "failed",
          attempts: [{ attempt: 1, statusCode: 500, error: "boom" }, { attempt: 2 }],
        },
      ],
    });
    assertSameJson(
      brokerV1.ListWebhookDeliveriesResponseSchema,
      deliveries,
      gatewayV1.ListWebhookDeliveriesResponseSchema,
    );
    const agent = create(brokerV1.AgentSchema, { id: "a-1", metadata: { k: "v" } });
    const bridged = bridgeOf(brokerV1.AgentSchema, gatewayV1.AgentSchema)(agent);
    bridged.metadata.k = "changed";
    assert.equal(agent.metadata.k, "v");
  });

  it("keeps presence: a field absent from the request is absent from the broker's", () => {
    const input = create(gatewayV1.WebhookInputSchema, { name: "hooks", enabled: false });
    const bridged = bridgeOf(gatewayV1.WebhookInputSchema, brokerV1.WebhookInputSchema)(input);
    assert.equal(bridged.name, "hooks");
    assert.equal(bridged.enabled, false);
    assert.equal(isFieldSet(bridged, brokerV1.WebhookInputSchema.field.enabled), true);
    assert.equal(isFieldSet(bridged, brokerV1.WebhookInputSchema.field.url), false);
  });

  it("leaves out the broker's fields the public contract does not have", () => {
    const request = create(brokerV1.StartOAuthRequestSchema, {
      providerId: "p",
      redirectUri: "https://broker.example/cb",
    });
    const bridged = bridgeOf(
      brokerV1.StartOAuthRequestSchema,
      gatewayV1.StartConnectionRequestSchema,
    )(request);
    assert.equal(bridged.providerId, "p");
    assert.equal("redirectUri" in bridged, false);
  });

  it("refuses, when built, a target field the source does not have", () => {
    // The gateway's refresh request names the connection connection_id, the broker's id.
    assert.throws(
      () =>
        bridgeOf(gatewayV1.RefreshConnectionRequestSchema, brokerV1.RefreshConnectionRequestSchema),
      /gateway\.v1\.RefreshConnectionRequest has no field id/,
    );
  });

  it("refuses, when built, a field of the same name and another type", () => {
    const field = (type: FieldDescriptorProto_Type) => ({
      name: "count",
      jsonName: "count",
      number: 1,
      label: FieldDescriptorProto_Label.OPTIONAL,
      type,
    });
    const registry = createFileRegistry(
      create(FileDescriptorProtoSchema, {
        name: "bridge-test.proto",
        package: "bridge.test",
        syntax: "proto3",
        messageType: [
          { name: "Text", field: [field(FieldDescriptorProto_Type.STRING)] },
          { name: "Number", field: [field(FieldDescriptorProto_Type.INT32)] },
        ],
      }),
      () => undefined,
    );
    const text = registry.getMessage("bridge.test.Text");
    const number = registry.getMessage("bridge.test.Number");
    assert.ok(text && number);
    assert.throws(() => bridgeOf(text, number), /bridge\.test\.Text\.count and .* differ in type/);
  });
});
