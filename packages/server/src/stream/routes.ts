/** The streams' HTTP faces: a plain GET explains that this is a WebSocket (426). */
import type { FastifyPluginAsync } from "fastify";
import { ErrorBody } from "../http/envelope";
import { AppError } from "../http/errors";
import { ACCOUNT_STREAM_PATH, STREAM_PATH } from "./server";

const DESCRIPTION = [
  "A WebSocket. Authenticate with the upgrade's `Authorization: Bearer <key>` header or, from a browser,",
  'with a first message `{"action":"auth","api_key":"…"}` within 5 s. Then send',
  '`{"action":"subscribe","market_ids":[…]}` / `{"action":"unsubscribe","market_ids":[…]}`;',
  'each is acknowledged with `{"type":"subscribed"|"unsubscribed","market_ids":[…],"rejected":[{"market_id","reason"}]}`,',
  "the current quote of each newly subscribed market follows at once, then",
  '`{"type":"price_update","market_id","price","best_bid","best_ask","volume_24h","timestamp","seq"}` on every change',
  '(`seq` counts this connection\'s price updates from 1). Errors are `{"type":"error","code","message"}`.',
  `The same connection also takes the account stream's actions (\`resume\`, \`subscribe\` with \`types\`; see ${ACCOUNT_STREAM_PATH}), for clients that want one connection.`,
  "A plain GET answers 426.",
].join(" ");

const ACCOUNT_DESCRIPTION = [
  "A WebSocket of the key's account events in its environment (orders, fills, positions, transfers), authenticated as the price stream is",
  "(`read` needed; counted in the plan's stream connections).",
  'Send `{"action":"resume","after":<seq or event id; 0 for the oldest kept>}` (acked with `{"type":"resumed","after":<seq>}`) to receive',
  'every event after the cursor, replayed from the store, then `{"type":"caught_up","replayed":n}`, then live, in order, none missed or repeated;',
  'or `{"action":"subscribe","types":[…]}` (`["*"]`: every type; acked with `{"type":"subscribed","types":[…]}`) to choose types and, first thing, to start live from now.',
  '`resume` also takes `types`. Each event: `{"type":"event","seq","id","event_type","timestamp","data"}` with the data a webhook delivery carries.',
  'A cursor older than EVENT_RETENTION_DAYS is answered `{"type":"error","code":"CURSOR_EXPIRED","details":{…}}`.',
  "A client that does not keep up is closed with 4009 after what it was sent: reconnect and resume after the last event received.",
  "A plain GET answers 426.",
].join(" ");

const STREAMS = [
  {
    path: STREAM_PATH,
    tag: "prices",
    summary: "The real-time price stream (WebSocket)",
    description: DESCRIPTION,
  },
  {
    path: ACCOUNT_STREAM_PATH,
    tag: "account",
    summary: "The account's events as a WebSocket, resumable from a cursor",
    description: ACCOUNT_DESCRIPTION,
  },
];

export const streamRoutes: FastifyPluginAsync = async (app) => {
  for (const { path, tag, summary, description } of STREAMS) {
    app.get(
      path,
      {
        config: { auth: "key", permission: "read" },
        schema: { tags: [tag], summary, description, response: { 426: ErrorBody } },
      },
      async () => {
        throw new AppError(
          "UPGRADE_REQUIRED",
          `Connect to ${path} with a WebSocket client (Upgrade: websocket)`,
        );
      },
    );
  }
};
