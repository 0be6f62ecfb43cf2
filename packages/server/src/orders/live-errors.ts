/**
 * What a failed venue call on the live request path (live.ts) means for the API caller: the
 * venue's refusal is a 422 with its reason, anything else a 503 (with the venue's Retry-After when
 * it sent one), and credentials crossbook cannot read ask to be linked again. Pure, so every live
 * route answers a venue's failure the same way.
 */
import { AppError } from "../http/errors";
import type { OrderRow } from "../ledger/orders-repo";
import { isVenueError, type VenueError } from "../venues/errors";
import type { VenueId } from "../venues/model";

/** The venue said no: 422 with its reason (credentials it refused included; never a 5xx). */
export function rejection(error: VenueError, orderId?: string): AppError {
  const ids = orderId ? { order_id: orderId } : {};
  if (error.kind === "auth_failed")
    return new AppError(
      "VENUE_REJECTED",
      `${error.venue} rejected the linked credentials; check them at ${error.venue} and link them again`,
      { venue: error.venue, reason: "venue rejected the linked credentials", ...ids },
    );
  const reason = error.details.venueMessage ?? error.message;
  return new AppError("VENUE_REJECTED", `${error.venue} rejected the order: ${reason}`, {
    venue: error.venue,
    reason,
    ...(error.details.venueCode ? { venue_code: error.details.venueCode } : {}),
    ...ids,
  });
}

export function unavailable(error: VenueError, details: Record<string, unknown> = {}): AppError {
  const appError = new AppError(
    "VENUE_UNAVAILABLE",
    `${error.venue} could not be reached (${error.kind}); try again shortly`,
    {
      venue: error.venue,
      reason: error.kind,
      ...details,
    },
  );
  if (error.retryAfterMs !== undefined)
    appError.withHeaders({ "Retry-After": String(Math.ceil(error.retryAfterMs / 1000)) });
  return appError;
}

/**
 * A placement the venue did not answer (down, timeout, garbage): it may or may not hold the order,
 * which stays `pending` until the poller finds it there or gives it up.
 */
export function outcomeUnknown(venue: VenueId, orderId: string, error: unknown): AppError {
  const appError = new AppError(
    "VENUE_UNAVAILABLE",
    `${venue} did not confirm the order; it stays pending until crossbook finds it at ${venue} or, ` +
      "failing that, cancels it (GET the order to follow it)",
    {
      venue,
      order_id: orderId,
      status: "pending",
      reason: isVenueError(error) ? error.kind : "unknown",
    },
  );
  const retryAfter = isVenueError(error) ? error.retryAfterMs : undefined;
  if (retryAfter !== undefined) appError.withHeaders({ "Retry-After": String(Math.ceil(retryAfter / 1000)) });
  return appError;
}

/** Any failed venue call outside placement: a refusal is 422, the rest 503. */
export function mapVenueError(error: unknown, orderId?: string): AppError {
  if (error instanceof AppError) return error;
  if (!isVenueError(error)) {
    return new AppError("VENUE_UNAVAILABLE", "The venue's answer could not be used; try again shortly", {
      ...(orderId ? { order_id: orderId } : {}),
      reason: "unknown",
    });
  }
  if (error.kind === "rejected" || error.kind === "not_found" || error.kind === "auth_failed")
    return rejection(error, orderId);
  return unavailable(error, orderId ? { order_id: orderId } : {});
}

export function unreadableCredentials(venue: string): AppError {
  return new AppError(
    "VENUE_NOT_LINKED",
    `The linked ${venue} credentials cannot be read on this server any more; link ${venue} again`,
    { venue, reason: "unreadable" },
  );
}

export function notCancellable(order: OrderRow): AppError {
  return new AppError("ORDER_NOT_CANCELLABLE", `Order ${order.id} is ${order.status}`, {
    order_id: order.id,
    status: order.status,
  });
}
