/** Sandbox money over HTTP: deposit, withdraw, reset (sandbox keys only). */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { tradingOwner } from "../http/auth";
import { Envelope, ok } from "../http/envelope";
import { validationError } from "../http/errors";
import { balanceView } from "../portfolio/routes";
import { BalanceSchema } from "../portfolio/schemas";
import type { PortfolioService } from "../portfolio/service";
import { parseMicros } from "../venues/decimal";
import type { SandboxAccounts } from "./service";

const TransferBody = Type.Object(
  { amount: Type.Number({ description: "USDC, > 0, at most 6 decimals" }) },
  { additionalProperties: false },
);
const TransferResult = Type.Object({
  transfer_id: Type.String({ description: "trf_…" }),
  amount: Type.Number(),
  balance: BalanceSchema,
});

function amountOf(body: { amount: number }): number {
  const amount = parseMicros(body.amount);
  if (amount === undefined || amount <= 0)
    throw validationError({ "body.amount": "must be a positive amount with at most 6 decimals" });
  return amount;
}

export const sandboxRoutes: FastifyPluginAsyncTypebox<{
  sandbox: SandboxAccounts;
  portfolio: PortfolioService;
}> = async (app, { sandbox, portfolio }) => {
  for (const kind of ["deposit", "withdraw"] as const) {
    app.post(
      `/v1/sandbox/${kind}`,
      {
        config: { auth: "key", permission: "trade" },
        schema: {
          tags: ["sandbox"],
          summary:
            kind === "deposit"
              ? "Add fake USDC to the sandbox balance (records deposit.completed)"
              : "Take fake USDC out of the available sandbox balance (records withdrawal.completed)",
          body: TransferBody,
          response: { 200: Envelope(TransferResult) },
        },
      },
      async (request) => {
        const owner = tradingOwner(request);
        const amount = amountOf(request.body);
        const { transferId } =
          kind === "deposit" ? await sandbox.deposit(owner, amount) : await sandbox.withdraw(owner, amount);
        return ok({
          transfer_id: transferId,
          amount: request.body.amount,
          balance: balanceView(await portfolio.balance(owner)),
        });
      },
    );
  }

  app.post(
    "/v1/sandbox/reset",
    {
      config: { auth: "key", permission: "trade" },
      schema: {
        tags: ["sandbox"],
        summary: "Start the sandbox account over: orders, positions and history deleted, 10,000 USDC",
        response: { 200: Envelope(BalanceSchema) },
      },
    },
    async (request) => {
      const owner = tradingOwner(request);
      await sandbox.reset(owner);
      return ok(balanceView(await portfolio.balance(owner)));
    },
  );
};
