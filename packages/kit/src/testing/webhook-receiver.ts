import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedWebhook {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  receivedAt: number;
}

/** What the receiver does with the n-th request (0-based): answer a status, or never answer. */
export type ReceiverAnswer = (index: number, request: ReceivedWebhook) => number | "hang";

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  answer: ReceiverAnswer;
  close(): Promise<void>;
}

/** A subscriber on loopback that records every POST with its Standard Webhooks headers. */
export async function startWebhookReceiver(
  answer: ReceiverAnswer = () => 204,
): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const hanging: ServerResponse[] = [];
  const receiver: WebhookReceiver = { url: "", received, answer, close: async () => {} };
  const server = createServer((req: IncomingMessage, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      const hit: ReceivedWebhook = {
        id: String(req.headers["webhook-id"] ?? ""),
        timestamp: String(req.headers["webhook-timestamp"] ?? ""),
        signature: String(req.headers["webhook-signature"] ?? ""),
        body,
        receivedAt: Date.now(),
      };
      const status = receiver.answer(received.length, hit);
      received.push(hit);
      if (status === "hang") {
        hanging.push(res);
        return;
      }
      res.statusCode = status;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.close = async () => {
    for (const res of hanging) res.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return receiver;
}
