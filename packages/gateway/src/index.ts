export { type GatewayConfig, loadGatewayConfig } from "./config/gateway-config.js";
export { gatewayOperatorOpenApiDocument } from "./service/operator-description.js";
export {
  type GatewayService,
  type StartGatewayServiceOptions,
  startGatewayService,
} from "./service/start-gateway-service.js";
