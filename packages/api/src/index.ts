// Code generated from proto/ by `make gen`; the generated files are never edited by hand.

export * as brokerV1 from "./gen/broker/v1/broker_pb.js";
export * as gatewayV1 from "./gen/gateway/v1/gateway_pb.js";
export { http } from "./gen/google/api/annotations_pb.js";
export * from "./gen/google/api/http_pb.js";
export * as memoryV1 from "./gen/memory/v1/memory_pb.js";
