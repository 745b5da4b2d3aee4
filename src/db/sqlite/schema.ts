import * as tables from '../schema/tables.js';
import { sqliteTableOf } from './sqlite-tables.js';

/**
 * The SQLite drizzle schema, built from the one description of the tables (src/db/schema/): what
 * `npm run db:generate` compares with drizzle/sqlite/. Every table there is exported here.
 */
export const conversations = sqliteTableOf(tables.conversations);
export const conversationItems = sqliteTableOf(tables.conversationItems);
export const runs = sqliteTableOf(tables.runs);
export const deliveries = sqliteTableOf(tables.deliveries);
export const approvals = sqliteTableOf(tables.approvals);
export const standingApprovals = sqliteTableOf(tables.standingApprovals);
export const approvalVotes = sqliteTableOf(tables.approvalVotes);
export const delegations = sqliteTableOf(tables.delegations);
export const approvalCards = sqliteTableOf(tables.approvalCards);
export const approvalLimitKeys = sqliteTableOf(tables.approvalLimitKeys);
export const approvalLimitUses = sqliteTableOf(tables.approvalLimitUses);
export const auditEvents = sqliteTableOf(tables.auditEvents);
export const auditCursors = sqliteTableOf(tables.auditCursors);
export const auditCheckpoints = sqliteTableOf(tables.auditCheckpoints);
export const processedEvents = sqliteTableOf(tables.processedEvents);
export const acceptedRequests = sqliteTableOf(tables.acceptedRequests);
export const queuedMessages = sqliteTableOf(tables.queuedMessages);
export const notes = sqliteTableOf(tables.notes);
export const homeViewers = sqliteTableOf(tables.homeViewers);
export const greetedUsers = sqliteTableOf(tables.greetedUsers);
export const consoleSessions = sqliteTableOf(tables.consoleSessions);
export const consoleLinks = sqliteTableOf(tables.consoleLinks);
export const slackInstallations = sqliteTableOf(tables.slackInstallations);
export const teamAdmins = sqliteTableOf(tables.teamAdmins);
export const approvalDays = sqliteTableOf(tables.approvalDays);
export const approvalWaitDays = sqliteTableOf(tables.approvalWaitDays);
export const runUsageDays = sqliteTableOf(tables.runUsageDays);
export const deadlineDays = sqliteTableOf(tables.deadlineDays);
