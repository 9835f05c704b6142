// Address checks for tools that must load quickly (atriumctl through @atrium/broker/rules):
// this entry point loads node:net and nothing else of kit.
export { type Cidr, createCidrMatcher, parseCidrList } from "./server/cidr.js";
export { isLoopbackAddress, isPublicAddress } from "./server/public-address.js";
