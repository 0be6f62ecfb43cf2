/** The price stream's HTTP face: a plain GET explains that this is a WebSocket (426). */
import type { FastifyPluginAsync } from "fastify";
import { ErrorBody } from "../http/envelope";
import { AppError } from "../http/errors";
import { STREAM_PATH } from "./server";

const DESCRIPTION = [
  "A WebSocket. Authenticate with the upgrade's `Authorization: Bearer <key>` header or, from a browser,",
  'with a first message `{"action":"auth","api_key":"…"}` within 5 s. Then send',
  '`{"action":"subscribe","market_ids":[…]}` / `{"action":"unsubscribe","market_ids":[…]}`;',
  'each is acknowledged with `{"type":"subscribed"|"unsubscribed","market_ids":[…],"rejected":[{"market_id","reason"}]}`,',
  "the current quote of each newly subscribed market follows at once, then",
  '`{"type":"price_update","market_id","price","best_bid","best_ask","volume_24h","timestamp","seq"}` on every change',
  '(`seq` counts this connection\'s price updates from 1). Errors are `{"type":"error","code","message"}`.',
  "A plain GET answers 426.",
].join(" ");

export const streamRoutes: FastifyPluginAsync = async (app) => {
  app.get(
    STREAM_PATH,
    {
      config: { auth: "key", permission: "read" },
      schema: {
        tags: ["prices"],
        summary: "The real-time price stream (WebSocket)",
        description: DESCRIPTION,
        response: { 426: ErrorBody },
      },
    },
    async () => {
      throw new AppError(
        "UPGRADE_REQUIRED",
        `Connect to ${STREAM_PATH} with a WebSocket client (Upgrade: websocket)`,
      );
    },
  );
};
