import { type brokerV1, gatewayV1 } from "@atrium/api";
import { create } from "@bufbuild/protobuf";

/**
 * The public token from the broker's, field by field: the hottest gateway call skips the proto
 * JSON that `bridge` goes through, and the strategy comes with the token.
 */
export function tokenFromBroker(token: brokerV1.TokenResponse): gatewayV1.Token {
  const strategy = token.strategy;
  return create(gatewayV1.TokenSchema, {
    connectionId: token.connectionId,
    authType: token.authType,
    status: token.status,
    healthStatus: token.healthStatus,
    accessToken: token.accessToken,
    tokenType: token.tokenType,
    expiresAt: token.expiresAt,
    scopes: token.scopes,
    idToken: token.idToken,
    apiKey: token.apiKey,
    username: token.username,
    password: token.password,
    nameId: token.nameId,
    attributes: token.attributes,
    strategy: strategy && {
      type: strategy.type,
      headerName: strategy.headerName,
      headerPrefix: strategy.headerPrefix,
      paramName: strategy.paramName,
      region: strategy.region,
      service: strategy.service,
    },
  });
}
