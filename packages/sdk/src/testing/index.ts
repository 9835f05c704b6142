export { EchoService, type Ping, PingSchema } from "./echo-service.js";
export {
  type LoopbackServer,
  type RecordedRequest,
  type ScriptedHandler,
  sendJson,
  startLoopbackServer,
} from "./loopback-server.js";
