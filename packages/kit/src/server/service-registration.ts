import type { DescService } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";

/** One gRPC service and its implementation, as both the server and its unary fast path take it. */
export interface ServiceRegistration {
  service: DescService;
  implementation: Partial<ServiceImpl<DescService>>;
}
