/**
 * The migration list, in order. Each migration is written once with Kysely's schema builder and runs
 * on both stores; where the two differ (auto-increment, PostgreSQL's transaction ids) it asks which
 * dialect it is running on. Never edit a migration that has shipped: add a new one.
 */
import type { Migration } from "kysely";
import type { Dialect } from "../store";
import { foundation } from "./001_foundation";
import { catalog } from "./002_catalog";
import { candles } from "./003_candles";
import { alerts } from "./004_alerts";
import { trading } from "./005_trading";
import { venueCredentials } from "./006_venue_credentials";
import { webhooks } from "./007_webhooks";
import { webhookLeases } from "./008_webhook_leases";
import { matches } from "./009_matches";
import { hotPathIndexes } from "./010_hot_path_indexes";
import { dropDeliveryLeases } from "./011_drop_delivery_leases";
import { writePathIndexes } from "./012_write_path_indexes";
import { operatorsAndSessions } from "./013_operators_and_sessions";
import { feeSchedules } from "./014_fee_schedules";
import { venuePositions } from "./015_venue_positions";
import { orderAmountNote } from "./016_order_amount_note";
import { historyCoverage } from "./017_history_coverage";
import { matchCaveats } from "./018_match_caveats";
import { keyUsage } from "./019_key_usage";
import { webhookAttemptDetail } from "./020_webhook_attempt_detail";
import { accountEvents } from "./021_account_events";
import { jobLeases } from "./022_job_leases";
import { fillsByAccount } from "./023_fills_by_account";
import { revokedKeysIndex } from "./024_revoked_keys_index";

export function migrations(dialect: Dialect): Record<string, Migration> {
  return {
    "001_foundation": foundation(dialect),
    "002_catalog": catalog(dialect),
    "003_candles": candles(dialect),
    "004_alerts": alerts(dialect),
    "005_trading": trading(dialect),
    "006_venue_credentials": venueCredentials(dialect),
    "007_webhooks": webhooks(dialect),
    "008_webhook_leases": webhookLeases(dialect),
    "009_matches": matches(dialect),
    "010_hot_path_indexes": hotPathIndexes(dialect),
    "011_drop_delivery_leases": dropDeliveryLeases(dialect),
    "012_write_path_indexes": writePathIndexes(dialect),
    "013_operators_and_sessions": operatorsAndSessions(dialect),
    "014_fee_schedules": feeSchedules(dialect),
    "015_venue_positions": venuePositions(dialect),
    "016_order_amount_note": orderAmountNote(dialect),
    "017_history_coverage": historyCoverage(dialect),
    "018_match_caveats": matchCaveats(dialect),
    "019_key_usage": keyUsage(dialect),
    "020_webhook_attempt_detail": webhookAttemptDetail(dialect),
    "021_account_events": accountEvents(dialect),
    "022_job_leases": jobLeases(dialect),
    "023_fills_by_account": fillsByAccount(dialect),
    "024_revoked_keys_index": revokedKeysIndex(dialect),
  };
}
