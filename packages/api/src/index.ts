// Code generated from proto/ by `make gen`; the generated files are never edited by hand.
// grpc.health and grpc.reflection come from the protos the grpc-node packages ship (buf.yaml); kit
// serves them on every gRPC port.

export * as brokerV1 from "./gen/broker/v1/broker_pb.js";
export * as gatewayV1 from "./gen/gateway/v1/gateway_pb.js";
export { http } from "./gen/google/api/annotations_pb.js";
export * from "./gen/google/api/http_pb.js";
export { type ErrorInfo, ErrorInfoSchema } from "./gen/google/rpc/error_details_pb.js";
export * as grpcReflectionV1 from "./gen/grpc/reflection/v1/reflection_pb.js";
export * as grpcReflectionV1alpha from "./gen/grpc/reflection/v1alpha/reflection_pb.js";
export * as grpcHealthV1 from "./gen/health/v1/health_pb.js";
export * as memoryV1 from "./gen/memory/v1/memory_pb.js";
